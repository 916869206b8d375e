//! `Client::init` in a program that links libfabric (this test binary does,
//! through the conduit): the SIGINT/SIGTERM handlers that libinfinipath's
//! constructor installed before `main` (known-issues.md) are reset, so a
//! rank dies by the launcher's SIGTERM; a handler of the application is
//! kept.
//!
//! libfabric's shm provider installs SIGINT/SIGTERM handlers of its own
//! when it opens an endpoint: they remove its shared-memory files, put
//! back the disposition they replaced and raise the signal again. After
//! init the handler may therefore be shm's, but what it chains to must be
//! the default: the second test checks that a rank really dies by SIGTERM.

use conduit::client::Client;
use std::ffi::CStr;
use std::os::unix::process::ExitStatusExt;
use std::process::Command;

/// Set in the child process of [`a_rank_dies_by_sigterm_after_init`].
const CHILD: &str = "CONDUIT_SIGNALS_TEST_CHILD";

extern "C" fn application_handler(_: libc::c_int) {}

fn handler_of(sig: libc::c_int) -> libc::sighandler_t {
    // SAFETY: plain old data; all-zero is valid.
    let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a NULL new action only reads the disposition into `act`.
    let rc = unsafe { libc::sigaction(sig, std::ptr::null(), &mut act) };
    assert_eq!(rc, 0);
    act.sa_sigaction
}

fn object_of(addr: libc::sighandler_t) -> Option<String> {
    if addr == libc::SIG_DFL || addr == libc::SIG_IGN {
        return None;
    }
    // SAFETY: plain old data; all-zero is valid.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only looks the address up in the loader's tables.
    if unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) } == 0
        || info.dli_fname.is_null()
    {
        return None;
    }
    // SAFETY: a non-NULL dli_fname is a NUL-terminated string of the loader.
    Some(
        unsafe { CStr::from_ptr(info.dli_fname) }
            .to_string_lossy()
            .into_owned(),
    )
}

fn from_libinfinipath(sig: libc::c_int) -> bool {
    object_of(handler_of(sig)).is_some_and(|p| p.contains("libinfinipath"))
}

#[test]
fn init_drops_libinfinipaths_handlers_and_keeps_the_applications() {
    if std::env::var_os(CHILD).is_some() {
        return;
    }
    if std::env::var_os("IPATH_NO_BACKTRACE").is_some() {
        println!(
            "NOT CHECKED: IPATH_NO_BACKTRACE is set, so libinfinipath installed no handlers \
             to reset; only the application's handler is checked"
        );
    } else if conduit::ofi::runtime_version().0 >= 2 {
        // The libfabric 2 of scripts/setup.sh --libfabric=2 is built
        // without psm, so nothing loads libinfinipath.
        let maps = std::fs::read_to_string("/proc/self/maps").expect("read /proc/self/maps");
        assert!(
            !maps.contains("libinfinipath") && !from_libinfinipath(libc::SIGTERM),
            "libinfinipath is loaded with libfabric {:?}, which scripts/libfabric-2.sh builds \
             without psm",
            conduit::ofi::runtime_version()
        );
        println!("libfabric 2 loads no libinfinipath: only the application's handler is checked");
    } else {
        assert!(
            from_libinfinipath(libc::SIGTERM),
            "SIGTERM's handler before init is {:?}, not libinfinipath's: Debian's libfabric1 \
             1.17 loads libinfinipath.so.4 (package libpsm-infinipath1), whose constructor \
             installs one; install them, or revisit known-issues.md if that changed",
            object_of(handler_of(libc::SIGTERM))
        );
    }
    let f: extern "C" fn(libc::c_int) = application_handler;
    // SAFETY: the handler does nothing, which is async-signal-safe.
    unsafe { libc::signal(libc::SIGHUP, f as libc::sighandler_t) };
    let hup = handler_of(libc::SIGHUP);

    let c = Client::init().expect("a single-rank Client::init");
    assert_eq!(c.size(), 1);
    for sig in [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGSEGV,
        libc::SIGBUS,
        libc::SIGABRT,
    ] {
        assert!(
            !from_libinfinipath(sig),
            "signal {sig} still goes to libinfinipath after init"
        );
    }
    assert_eq!(
        handler_of(libc::SIGHUP),
        hup,
        "the application's handler was reset"
    );
    drop(c);
}

/// This test binary runs itself as a single-rank job: init, then SIGTERM
/// to itself. It must die by the signal (libinfinipath's handler would
/// make it exit 1).
#[test]
fn a_rank_dies_by_sigterm_after_init() {
    dies_by(libc::SIGTERM, "a_rank_dies_by_sigterm_after_init");
}

/// As [`a_rank_dies_by_sigterm_after_init`] for a crash: libinfinipath's
/// crash handlers (SIGSEGV, SIGBUS, SIGABRT, SIGILL) printed a backtrace
/// and exited 1, so the launcher reported "exited with code 1" for a rank
/// that crashed. SIGABRT (an `abort()`), because a raised SIGSEGV is no
/// fault: where nothing else holds SIGSEGV (libfabric 2.x), Rust's stack
/// overflow handler takes it, resets the default and returns, which ends
/// a real fault (it faults again) but not a raised signal.
#[test]
fn a_rank_dies_by_sigabrt_after_init() {
    dies_by(libc::SIGABRT, "a_rank_dies_by_sigabrt_after_init");
}

/// Run test `name` of this binary as a single-rank job that inits, then
/// raises `sig`; it must die by `sig`.
fn dies_by(sig: libc::c_int, name: &str) {
    if std::env::var_os(CHILD).is_some() {
        let _c = Client::init().expect("a single-rank Client::init");
        // SAFETY: raise only sends a signal to this process.
        unsafe { libc::raise(sig) };
        std::thread::sleep(std::time::Duration::from_secs(5));
        eprintln!("still alive 5 s after signal {sig}");
        std::process::exit(3);
    }
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture"])
        .env(CHILD, "1")
        .env("GASNET_QUIET", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run this test binary again");
    let pid = child.id();
    let out = child.wait_with_output().expect("wait for the rank");
    // What its shm endpoints left in /dev/shm (a rank killed by a signal
    // it does not handle cannot remove them; the launcher does that for
    // its ranks, and this test is the launcher here).
    if let Ok(dir) = std::fs::read_dir("/dev/shm") {
        for e in dir.flatten() {
            if e.file_name()
                .to_string_lossy()
                .starts_with(&format!("{pid}:"))
            {
                let _ = std::fs::remove_file(e.path());
            }
        }
    }
    assert_eq!(
        out.status.signal(),
        Some(sig),
        "the rank ended with {:?} instead of dying by signal {sig}; its stderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Set in the processes of [`a_rank_whose_parent_ends_dies_by_sigterm`]:
/// `middle` starts the rank and exits; `rank` watches its parent.
const PARENT_TEST: &str = "CONDUIT_PARENT_TEST";

/// `conduit::boot::watch_parent`: a rank whose parent (its launcher's
/// process) ends while it runs is ended by SIGTERM, not left spinning. The
/// test makes itself a child subreaper, starts a middle process that
/// starts the rank and exits at once; the rank, re-parented to the test,
/// sees its parent change and must die by SIGTERM within a few seconds
/// (it would otherwise sleep 20 s and exit 3).
#[test]
fn a_rank_whose_parent_ends_dies_by_sigterm() {
    let me = std::env::current_exe().unwrap();
    let args = [
        "--exact",
        "a_rank_whose_parent_ends_dies_by_sigterm",
        "--nocapture",
    ];
    match std::env::var(PARENT_TEST).as_deref() {
        Ok("rank") => {
            // As Client::init does first (libinfinipath's SIGTERM handler
            // would exit 1).
            conduit::boot::reset_provider_signal_handlers();
            conduit::boot::watch_parent(0);
            std::thread::sleep(std::time::Duration::from_secs(20));
            std::process::exit(3);
        }
        Ok("middle") => {
            let rank = Command::new(&me)
                .args(args)
                .env(PARENT_TEST, "rank")
                // Nothing of the test's pipes: its wait for this process's
                // output must not wait for the rank too.
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("start the rank");
            // Give the rank time to read its parent before this one ends.
            std::thread::sleep(std::time::Duration::from_millis(500));
            println!("RANK_PID={}", rank.id());
            std::process::exit(0);
        }
        _ => {}
    }
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only marks this process.
    let rc = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    assert_eq!(rc, 0, "prctl(PR_SET_CHILD_SUBREAPER)");
    let out = Command::new(&me)
        .args(args)
        .env(PARENT_TEST, "middle")
        .output()
        .expect("run the middle process");
    let text = String::from_utf8_lossy(&out.stdout);
    let pid: libc::pid_t = text
        .lines()
        .find_map(|l| l.strip_prefix("RANK_PID="))
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("the middle process printed no rank pid: {text}"));
    let start = std::time::Instant::now();
    let status = loop {
        let mut status = 0;
        // SAFETY: waits for a process re-parented to this subreaper.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break status;
        }
        assert!(
            r == 0,
            "waitpid({pid}) failed: {}",
            std::io::Error::last_os_error()
        );
        if start.elapsed() > std::time::Duration::from_secs(10) {
            // SAFETY: kill of the rank this test started.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("the rank (pid {pid}) still runs 10 s after its parent ended");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(
        libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGTERM,
        "the rank ended with wait status {status:#x}, not by SIGTERM"
    );
}
