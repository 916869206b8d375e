//! `gex-providers` (what `gasnetrun-ofi --list-providers` runs) reports a
//! stdout it cannot write instead of panicking, and takes a reader that
//! stopped reading (`| head`) as success.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `gex-providers` with `stdout`; its exit code and stderr. Killed
/// after 60 s.
fn listing(stdout: Stdio) -> (Option<i32>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gex-providers"))
        .stdout(stdout)
        .stderr(Stdio::piped())
        .spawn()
        .expect("start gex-providers");
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().expect("wait for gex-providers").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("gex-providers did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().expect("gex-providers' stderr");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_full_stdout_is_an_error_and_a_closed_pipe_is_not() {
    let full = std::fs::File::create("/dev/full").expect("open /dev/full");
    let (code, err) = listing(full.into());
    assert_eq!(code, Some(1), "stdout on /dev/full: {err}");
    assert!(
        err.contains("gex-providers: cannot write the listing to stdout:")
            && !err.contains("panicked"),
        "{err}"
    );
    let (r, w) = std::io::pipe().expect("a pipe");
    drop(r);
    let (code, err) = listing(w.into());
    assert_eq!(code, Some(0), "stdout a closed pipe: {err}");
    assert!(!err.contains("panicked"), "{err}");
}
