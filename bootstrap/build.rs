//! Links the PMIx client library (the pmi spawner's bootstrap) and checks
//! that the hand-written declarations in `src/pmix/ffi.rs` match the installed
//! `pmix.h`.
//!
//! The library is found with `pkg-config pmix` (Debian's libpmix-dev keeps
//! it under /usr/lib/<triplet>/pmix2). A missing library is a build error
//! naming the package to install.

use std::path::PathBuf;
use std::process::Command;

const HELP: &str = "the PMIx client library (libpmix) was not found: install libpmix-dev \
                    (apt-get install libpmix-dev; scripts/setup.sh does it), or set \
                    PKG_CONFIG_PATH so that `pkg-config pmix` finds another PMIx 4 installation";

fn pkg_config(args: &[&str]) -> Option<String> {
    let out = Command::new("pkg-config")
        .args(args)
        .arg("pmix")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/pmix_layout.c");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let (Some(libs), Some(cflags)) = (
        pkg_config(&["--libs-only-L"]),
        pkg_config(&["--cflags-only-I"]),
    ) else {
        println!("cargo:warning={HELP}");
        eprintln!("error: {HELP}");
        std::process::exit(1);
    };
    for dir in libs.split_whitespace().filter_map(|w| w.strip_prefix("-L")) {
        println!("cargo:rustc-link-search=native={dir}");
    }
    println!("cargo:rustc-link-lib=dylib=pmix");

    // Layout check: compile src/pmix_layout.c (static assertions only)
    // against the installed header. Skipped, with a warning, when no C
    // compiler is available.
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into()));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let mut cmd = Command::new(&cc);
    cmd.args(cflags.split_whitespace())
        .args(["-c", "src/pmix_layout.c", "-o"])
        .arg(out.join("pmix_layout.o"));
    match cmd.output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => {
            eprintln!("{}", String::from_utf8_lossy(&o.stderr));
            eprintln!(
                "error: the installed pmix.h does not match bootstrap/src/pmix/ffi.rs \
                 (see the static assertions in bootstrap/src/pmix_layout.c): \
                 this PMIx version is not supported; PMIx 4.x is"
            );
            std::process::exit(1);
        }
        Err(e) => println!("cargo:warning=PMIx layout check skipped: cannot run {cc}: {e}"),
    }
}
