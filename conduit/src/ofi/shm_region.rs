//! The shared-memory files behind libfabric's shm endpoints.
//!
//! The shm provider backs each enabled endpoint with a POSIX shared-memory
//! object (`/dev/shm/<pid>:<uid>:<n>`: the endpoint's address without its
//! `fi_shm://` prefix, `<n>` counting the process's endpoints). It removes
//! the object in `fi_close`, and on SIGINT, SIGTERM, SIGBUS and SIGSEGV;
//! nothing removes it when a process ends without closing its endpoints
//! (the collective exit ends with `_exit`; `std::process::exit` runs no
//! destructors) or dies by SIGKILL.
//!
//! A left object does harm once its pid is reused: the new process's
//! endpoint gets the same name, the provider finds a region whose recorded
//! owner is alive (the new process itself), removes the object and fails
//! `fi_enable` with `-FI_EBUSY` (libfabric 1.17 and 2.1,
//! `smr_retry_map`); from 2.3 it names the endpoint
//! `<pid>:<uid>:<n>:<random>` instead, which is why the name is read again
//! once the endpoint is enabled. With 32768 pids and every rank leaving
//! three objects, a test suite hit it within minutes (known-issues.md).
//!
//! So the conduit (1) records the object of every shm endpoint it enables
//! and removes the recorded ones when the process ends without closing them
//! ([`unlink_all`], called before `_exit` and from an `atexit` handler), and
//! (2) retries `fi_enable` once after `-FI_EBUSY` when the name carries this
//! process's own pid: such an object can only be a dead process's, and the
//! provider has removed it by then.

use std::ffi::CString;
use std::sync::{Mutex, Once};

/// The prefix of a shm endpoint's address.
const PREFIX: &[u8] = b"fi_shm://";

/// Objects of the shm endpoints this process enabled and has not closed.
static OPEN: Mutex<Vec<CString>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// The shared-memory object of an endpoint whose address is `addr`, if it
/// is a shm provider address (`fi_shm://<name>`, NUL-terminated or not).
pub(crate) fn object_of(addr: &[u8]) -> Option<CString> {
    let rest = addr.strip_prefix(PREFIX)?;
    let end = rest.iter().position(|&b| b == 0).unwrap_or(rest.len());
    let name = &rest[..end];
    if name.is_empty() || name.contains(&b'/') {
        return None;
    }
    CString::new(name).ok()
}

/// Whether `object` is named for this process (`<our pid>:...`), so that an
/// existing object of that name can only be left by a dead process.
pub(crate) fn names_this_process(object: &CString) -> bool {
    let own = format!("{}:", std::process::id());
    object.as_bytes().starts_with(own.as_bytes())
}

/// Record `object` as belonging to an endpoint that is now enabled.
pub(crate) fn opened(object: &CString) {
    AT_EXIT.call_once(|| {
        // SAFETY: at_exit is an extern "C" fn without arguments that never
        // unwinds; atexit only stores the pointer.
        let rc = unsafe { libc::atexit(at_exit) };
        if rc != 0 {
            tracing::warn!("atexit failed: shm endpoint files may be left in /dev/shm");
        }
    });
    OPEN.lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(object.clone());
}

/// Forget `object`: its endpoint was closed (`fi_close` removed it).
pub(crate) fn closed(object: &CString) {
    let mut open = OPEN.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(i) = open.iter().position(|o| o == object) {
        open.swap_remove(i);
    }
}

/// Remove the objects of the shm endpoints still open, for a process that
/// ends without closing them. Peers that mapped them keep their mappings;
/// the endpoints themselves stay usable until the process ends. Returns how
/// many were removed. Skips the work (returning 0) if another thread holds
/// the record, rather than block an exiting process.
pub fn unlink_all() -> usize {
    let Ok(mut open) = OPEN.try_lock() else {
        return 0;
    };
    let mut n = 0;
    for o in open.drain(..) {
        // SAFETY: o is a NUL-terminated name; shm_unlink only removes it.
        if unsafe { libc::shm_unlink(o.as_ptr()) } == 0 {
            n += 1;
        }
    }
    n
}

extern "C" fn at_exit() {
    // Nothing here may unwind into C.
    let _ = std::panic::catch_unwind(unlink_all);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shm_addresses_name_their_object() {
        assert_eq!(
            object_of(b"fi_shm://123:0:2\0").unwrap().as_bytes(),
            b"123:0:2"
        );
        assert_eq!(object_of(b"fi_shm://9:1:0").unwrap().as_bytes(), b"9:1:0");
        assert!(object_of(b"fi_sock://127.0.0.1:5000").is_none());
        assert!(object_of(b"fi_shm://").is_none());
        assert!(object_of(b"fi_shm://a/b").is_none());
        assert!(object_of(&[0x0a, 0, 0, 1]).is_none());
    }

    #[test]
    fn only_our_pid_is_ours() {
        let own = CString::new(format!("{}:0:1", std::process::id())).unwrap();
        assert!(names_this_process(&own));
        let other = CString::new(format!("{}1:0:1", std::process::id())).unwrap();
        assert!(!names_this_process(&other));
    }

    #[test]
    fn recorded_objects_are_removed_once() {
        let name = CString::new(format!("gex-test-{}:0:0", std::process::id())).unwrap();
        // SAFETY: a valid name; the descriptor is closed right away.
        let fd = unsafe { libc::shm_open(name.as_ptr(), libc::O_CREAT | libc::O_RDWR, 0o600) };
        assert!(fd >= 0, "shm_open: {}", std::io::Error::last_os_error());
        // SAFETY: fd is open.
        unsafe { libc::close(fd) };
        opened(&name);
        let path = format!("/dev/shm/{}", name.to_str().unwrap());
        assert!(std::path::Path::new(&path).exists());
        assert!(unlink_all() >= 1);
        assert!(!std::path::Path::new(&path).exists());
        closed(&name); // already forgotten: no effect
        assert!(!OPEN.lock().unwrap().contains(&name));
    }
}
