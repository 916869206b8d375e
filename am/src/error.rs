//! The crate's one error type.

use crate::handlers::Signature;
use crate::wire::HEADER_LEN;
use crate::MAX_ARGS;

/// Everything the AM protocol logic can report: malformed messages,
/// registration and dispatch failures, barrier misuse, receive-buffer
/// accounting violations by the provider, and AMs that cannot be sent.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// Fewer bytes than a header arrived.
    #[error("truncated AM: {len} bytes is shorter than the {HEADER_LEN}-byte header")]
    TruncatedHeader {
        /// Bytes received.
        len: usize,
    },
    /// A message claims more arguments than any AM carries.
    #[error("malformed AM from rank {src} for handler {handler}: {nargs} arguments (at most {MAX_ARGS})")]
    MalformedArgs {
        /// Sender.
        src: u32,
        /// Handler.
        handler: u8,
        /// Claimed count.
        nargs: u8,
    },
    /// A message whose lengths do not add up.
    #[error("malformed AM from rank {src} for handler {handler}: {why}")]
    Malformed {
        /// Sender.
        src: u32,
        /// Handler.
        handler: u8,
        /// Details.
        why: String,
    },
    /// Registration at an index that is taken.
    #[error("AM handler index {index} is already registered ({existing})")]
    HandlerTaken {
        /// Index.
        index: u8,
        /// What holds it.
        existing: Signature,
    },
    /// Registration of a client handler below 128.
    #[error("AM handler index {index} is reserved for the conduit; client handlers use 128..=255 (or 0 for any free index)")]
    ReservedIndex {
        /// Index.
        index: u8,
    },
    /// A client's AM (request or reply) to a handler index below 128,
    /// which only the conduit sends to.
    #[error("AM to handler index {index}: indices 0..=127 are the conduit's; a client sends to its handlers at 128..=255")]
    ReservedTarget {
        /// Index.
        index: u8,
    },
    /// Registration with more than [`MAX_ARGS`] arguments.
    #[error("AM handler {index}: {nargs} arguments requested; at most {MAX_ARGS} are supported")]
    HandlerArgs {
        /// Index (0 if not yet chosen).
        index: u8,
        /// Count.
        nargs: u8,
    },
    /// No client index is free.
    #[error("no free AM handler index left in 128..=255")]
    HandlerTableFull,
    /// A message for an index with no handler.
    #[error("received an AM from rank {src} for handler index {index} with no associated handler registered")]
    Unregistered {
        /// Sender.
        src: u32,
        /// Index.
        index: u8,
    },
    /// A message whose kind, direction or argument count differ from the
    /// registered handler's.
    #[error("received a {got} from rank {src} for handler index {index}, which is registered as a {want}")]
    SignatureMismatch {
        /// Sender.
        src: u32,
        /// Index.
        index: u8,
        /// What arrived.
        got: Signature,
        /// What is registered.
        want: Signature,
    },
    /// `notify` while a barrier is in progress.
    #[error("barrier notify called twice without a wait in between")]
    BarrierNotifiedTwice,
    /// `wait` or `try` without `notify`.
    #[error("barrier wait or try called without a notify")]
    BarrierNotNotified,
    /// A barrier message for an impossible epoch or round.
    #[error("malformed barrier message from rank {src}: epoch {epoch}, round {round}")]
    MalformedBarrier {
        /// Sender.
        src: u32,
        /// Epoch claimed.
        epoch: u32,
        /// Round claimed.
        round: u32,
    },
    /// An exit message for a distance no rank sends.
    #[error("malformed AM from rank {src} for handler {handler}: exit message with impossible distance {distance}")]
    MalformedExit {
        /// Sender.
        src: u32,
        /// The exit handler's index.
        handler: u8,
        /// Distance claimed.
        distance: u32,
    },
    /// One of the conduit's own messages (atomics, collectives) with
    /// values no rank sends.
    #[error("malformed AM from rank {src} for the conduit's handler {handler}: {what}")]
    MalformedInternal {
        /// Sender.
        src: u32,
        /// The handler's index.
        handler: u8,
        /// What is wrong.
        what: &'static str,
    },
    /// A receive completion names a buffer that does not exist.
    #[error("the provider reported a receive into buffer {index}, which does not exist")]
    UnknownReceiveBuffer {
        /// Buffer.
        index: u32,
    },
    /// A receive completion for a buffer that is not posted.
    #[error("the provider reported a receive into buffer {index}, which is not posted")]
    NotPosted {
        /// Buffer.
        index: u32,
    },
    /// A receive completion outside its buffer.
    #[error("the provider reported {len} bytes at offset {offset} of receive buffer {index}, which holds {size}")]
    OutsideBuffer {
        /// Buffer.
        index: u32,
        /// Offset reported.
        offset: usize,
        /// Length reported.
        len: usize,
        /// Buffer size.
        size: usize,
    },
    /// A message placed beyond where the provider released the buffer.
    #[error("the provider placed a message at offset {offset} of receive buffer {index} after releasing it at {end}")]
    AfterRelease {
        /// Buffer.
        index: u32,
        /// Offset of the message.
        offset: usize,
        /// Release point.
        end: usize,
    },
    /// Two releases of one post.
    #[error("the provider released receive buffer {index} twice")]
    ReleasedTwice {
        /// Buffer.
        index: u32,
    },
    /// A destination outside the job.
    #[error("rank {rank} is not in the job (size {size})")]
    BadRank {
        /// Given.
        rank: usize,
        /// Job size.
        size: usize,
    },
    /// A Long to (or arriving at) a rank without a segment.
    #[error("rank {rank} has no segment attached (call attach_segment first)")]
    NoSegment {
        /// The rank.
        rank: usize,
    },
    /// More than [`MAX_ARGS`] arguments given to a send.
    #[error("{nargs} AM arguments given; at most {MAX_ARGS} are supported")]
    TooManyArgs {
        /// Given.
        nargs: usize,
    },
    /// A Medium payload above the maximum.
    #[error("AM Medium payload of {len} bytes exceeds the maximum of {max} bytes (GASNET_OFI_MAX_MEDIUM)")]
    MediumTooLarge {
        /// Requested.
        len: usize,
        /// Maximum.
        max: usize,
    },
    /// A Long payload that does not fit in the destination's segment.
    #[error("{len} bytes at offset {offset} do not fit in the {size}-byte segment of rank {rank}")]
    LongOutsideSegment {
        /// Destination.
        rank: usize,
        /// Offset.
        offset: usize,
        /// Length.
        len: usize,
        /// Segment size.
        size: usize,
    },
    /// Remote CQ data that names no landing slot of this conduit.
    #[error("an AM Long landing with CQ data {data:#018x} cannot be handled: {why}")]
    BadLanding {
        /// The CQ data.
        data: u64,
        /// Why.
        why: String,
    },
    /// A sender voided a landing slot (its write failed) that cannot be
    /// one of its slots here.
    #[error("rank {src} voided landing slot {slot}, which cannot be: {why}")]
    BadVoid {
        /// The sender.
        src: u32,
        /// The slot it named.
        slot: u32,
        /// Why.
        why: String,
    },
    /// A landing-slot credit report that does not add up.
    #[error("rank {src} reported its landing slots free up to {upto}, which cannot be: {why}")]
    BadCredit {
        /// The reporting rank.
        src: u32,
        /// The count reported.
        upto: u32,
        /// Why.
        why: String,
    },
}
