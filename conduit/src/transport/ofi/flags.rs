//! What a completion's flags say about where it came from.

use ofi_sys as sys;

/// Whether a receive-queue entry with `flags` is a remote write that
/// landed here (an AM Long in one message) rather than a message or the
/// completion of one of this rank's own operations. The reply queue takes
/// the reply endpoint's sends and writes too, and some providers (sockets)
/// flag a local write's completion with the operation's
/// `FI_REMOTE_CQ_DATA`: a local operation's flag (`FI_SEND`, `FI_WRITE`,
/// `FI_READ`) says it is not a landing, unless `FI_REMOTE_WRITE` says it
/// is.
#[inline(always)]
pub(super) fn landed(flags: u64) -> bool {
    let remote = (sys::FI_REMOTE_WRITE | sys::FI_REMOTE_CQ_DATA) as u64;
    let local = (sys::FI_SEND | sys::FI_WRITE | sys::FI_READ) as u64;
    flags & remote != 0 && (flags & sys::FI_REMOTE_WRITE as u64 != 0 || flags & local == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RMA: u64 = sys::FI_RMA as u64;
    const WRITE: u64 = sys::FI_WRITE as u64;
    const REMOTE_WRITE: u64 = sys::FI_REMOTE_WRITE as u64;
    const CQ_DATA: u64 = sys::FI_REMOTE_CQ_DATA as u64;

    #[test]
    fn remote_writes_with_data_are_landings() {
        // shm 2.1: the CQ data flag only; shm 1.17 and others: a remote write.
        assert!(landed(CQ_DATA));
        assert!(landed(RMA | REMOTE_WRITE | CQ_DATA));
        assert!(landed(REMOTE_WRITE));
    }

    #[test]
    fn local_completions_and_messages_are_not() {
        // sockets: a local write's completion carries the operation's flag.
        assert!(!landed(RMA | WRITE | CQ_DATA));
        assert!(!landed(RMA | WRITE));
        assert!(!landed(sys::FI_MSG as u64 | sys::FI_SEND as u64 | CQ_DATA));
        assert!(!landed(sys::FI_MSG as u64 | sys::FI_RECV as u64));
        assert!(!landed(RMA | sys::FI_READ as u64));
        assert!(!landed(
            sys::FI_MSG as u64 | sys::FI_RECV as u64 | sys::FI_MULTI_RECV as u64
        ));
    }
}
