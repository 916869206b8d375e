//! Install the C API as a user would (scripts/install.sh into a prefix),
//! build the C and C++ programs of `capi/tests/c` with the pkg-config
//! command of docs/c-api.md, and run them under the installed
//! gasnetrun-ofi.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;
use tests::{job_command, run_with_deadline, JobResult};

/// The cargo profile directory this test runs from (target/debug, or
/// target/libfabric-2/debug).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    exe.parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>")
        .to_path_buf()
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Where the prefixes and programs go.
pub fn out_dir() -> PathBuf {
    profile_dir().join("capi-tests")
}

fn run(cmd: &mut Command, what: &str) -> String {
    let out = run_with_deadline(cmd, Duration::from_secs(300));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "{what} failed ({:?}):\n{text}",
        out.status
    );
    text
}

/// Build the C library and the launcher into this test's target directory:
/// `cargo test` builds the crate only as the Rust library its tests link,
/// not as the `.a` and `.so` a C program links.
fn build_library() {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = profile_dir();
        let target = dir.parent().expect("target/<profile>");
        // Two builds: `--bin` would narrow the first to that one binary
        // (no libraries, no launcher).
        for (args, what) in [
            (
                &["build", "-p", "gasnet-ofi", "-p", "gasnetrun-ofi"][..],
                "cargo build -p gasnet-ofi -p gasnetrun-ofi",
            ),
            (
                &["build", "-p", "conduit", "--bin", "gex-providers"][..],
                "cargo build -p conduit --bin gex-providers",
            ),
        ] {
            let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
            cmd.current_dir(repo())
                .args(args)
                .env("CARGO_TARGET_DIR", target);
            if dir.file_name().is_some_and(|n| n == "release") {
                cmd.arg("--release");
            }
            run(&mut cmd, what);
        }
    });
}

/// `scripts/install.sh --from <profile dir> --prefix <prefix> --kind <kind>`.
fn install(prefix: &Path, kind: &str) {
    build_library();
    let dir = profile_dir();
    for f in [
        "libgasnet_ofi_seq.so",
        "libgasnet_ofi_seq.a",
        "gasnetrun-ofi",
        "gex-providers",
    ] {
        assert!(
            dir.join(f).exists(),
            "{} is missing after `cargo build -p gasnet-ofi -p gasnetrun-ofi` and `cargo build -p conduit --bin gex-providers`",
            dir.join(f).display()
        );
    }
    let _ = std::fs::remove_dir_all(prefix);
    run(
        Command::new("bash")
            .arg(repo().join("scripts/install.sh"))
            .arg("--from")
            .arg(&dir)
            .arg("--prefix")
            .arg(prefix)
            .arg("--kind")
            .arg(kind),
        "scripts/install.sh",
    );
}

/// `pkg-config <args> gasnet-ofi-seq` against `prefix`, split into words.
pub fn pkg_config(prefix: &Path, arg: &str) -> Vec<String> {
    let out = Command::new("pkg-config")
        .arg(arg)
        .arg("gasnet-ofi-seq")
        .env("PKG_CONFIG_PATH", prefix.join("lib/pkgconfig"))
        .output()
        .expect(
            "pkg-config not found: install it (apt-get install pkg-config; scripts/setup.sh does)",
        );
    assert!(
        out.status.success(),
        "pkg-config {arg} gasnet-ofi-seq: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Compile `source` (C, or C++ for .cpp) against `prefix` into `exe`:
/// `cc $(pkg-config --cflags gasnet-ofi-seq) prog.c $(pkg-config --libs gasnet-ofi-seq)`.
pub fn compile(prefix: &Path, source: &Path, exe: &Path, extra: &[&str]) -> String {
    let cxx = source.extension().is_some_and(|e| e == "cpp");
    let (compiler, std) = if cxx {
        ("c++", "-std=c++17")
    } else {
        ("cc", "-std=c99")
    };
    let mut cmd = Command::new(compiler);
    cmd.args(["-Wall", "-Wextra", "-Werror", std])
        .args(extra)
        .args(pkg_config(prefix, "--cflags"))
        .arg(source)
        .args(pkg_config(prefix, "--libs"))
        .arg("-o")
        .arg(exe);
    run(&mut cmd, &format!("{compiler} {}", source.display()))
}

/// The installed prefixes: `shared` (both libraries; links the shared
/// one) and `static` (only the archive, so the same command links it).
pub struct Setup {
    /// Prefix with both libraries.
    pub shared: PathBuf,
    /// Prefix with only libgasnet-ofi-seq.a.
    pub static_: PathBuf,
}

/// Install both prefixes once per test binary.
pub fn setup() -> &'static Setup {
    static S: OnceLock<Setup> = OnceLock::new();
    S.get_or_init(|| {
        let out = out_dir();
        std::fs::create_dir_all(&out).unwrap();
        let s = Setup {
            shared: out.join("prefix-shared"),
            static_: out.join("prefix-static"),
        };
        install(&s.shared, "both");
        install(&s.static_, "static");
        s
    })
}

/// A test program's source.
pub fn source(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/c")
        .join(name)
}

/// Build program `name` (a file in tests/c) against `prefix`; its path.
pub fn build(prefix: &Path, name: &str) -> PathBuf {
    let stem = Path::new(name)
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let kind = prefix.file_name().unwrap().to_string_lossy().into_owned();
    let exe = out_dir().join(format!("{stem}-{kind}"));
    compile(prefix, &source(name), &exe, &[]);
    exe
}

/// Run `exe args` with `n` ranks over `provider` through the installed
/// launcher of `prefix`, with a deadline (the shared-memory path off, as
/// [`job_command`] sets it).
pub fn job(prefix: &Path, exe: &Path, n: usize, args: &[&str], provider: &str) -> JobResult {
    job_with(prefix, exe, n, args, provider, &[])
}

/// [`job`] with further variables.
pub fn job_with(
    prefix: &Path,
    exe: &Path,
    n: usize,
    args: &[&str],
    provider: &str,
    vars: &[(&str, &str)],
) -> JobResult {
    let launcher = prefix.join("bin/gasnetrun-ofi");
    let device = if provider == "shm" { "shm" } else { "lo" };
    let mut cmd = job_command(&launcher, n, exe, args, provider, device);
    cmd.envs(vars.iter().copied());
    let out = run_with_deadline(&mut cmd, Duration::from_secs(180));
    let r = JobResult {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    tests::assert_no_survivors(&exe.to_string_lossy());
    r
}
