//! What tagged messaging reports.

use tagged::{LayoutError, LimitError, OpError, Status};

/// A tagged-messaging failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaggedError {
    /// The client was started without tagged messaging.
    #[error("tagged messaging is not enabled: start the client with Options::tagged()")]
    NotEnabled,
    /// No tag layout fits the provider.
    #[error(transparent)]
    Layout(#[from] LayoutError),
    /// A communicator id, source rank or tag beyond the layout.
    #[error(transparent)]
    Limit(#[from] LimitError),
    /// The provider offers no tagged RDM endpoint in the client's domain.
    #[error(
        "provider {provider} (domain {domain}) offers no RDM endpoint with FI_TAGGED and FI_ORDER_SAS \
         for tagged messaging"
    )]
    NoTaggedInfo {
        /// The provider.
        provider: String,
        /// The domain.
        domain: String,
    },
    /// Scalable endpoints asked for on a provider with one context.
    #[error(
        "GASNET_OFI_ENABLE_SEP=1 is not possible with provider {provider}: it offers {tx} TX and {rx} RX \
         context(s) per endpoint, and scalable endpoints need more than one. Unset GASNET_OFI_ENABLE_SEP \
         (GASNET_OFI_THREAD_GROUPING=1 then gives each context a regular endpoint of its own) or choose a \
         provider with scalable endpoints (FI_PROVIDER=sockets on this machine's libfabric)"
    )]
    SepUnsupported {
        /// The provider.
        provider: String,
        /// Its `max_ep_tx_ctx`.
        tx: usize,
        /// Its `max_ep_rx_ctx`.
        rx: usize,
    },
    /// The provider's tag matching is known to be broken in the loaded
    /// libfabric (known-issues.md).
    #[error(
        "tagged messaging is not possible with provider {provider} in libfabric {version}: {defect}. \
         {remedy}"
    )]
    ProviderDefect {
        /// The provider.
        provider: String,
        /// The loaded libfabric, `major.minor`.
        version: String,
        /// What is broken.
        defect: &'static str,
        /// What to do.
        remedy: &'static str,
    },
    /// A rank outside the communicator.
    #[error("rank {rank} is not in the communicator (size {size})")]
    Rank {
        /// The rank.
        rank: u32,
        /// The communicator's size.
        size: u32,
    },
    /// The message was longer than the receive buffer.
    #[error(
        "message from rank {} with tag {} has {} bytes but the receive buffer holds {}: truncated \
         (nothing was written past the buffer)",
        .0.source, .0.tag, .0.size, .0.len
    )]
    Truncated(Status),
    /// The message was longer than the receive buffer, on a provider that
    /// loses the connection after a truncated receive (known-issues.md).
    #[error(
        "message from rank {} with tag {} was longer than the {}-byte receive buffer, and provider \
         {provider} in libfabric {version} loses the connection after a truncated receive (later \
         messages from that rank never arrive; libfabric 1.19 fixed it). Post receive buffers as large \
         as the largest message, use libfabric 1.19 or later (scripts/setup.sh --libfabric=2), or \
         another provider (FI_PROVIDER=sockets)",
        .status.source, .status.tag, .status.len
    )]
    TruncationDefect {
        /// The provider.
        provider: String,
        /// The loaded libfabric, `major.minor`.
        version: String,
        /// The truncated receive's status.
        status: Status,
    },
    /// libfabric failed an operation.
    #[error("{op} failed: {} (libfabric error {}, provider error {})", .cause.text, .cause.err, .cause.prov_errno)]
    Op {
        /// The operation.
        op: &'static str,
        /// What libfabric said.
        cause: OpError,
    },
    /// A request waited for or tested in a scope that did not start it
    /// (returned out of its scope, which finished it when it ended).
    #[error(
        "this {op} request is not one of this scope's: a request is waited for or tested in the \
         scope that started it (one returned out of its scope was finished when that scope ended)"
    )]
    ForeignRequest {
        /// The request's operation.
        op: &'static str,
    },
    /// A communicator used after `Comm::free` (through a clone).
    #[error("communicator {cid} was freed (Comm::free); its clones may not be used")]
    Freed {
        /// Its id (which a later communicator may have taken).
        cid: u32,
    },
    /// `Comm::free` while members have requests pending on the
    /// communicator: no member freed it.
    #[error("communicator {cid} not freed: members {ranks:?} (communicator ranks) have requests still pending on it ({pending} here); wait for or cancel them first, then free it")]
    FreePending {
        /// Its id.
        cid: u32,
        /// Requests pending on it here.
        pending: u32,
        /// The members with some.
        ranks: Vec<u32>,
    },
    /// The world communicator cannot be freed.
    #[error("the world communicator cannot be freed")]
    FreeWorld,
    /// A matched probe on a provider without `FI_CLAIM`.
    #[error("matched probe (FI_CLAIM) is not supported by provider {provider}: {why}")]
    ClaimUnsupported {
        /// The provider.
        provider: String,
        /// Why (the provider's profile).
        why: String,
    },
    /// A collective step received something malformed.
    #[error("communicator {op}: {what}")]
    Collective {
        /// The collective.
        op: &'static str,
        /// What was wrong.
        what: String,
    },
}
