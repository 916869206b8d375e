//! Undoing the signal handlers that a fabric library installs when it is
//! loaded, and only those.
//!
//! Debian's libfabric 1.17 is linked against `libinfinipath.so.4` (the psm
//! provider's library). Its load-time constructor installs handlers for
//! SIGINT and SIGTERM, and for SIGSEGV, SIGBUS, SIGABRT and SIGILL, that
//! print a backtrace and call `exit(1)` (unless `IPATH_NO_BACKTRACE` is
//! set), so a rank that the launcher tears down with SIGTERM, or that
//! crashes, would exit 1 instead of dying by the signal (the launcher then
//! reports "exited with code 1", not the signal; known-issues.md). A library must not
//! reset the application's own handlers, so the rank side resets a handler
//! only when it lies in such a provider library.

use std::ffi::CStr;

/// The signals the launcher passes on to ranks, and those of a crash: a
/// rank is expected to die by them unless its application chose otherwise.
const SIGNALS: [libc::c_int; 8] = [
    libc::SIGINT,
    libc::SIGTERM,
    libc::SIGHUP,
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGABRT,
    libc::SIGILL,
    libc::SIGFPE,
];

/// Shared objects whose handlers for [`SIGNALS`] are reset: a handler is
/// reset when the path of the object that holds its code contains one of
/// these.
const PROVIDER_LIBRARIES: [&str; 1] = ["libinfinipath"];

/// For SIGINT, SIGTERM, SIGHUP and the crash signals (SIGSEGV, SIGBUS,
/// SIGABRT, SIGILL, SIGFPE): when the installed handler's code lies
/// in a shared object whose path contains `libinfinipath` (installed by the
/// constructor of Debian's psm library when libfabric is loaded, see the
/// module documentation), reset the signal to its default disposition.
/// SIG_DFL, SIG_IGN and every other handler (the application's own, or one
/// installed by another library) are left alone.
///
/// Returns each signal reset with the path of the library its handler came
/// from; each reset is also logged with `tracing::debug!`. The conduit
/// calls it at the start of `Client::init`. Not async-signal-safe; call it
/// before the application's threads install handlers of their own.
pub fn reset_provider_signal_handlers() -> Vec<(i32, String)> {
    let mut reset = Vec::new();
    for sig in SIGNALS {
        let Some(current) = current_action(sig) else {
            continue;
        };
        // With or without SA_SIGINFO, the handler's address is in this
        // field: the libc crate maps the C union of `sa_handler` and
        // `sa_sigaction` onto `sa_sigaction`.
        let handler = current.sa_sigaction;
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            continue;
        }
        let Some(path) = shared_object_of(handler) else {
            continue;
        };
        if !PROVIDER_LIBRARIES.iter().any(|l| path.contains(l)) {
            continue;
        }
        if set_default_if_still(sig, handler) {
            tracing::debug!(
                "reset {} to its default disposition: its handler ({}) was installed by {path}",
                crate::wire::signal_name(sig),
                if current.sa_flags & libc::SA_SIGINFO != 0 {
                    "SA_SIGINFO"
                } else {
                    "plain"
                },
            );
            reset.push((sig, path));
        }
    }
    reset
}

/// The current disposition of `sig`, or `None` if it cannot be read.
fn current_action(sig: libc::c_int) -> Option<libc::sigaction> {
    // SAFETY: `sigaction` is plain old data; all-zero is a valid value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: with a NULL new action sigaction only writes the current
    // disposition into `old`, which lives across the call.
    let rc = unsafe { libc::sigaction(sig, std::ptr::null(), &mut old) };
    (rc == 0).then_some(old)
}

/// Path of the shared object (or executable) that holds the code at
/// `addr`, as the dynamic loader knows it.
fn shared_object_of(addr: libc::sighandler_t) -> Option<String> {
    // SAFETY: `Dl_info` is plain old data; all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables for any address (it
    // does not dereference it) and fills `info`, which lives across the
    // call; 0 means the address is in no loaded object.
    let found = unsafe { libc::dladdr(addr as *const libc::c_void, &mut info) };
    if found == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: a non-NULL dli_fname is a NUL-terminated string owned by the
    // loader, valid while the object stays loaded (we copy it at once).
    let path = unsafe { CStr::from_ptr(info.dli_fname) };
    Some(path.to_string_lossy().into_owned())
}

/// Set `sig` to SIG_DFL, unless its handler is no longer `expected` (another
/// thread changed it since it was read): then the newer disposition is put
/// back and `false` returned.
fn set_default_if_still(sig: libc::c_int, expected: libc::sighandler_t) -> bool {
    // SAFETY: `sigaction` is plain old data; all-zero is a valid value
    // (no flags, and SIG_DFL is 0, set explicitly below anyway).
    let mut dfl: libc::sigaction = unsafe { std::mem::zeroed() };
    dfl.sa_sigaction = libc::SIG_DFL;
    // SAFETY: `dfl.sa_mask` is a valid sigset_t owned here.
    unsafe { libc::sigemptyset(&mut dfl.sa_mask) };
    // SAFETY: as above.
    let mut prev: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: installs the default disposition (no handler code of ours is
    // involved) and writes the one it replaced into `prev`; both live
    // across the call.
    if unsafe { libc::sigaction(sig, &dfl, &mut prev) } != 0 {
        return false;
    }
    if prev.sa_sigaction != expected {
        // SAFETY: puts back exactly the disposition that was just replaced.
        unsafe { libc::sigaction(sig, &prev, std::ptr::null_mut()) };
        return false;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Dispositions are process-wide: the tests of this module take turns.
    static SIGNAL_TESTS: Mutex<()> = Mutex::new(());

    /// The dispositions of [`SIGNALS`] when created, put back when dropped.
    struct Saved(Vec<(libc::c_int, libc::sigaction)>);

    impl Saved {
        fn now() -> Saved {
            Saved(
                SIGNALS
                    .iter()
                    .map(|&s| (s, current_action(s).expect("sigaction")))
                    .collect(),
            )
        }
    }

    impl Drop for Saved {
        fn drop(&mut self) {
            for (sig, act) in &self.0 {
                // SAFETY: restores a disposition read earlier by sigaction.
                unsafe { libc::sigaction(*sig, act, std::ptr::null_mut()) };
            }
        }
    }

    extern "C" fn plain_handler(_: libc::c_int) {}

    extern "C" fn siginfo_handler(_: libc::c_int, _: *mut libc::siginfo_t, _: *mut libc::c_void) {}

    fn handler_of(sig: libc::c_int) -> libc::sighandler_t {
        current_action(sig).expect("sigaction").sa_sigaction
    }

    fn install_plain(sig: libc::c_int) {
        let f: extern "C" fn(libc::c_int) = plain_handler;
        // SAFETY: the handler does nothing, which is async-signal-safe.
        unsafe { libc::signal(sig, f as libc::sighandler_t) };
    }

    fn install_siginfo(sig: libc::c_int) {
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            siginfo_handler;
        // SAFETY: plain old data; all-zero is valid.
        let mut act: libc::sigaction = unsafe { std::mem::zeroed() };
        act.sa_sigaction = f as libc::sighandler_t;
        act.sa_flags = libc::SA_SIGINFO;
        // SAFETY: a valid action whose handler does nothing.
        let rc = unsafe { libc::sigaction(sig, &act, std::ptr::null_mut()) };
        assert_eq!(rc, 0);
    }

    fn set_ignored(sig: libc::c_int) {
        // SAFETY: SIG_IGN involves no handler code.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }

    fn set_default(sig: libc::c_int) {
        // SAFETY: SIG_DFL involves no handler code.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
    }

    #[test]
    fn the_applications_handlers_ignore_and_default_are_kept() {
        let _turn = SIGNAL_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let _saved = Saved::now();
        install_plain(libc::SIGHUP);
        install_siginfo(libc::SIGTERM);
        set_ignored(libc::SIGINT);
        let before: Vec<_> = SIGNALS.iter().map(|&s| handler_of(s)).collect();
        assert!(
            shared_object_of(before[2]).is_some(),
            "dladdr finds the test's own handler"
        );

        assert_eq!(reset_provider_signal_handlers(), Vec::new());
        let after: Vec<_> = SIGNALS.iter().map(|&s| handler_of(s)).collect();
        assert_eq!(before, after);
        assert_eq!(handler_of(libc::SIGINT), libc::SIG_IGN);

        for s in SIGNALS {
            set_default(s);
        }
        assert_eq!(reset_provider_signal_handlers(), Vec::new());
        assert!(SIGNALS.iter().all(|&s| handler_of(s) == libc::SIG_DFL));
    }

    /// Load the very library the workaround is about and check that its
    /// handlers, and only those, are reset.
    #[test]
    fn libinfinipath_handlers_are_reset() {
        let _turn = SIGNAL_TESTS.lock().unwrap_or_else(|e| e.into_inner());
        let _saved = Saved::now();
        for s in SIGNALS {
            set_default(s);
        }
        // SAFETY: dlopen with a NUL-terminated name; the library's
        // constructor only installs signal handlers. It stays loaded (no
        // dlclose): nothing of it is used afterwards.
        let handle = unsafe { libc::dlopen(c"libinfinipath.so.4".as_ptr(), libc::RTLD_NOW) };
        if handle.is_null() {
            // SAFETY: dlerror returns NULL or a NUL-terminated message.
            let why = unsafe {
                let e = libc::dlerror();
                if e.is_null() {
                    "unknown reason".to_string()
                } else {
                    CStr::from_ptr(e).to_string_lossy().into_owned()
                }
            };
            panic!(
                "cannot load libinfinipath.so.4 ({why}): install libpsm-infinipath1, which \
                 Debian's libfabric1 depends on (apt-get install libfabric1 \
                 libpsm-infinipath1); this test checks the workaround for its signal handlers"
            );
        }
        let term = handler_of(libc::SIGTERM);
        let term_lib = (term != libc::SIG_DFL)
            .then(|| shared_object_of(term))
            .flatten();
        if !term_lib
            .as_deref()
            .is_some_and(|p| p.contains("libinfinipath"))
        {
            if std::env::var_os("IPATH_NO_BACKTRACE").is_some() {
                println!(
                    "NOT CHECKED: libinfinipath's constructor installed no SIGTERM handler \
                     because IPATH_NO_BACKTRACE is set in this test's environment; the reset \
                     itself is not exercised (unset it to run this check)"
                );
                assert_eq!(reset_provider_signal_handlers(), Vec::new());
                return;
            }
            panic!(
                "libinfinipath.so.4 was loaded but SIGTERM's handler is {term_lib:?}, not in \
                 libinfinipath: its constructor no longer installs one (the library changed?), \
                 so known-issues.md's entry on its handlers needs another look"
            );
        }
        let int_from_lib =
            shared_object_of(handler_of(libc::SIGINT)).is_some_and(|p| p.contains("libinfinipath"));
        // An application handler next to the library's ones stays.
        install_plain(libc::SIGHUP);
        let hup = handler_of(libc::SIGHUP);

        let reset = reset_provider_signal_handlers();
        let sigs: Vec<i32> = reset.iter().map(|r| r.0).collect();
        assert!(sigs.contains(&libc::SIGTERM), "{reset:?}");
        // Its crash handlers too (a crashing rank then dies by the signal).
        for s in [libc::SIGSEGV, libc::SIGBUS, libc::SIGABRT] {
            assert!(sigs.contains(&s), "signal {s} not reset: {reset:?}");
            assert_eq!(handler_of(s), libc::SIG_DFL);
        }
        assert_eq!(sigs.contains(&libc::SIGINT), int_from_lib, "{reset:?}");
        assert!(!sigs.contains(&libc::SIGHUP), "{reset:?}");
        assert!(
            reset.iter().all(|r| r.1.contains("libinfinipath")),
            "{reset:?}"
        );
        assert_eq!(handler_of(libc::SIGTERM), libc::SIG_DFL);
        assert_eq!(handler_of(libc::SIGINT), libc::SIG_DFL);
        assert_eq!(handler_of(libc::SIGHUP), hup);
        // Nothing left to reset.
        assert_eq!(reset_provider_signal_handlers(), Vec::new());
    }
}
