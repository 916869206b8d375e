//! Errors of the client API.

use crate::config::ConfigError;
use crate::ofi::OfiError;
use crate::startup::StartupError;
use am::handlers::{DispatchError, RegisterError};
use am::wire::WireError;

/// Everything a client call can report.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AmError {
    /// Start-up failed (configuration, provider selection).
    #[error(transparent)]
    Startup(#[from] StartupError),
    /// A bad configuration value.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The bootstrap (launcher connection) failed.
    #[error("bootstrap: {0}")]
    Bootstrap(String),
    /// A libfabric call failed.
    #[error(transparent)]
    Ofi(#[from] OfiError),
    /// An operation completed with an error.
    #[error("{what} completed with an error: {text} (err {err}, provider errno {prov_errno})")]
    Completion {
        /// Which kind of operation.
        what: &'static str,
        /// libfabric error number.
        err: i32,
        /// Provider error number.
        prov_errno: i32,
        /// Text.
        text: String,
    },
    /// Handler registration failed.
    #[error(transparent)]
    Register(#[from] RegisterError),
    /// A malformed message arrived.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// A message for an unregistered or differently registered handler.
    #[error(transparent)]
    Dispatch(#[from] DispatchError),
    /// A bad argument to an API call.
    #[error("{0}")]
    BadArgument(String),
    /// Medium payload above the maximum.
    #[error("AM Medium payload of {len} bytes exceeds the maximum of {max} bytes (GASNET_OFI_MAX_MEDIUM)")]
    MediumTooLarge {
        /// Requested.
        len: usize,
        /// Maximum.
        max: usize,
    },
    /// More than 16 arguments.
    #[error("{nargs} AM arguments given; at most {} are supported", am::MAX_ARGS)]
    TooManyArgs {
        /// Given.
        nargs: usize,
    },
    /// A destination rank outside the job.
    #[error("rank {rank} is not in the job (size {size})")]
    BadRank {
        /// Given.
        rank: usize,
        /// Job size.
        size: usize,
    },
    /// A range outside a rank's segment.
    #[error("{len} bytes at offset {offset} do not fit in the {size}-byte segment of rank {rank}")]
    OutOfSegment {
        /// Target.
        rank: usize,
        /// Offset.
        offset: usize,
        /// Length.
        len: usize,
        /// Segment size.
        size: usize,
    },
    /// An operation that needs a segment before one is attached.
    #[error("no segment is attached (call attach_segment first)")]
    NoSegment,
    /// A second reply from one request handler.
    #[error("a request handler may send at most one reply")]
    AlreadyReplied,
    /// A reply from a reply handler.
    #[error("a reply handler cannot reply")]
    ReplyFromReply,
    /// A call that is not allowed inside a handler (poll, requests, barrier).
    #[error(
        "{0} is not allowed inside an AM handler (handlers may not poll, block or send requests)"
    )]
    InHandler(&'static str),
    /// A barrier call out of order.
    #[error(transparent)]
    Barrier(#[from] am::barrier::BarrierError),
    /// Named barriers with different ids met.
    #[error("barrier mismatch: ranks entered named barriers with different ids")]
    BarrierMismatch,
    /// Nothing happened for too long.
    #[error("timed out after {secs} s waiting for {what}")]
    Timeout {
        /// What.
        what: &'static str,
        /// Seconds.
        secs: u64,
    },
}
