//! Conformance programs (in `src/bin`) and helpers for the tests that run
//! them (in `tests/`).

use std::process::{Command, Output};
use std::time::Duration;

/// Run `cmd` with a deadline; on timeout the whole process group is killed
/// and the test fails. Returns the output.
pub fn run_with_deadline(cmd: &mut Command, deadline: Duration) -> Output {
    use std::os::unix::process::CommandExt;
    cmd.process_group(0)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let child = cmd.spawn().expect("spawn test program");
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(deadline) {
        Ok(out) => out.expect("wait for test program"),
        Err(_) => {
            // SAFETY: kill(2) on the process group we created; no memory is
            // involved.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
            panic!("{cmd:?} did not finish within {deadline:?}; its process group was killed");
        }
    }
}

/// A binary of another workspace crate (e.g. `gasnetrun-ofi`), found next to
/// this package's binaries in the target directory. `cargo test
/// --workspace` builds it; a test that needs it fails with this message when
/// it is missing.
pub fn workspace_bin(name: &str, sibling: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(sibling)
        .parent()
        .expect("a binary path has a directory")
        .to_path_buf();
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} not found: build it first with `cargo build -p {name}` (cargo test --workspace does)",
        path.display()
    );
    path
}
