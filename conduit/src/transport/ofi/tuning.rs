//! The transport's tuning constants: how many completions a queue read
//! takes at most, and how often a round reads a queue that nothing is
//! expected in (see `reading`).

/// With `quiet_reply_queue`, the reply queue is read every round for this
/// many rounds after a request was sent (a round trip takes a few to a
/// few tens of rounds)...
pub(super) const REPLY_WINDOW: usize = 256;

/// ...and afterwards, while no post of the reply endpoint owes a
/// completion, once in this many rounds (a later reply still arrives).
pub(super) const RX_IDLE_READ: usize = 16;

/// An idle round reads the TX queue once in this many.
pub(super) const TX_IDLE_READ: usize = 64;

/// Most completions read per queue per call: one chunk on the poll loop's
/// stack (a poll reads up to `GASNET_OFI_NUM_COMPLETIONS` in chunks; a
/// 64-entry chunk made the loop's frame 6 KiB and 8-byte puts 3% slower).
pub const MAX_BATCH: usize = 16;
