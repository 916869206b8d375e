//! What a job leaves in `/dev/shm`: no segment file and no shm endpoint
//! object after a normal run, an error exit, a kill of one rank or a kill
//! of the launcher; the attach-hang job those kills are aimed at.

use super::{run, RMA};
use std::time::Duration;
use tests::{serial, shm_objects, shm_objects_added};

fn segment_files() -> Vec<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("gex-seg-"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn no_segment_file_is_left_after_a_normal_run_or_a_kill() {
    let _g = serial();
    let before = segment_files();
    let objects = shm_objects();
    let r = run(2, &["attach", "1048576"], "shm", &[], 60);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(segment_files(), before, "a normal run left segment files");
    // The ranks end in the collective exit (_exit, endpoints not closed):
    // the shm provider's objects must still be removed.
    assert_eq!(
        shm_objects_added(&objects),
        Vec::<String>::new(),
        "a normal run left shm endpoint objects"
    );
    let r = run(2, &["no-such-mode"], "shm", &[], 60);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert_eq!(
        shm_objects_added(&objects),
        Vec::<String>::new(),
        "ranks that ended with an error exit left shm endpoint objects"
    );
    let r = run(2, &["std-exit"], "shm", &[], 60);
    assert_eq!(r.code, Some(3), "{}", r.stderr);
    assert_eq!(
        shm_objects_added(&objects),
        Vec::<String>::new(),
        "ranks that ended with std::process::exit left shm endpoint objects"
    );

    // A job whose ranks hold their segments; kill -9 one rank mid-job.
    let mut child = start_attach_hang();
    let victim = wait_attached()[1];
    // While the ranks run, their segment files are already unlinked.
    assert_eq!(
        segment_files(),
        before,
        "segment files exist while the job runs"
    );
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(victim),
        nix::sys::signal::Signal::SIGKILL,
    );
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert_ne!(status.code(), Some(0));
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the job did not end after one rank was killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    tests::assert_no_survivors(RMA);
    assert_eq!(segment_files(), before, "a killed job left segment files");
    // Nothing runs in a rank killed with SIGKILL: the launcher removed its
    // shm provider's objects when it ended (before reaping it).
    let left: Vec<String> = shm_objects_added(&objects);
    for o in &left {
        let _ = std::fs::remove_file(format!("/dev/shm/{o}"));
    }
    assert!(
        left.is_empty(),
        "shm endpoint objects left after rank {victim} was killed with SIGKILL: {left:?}"
    );

    // kill -9 of the launcher: its ranks die with it (parent-death
    // signal), and its janitor removes what their provider left.
    let mut child = start_attach_hang();
    let (_, launcher_pid) = (wait_attached(), child.id() as i32);
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(launcher_pid),
        nix::sys::signal::Signal::SIGKILL,
    );
    let _ = child.wait();
    tests::assert_no_survivors(RMA);
    let end = std::time::Instant::now() + Duration::from_secs(15);
    let left = loop {
        let left: Vec<String> = shm_objects_added(&objects);
        if left.is_empty() || std::time::Instant::now() > end {
            break left;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    for o in &left {
        let _ = std::fs::remove_file(format!("/dev/shm/{o}"));
    }
    assert!(
        left.is_empty(),
        "shm endpoint objects left 15 s after the launcher was killed: {left:?}"
    );
    assert_eq!(
        segment_files(),
        before,
        "a killed launcher left segment files"
    );
}

/// A 2-rank job on shm whose ranks attach a segment and wait.
fn start_attach_hang() -> std::process::Child {
    let launcher = tests::workspace_bin("gasnetrun-ofi", RMA);
    let mut cmd = std::process::Command::new(launcher);
    cmd.args(["-n", "2", RMA, "attach-hang", "1048576"])
        .env("FI_PROVIDER", "shm")
        .env("GASNET_QUIET", "1")
        .env("GASNET_EXITTIMEOUT", "10")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    cmd.spawn().expect("start the job")
}

/// The pids of the two attach-hang ranks, once both have attached.
fn wait_attached() -> Vec<i32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        assert!(std::time::Instant::now() < deadline, "ranks never attached");
        let pids: Vec<i32> = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| {
                let pid: i32 = e.file_name().to_string_lossy().parse().ok()?;
                let cmd = std::fs::read(e.path().join("cmdline")).ok()?;
                let text = String::from_utf8_lossy(&cmd).replace('\0', " ");
                (text.starts_with(RMA) && text.contains("attach-hang")).then_some(pid)
            })
            .collect();
        if pids.len() == 2 {
            // Let them get through the attach.
            std::thread::sleep(Duration::from_millis(1500));
            return pids;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
