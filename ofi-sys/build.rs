//! Finds the system libfabric with pkg-config, generates Rust bindings for its
//! headers with bindgen, and compiles a C shim that gives every `static inline`
//! libfabric call (`fi_send`, `fi_cq_read`, `fi_mr_reg`, ...) a real symbol.

use std::env;
use std::path::PathBuf;

/// Oldest libfabric the conduit supports.
const MIN_LIBFABRIC: &str = "1.15";

fn main() {
    println!("cargo:rerun-if-changed=wrapper.h");
    println!("cargo:rerun-if-changed=build.rs");

    let lib = match pkg_config::Config::new()
        .atleast_version(MIN_LIBFABRIC)
        .probe("libfabric")
    {
        Ok(lib) => lib,
        Err(e) => {
            eprintln!(
                "\nerror: ofi-sys needs libfabric >= {MIN_LIBFABRIC} and its development files, \
                 found through pkg-config.\n\
                 On Debian/Ubuntu install them with:\n    apt-get install libfabric-dev libfabric-bin pkg-config\n\
                 For a libfabric in a non-standard prefix set PKG_CONFIG_PATH=<prefix>/lib/pkgconfig.\n\
                 pkg-config said: {e}\n"
            );
            std::process::exit(1);
        }
    };
    println!("cargo:version={}", lib.version);
    // libfabric 2.x renamed or dropped a few 1.x names (the domain's
    // `data_progress` is a union with `progress`; FI_RESTRICTED_COMP is
    // 0): the crate's portability helpers pick the spelling by this cfg.
    println!("cargo::rustc-check-cfg=cfg(libfabric2)");
    let major: u32 = lib
        .version
        .split('.')
        .next()
        .and_then(|m| m.parse().ok())
        .unwrap_or(1);
    if major >= 2 {
        println!("cargo:rustc-cfg=libfabric2");
    }
    // The bindings change with the library found, so pkg-config's search
    // path is an input of this build.
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");

    let out = PathBuf::from(env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let shim = out.join("ofi_shim.c");

    let mut builder = bindgen::Builder::default()
        .header("wrapper.h")
        .allowlist_function("fi_.*")
        .allowlist_type("fi_.*|fid.*")
        .allowlist_var("FI_.*")
        .wrap_static_fns(true)
        .wrap_static_fns_path(&shim)
        .derive_default(true)
        .layout_tests(false)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()));
    for inc in &lib.include_paths {
        builder = builder.clang_arg(format!("-I{}", inc.display()));
    }
    let bindings = match builder.generate() {
        Ok(b) => b,
        Err(e) => {
            eprintln!(
                "\nerror: bindgen could not parse the libfabric headers ({e}).\n\
                 bindgen needs libclang: apt-get install libclang-dev\n"
            );
            std::process::exit(1);
        }
    };
    bindings
        .write_to_file(out.join("bindings.rs"))
        .expect("write bindings.rs into OUT_DIR");

    // The generated shim includes the header by a path relative to the crate.
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let mut cc = cc::Build::new();
    cc.file(&shim)
        .include(&manifest)
        .flag_if_supported("-Wno-deprecated-declarations")
        .opt_level(2);
    for inc in &lib.include_paths {
        cc.include(inc);
    }
    // The shim's first line includes "wrapper.h"; make that resolvable.
    cc.compile("ofi_shim");
}
