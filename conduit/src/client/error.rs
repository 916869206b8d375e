//! The client's one error type, with `#[source]` chains to the detail
//! types of the layers below.

use crate::boot::BootstrapError;
use crate::config::ConfigError;
use crate::ofi::OfiError;
use crate::select::SelectError;
use rma::ops::TransferError;
use std::sync::Arc;

/// A failed RMA operation: what it was, with which rank, and the failing
/// transfer's error completion (libfabric error number, provider errno,
/// text).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{op} {dir} rank {rank} failed")]
pub struct RmaError {
    /// `put`, `get` or `AM Long payload write`.
    pub op: &'static str,
    /// `to` or `from`.
    pub dir: &'static str,
    /// The remote rank.
    pub rank: usize,
    /// The error completion.
    #[source]
    pub cause: TransferError,
}

impl RmaError {
    /// libfabric's error number (positive `FI_E*`).
    pub fn err(&self) -> i32 {
        self.cause.err
    }
    /// The provider's error number.
    pub fn prov_errno(&self) -> i32 {
        self.cause.prov_errno
    }
}

/// Everything a client call can report.
#[derive(Debug, Clone, thiserror::Error)]
pub enum Error {
    /// A bad configuration value.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No usable provider, or a provider that cannot be used.
    #[error(transparent)]
    Select(#[from] SelectError),
    /// The bootstrap (the launcher's or PMIx's connection) failed.
    #[error("bootstrap failed")]
    Bootstrap(#[source] Arc<BootstrapError>),
    /// A libfabric call failed.
    #[error(transparent)]
    Ofi(#[from] OfiError),
    /// The AM protocol: a malformed message, an unregistered handler, a
    /// registration or barrier misuse, an AM that cannot be sent, or a
    /// provider breaking the receive-buffer rules.
    #[error(transparent)]
    Am(#[from] am::Error),
    /// An AM send completed with an error.
    #[error("an AM send failed")]
    Send(#[source] TransferError),
    /// An AM receive completed with an error.
    #[error("an AM receive failed")]
    Receive(#[source] TransferError),
    /// An RMA operation failed.
    #[error(transparent)]
    Rma(#[from] RmaError),
    /// An RMA that cannot be planned (a range outside its segment).
    #[error(transparent)]
    Range(#[from] rma::Error),
    /// The provider reported a completion the conduit never posted.
    #[error("the provider reported a completion with context {value:#x}, which the conduit never posted")]
    UnknownContext {
        /// The context value.
        value: usize,
    },
    /// Memory could not be mapped.
    #[error("cannot map {what} ({bytes} bytes)")]
    Map {
        /// What for.
        what: &'static str,
        /// Size asked for.
        bytes: usize,
        /// The OS's answer.
        #[source]
        cause: Arc<std::io::Error>,
    },
    /// Bounce-buffer settings.
    #[error("GASNET_OFI_NUM_BBUFS / GASNET_OFI_BBUF_SIZE")]
    Bbuf(#[from] bbuf::BbufError),
    /// An operation that needs this rank's segment before one is attached.
    #[error("no segment is attached (call attach_segment first)")]
    NoSegment,
    /// `attach_segment` a second time.
    #[error("a segment is already attached")]
    SegmentAttached,
    /// `attach_segment` while another thread's call is running (it is
    /// collective: one call per rank).
    #[error("attach_segment is already running on another thread of this rank (it is collective: one call per rank)")]
    SegmentAttaching,
    /// A segment size that is not a positive multiple of the page size.
    #[error("segment size {size} is not a positive multiple of the page size {page}")]
    SegmentSize {
        /// Asked for.
        size: usize,
        /// Page size.
        page: usize,
    },
    /// A segment larger than `GASNET_MAX_SEGSIZE` allows.
    #[error("segment size {size} exceeds the limit of {limit} bytes set by GASNET_MAX_SEGSIZE={setting}")]
    SegmentLimit {
        /// Asked for.
        size: usize,
        /// The limit.
        limit: u64,
        /// The setting.
        setting: String,
    },
    /// Another rank's part of a collective `attach_segment` failed (it
    /// reports why): no rank attaches.
    #[error(
        "rank {rank} could not attach its segment (its own error says why), so no rank attached one"
    )]
    SegmentElsewhere {
        /// The first rank that failed.
        rank: usize,
    },
    /// A supernode member's collective cache is not mapped here, yet a
    /// collective reads it in place. The members agree on their mappings
    /// before any uses the cache (a team one of whose members could not
    /// map another's goes without it), so this is an internal error.
    #[error(
        "the collective cache of rank {rank} is not mapped here ({why}), yet a collective on a \
         team whose members share memory reads it in place (the members agree on their \
         mappings before using the cache: an internal error, please report it); set \
         GASNET_SUPERNODE_MAXSIZE=1 to go without the shared-memory path"
    )]
    CollCacheUnmapped {
        /// The member.
        rank: usize,
        /// Why the mapping failed (the system's error).
        why: String,
    },
    /// A rank published a malformed record during start-up or attach.
    #[error("rank {rank} published a malformed {what}")]
    Published {
        /// Who.
        rank: usize,
        /// What.
        what: &'static str,
    },
    /// Ranks opened different numbers of endpoint sets
    /// (`Options::endpoints`): the job's address tables and shared-memory
    /// rings are laid out by it on every rank.
    #[error(
        "rank {rank} opened {sets} endpoint set(s) but rank {other} opened {other_sets}: \
         every rank of the job must ask for the same number of endpoints"
    )]
    EndpointSetsDiffer {
        /// This rank.
        rank: usize,
        /// Its sets.
        sets: usize,
        /// The first rank found with another count.
        other: usize,
        /// That rank's sets.
        other_sets: usize,
    },
    /// The shared-memory path between ranks of a host could not be set up,
    /// or its memory was found overwritten (fatal).
    #[error("the shared-memory path: {0}")]
    Pshm(String),
    /// A segment offset not aligned for an atomic or volatile access.
    #[error(
        "segment offset {offset} is not a multiple of {align} (needed for a {bits}-bit access)"
    )]
    Misaligned {
        /// Offset given.
        offset: usize,
        /// Alignment needed.
        align: usize,
        /// Access width.
        bits: u32,
    },
    /// A read outside a handler's payload ([`super::Payload::read`]).
    #[error(
        "payload read of {len} bytes at offset {offset} is outside the payload of {size} bytes"
    )]
    PayloadRange {
        /// Offset given.
        offset: usize,
        /// Bytes asked for.
        len: usize,
        /// The payload's length.
        size: usize,
    },
    /// A second reply from one request handler.
    #[error("a request handler may send at most one reply")]
    AlreadyReplied,
    /// A reply from a reply handler.
    #[error("a reply handler cannot reply")]
    ReplyFromReply,
    /// A call that is not allowed inside a handler.
    #[error(
        "{0} is not allowed inside an AM handler (handlers may not poll, block or send requests)"
    )]
    InHandler(&'static str),
    /// Named barriers with different ids met.
    #[error("barrier mismatch: ranks entered named barriers with different ids")]
    BarrierMismatch,
    /// `Options::endpoints` outside `1..=MAX_ENDPOINT_SETS`.
    #[error(
        "Options::endpoints({0}): a client has 1 to {max} endpoint sets",
        max = super::init::MAX_ENDPOINT_SETS
    )]
    EndpointCount(usize),
    /// An endpoint index outside `0..count`.
    #[error(
        "endpoint {index} does not exist; this client has {count} (Options::endpoints at init)"
    )]
    NoEndpoint {
        /// Asked for.
        index: usize,
        /// Endpoints.
        count: usize,
    },
    /// Endpoint 0, the client's own, which no handle can own.
    #[error("{}", endpoint_zero(*count))]
    EndpointZero {
        /// Endpoints.
        count: usize,
    },
    /// An endpoint that another handle owns.
    #[error("endpoint {index} is already owned by another handle (one thread owns an endpoint at a time)")]
    EndpointOwned {
        /// The endpoint.
        index: usize,
    },
    /// Provider selection handed over no `fi_info` entry.
    #[error("provider selection returned no fi_info entry")]
    NoFiInfo,
    /// The provider did not take the multi-receive minimum it was given.
    #[error("the provider kept FI_OPT_MIN_MULTI_RECV at {got} bytes after it was set to {want}; set GASNET_OFI_RECEIVE_BUFF_SIZE=recv to receive without FI_MULTI_RECV")]
    MinMultiRecv {
        /// What it reported.
        got: usize,
        /// What was set (the largest AM).
        want: usize,
    },
    /// The address vector for every rank's endpoints could not be opened.
    #[error("the address vector for {count} addresses ({sets} endpoint set(s) x 2 endpoints x {ranks} ranks) cannot be opened on {provider}{}", av_hint(provider, *count))]
    AvOpen {
        /// Addresses asked for.
        count: usize,
        /// Endpoint sets per rank.
        sets: usize,
        /// Ranks in the job.
        ranks: usize,
        /// The provider.
        provider: String,
        /// libfabric's error.
        #[source]
        source: OfiError,
    },
    /// A start-up over the simulator without a bootstrap.
    #[error("starting over the simulator needs a bootstrap in the options (Options::bootstrap)")]
    NoBootstrap,
    /// Tagged messaging.
    #[error(transparent)]
    Tagged(#[from] crate::tagged::TaggedError),
    /// An atomic domain or operation that is refused (a type and operation
    /// that do not go together, an operation outside the domain, a
    /// misaligned target).
    #[error(transparent)]
    Atomic(#[from] rma::atomic::AtomicError),
    /// Native atomics asked for (`GASNET_OFI_ATOMICS=native`, or
    /// `AtomicsMode::Native` for one domain) but the provider does not
    /// perform one of the domain's operations (or cannot here: no
    /// FI_ATOMIC on its endpoints, or its profile refuses them).
    #[error(
        "{asked}: {provider} cannot perform {op} on {ty} natively in this job ({why}); {remedy}"
    )]
    NotNative {
        /// Who asked: `GASNET_OFI_ATOMICS=native` or the domain's creator.
        asked: &'static str,
        /// What to do instead.
        remedy: &'static str,
        /// The provider.
        provider: String,
        /// The operation.
        op: rma::atomic::AtomicOp,
        /// The type.
        ty: rma::atomic::AtomicType,
        /// Why (no FI_ATOMIC, the provider's profile, or which `*valid`
        /// call refused it).
        why: String,
    },
    /// A team or collective misuse (a rank outside the team, an operator
    /// not valid for the type, lengths that differ) or a malformed chunk.
    #[error(transparent)]
    Coll(#[from] coll::Error),
    /// A VIS transfer that cannot be planned (a piece outside the segment
    /// or the buffer, totals that differ, overflowing strides).
    #[error(transparent)]
    Vis(Box<rma::vis::Error>),
    /// A team id this rank already uses (a split agrees again when a
    /// member meets it).
    #[error("team id {id} is already a team of this rank")]
    TeamIdTaken {
        /// The team id.
        id: u32,
    },
    /// Another member of a split could not make its new team (it reports
    /// why): no member made one.
    #[error("another member of the split could not make its new team (its own error says why), so no member made one")]
    SplitFailedElsewhere,
    /// [`crate::client::Team::destroy`] on the world team (GASNet-EX's
    /// primordial team), which lives as long as the client.
    #[error("the world team (GASNet-EX's primordial team) cannot be destroyed: only teams made by a split can")]
    DestroyWorld,
    /// A team this rank does not know (never made, or destroyed).
    #[error("team {id} is not a team of this rank (never made here, or destroyed)")]
    NoTeam {
        /// The team id.
        id: u32,
    },
    /// Ranks created atomic domains that differ.
    #[error("atomic domain mismatch: ranks created domains with different types, operations or implementations (every rank must create the same domains in the same order, with the same GASNET_OFI_ATOMICS, the same AtomicsMode given to atomic_domain_with and the same gex_AD_Create flags)")]
    AtomicDomainMismatch,
    /// Native atomics asked for one domain (`AtomicsMode::Native`) in a
    /// job whose provider carries nothing between its ranks: every rank
    /// shares memory with this one, and the job started without
    /// `GASNET_OFI_ATOMICS=native` or `GASNET_OFI_COLL_RMA=on`.
    #[error("atomic domain created with AtomicsMode::Native: every rank of this job shares memory with this one, so the provider was opened for this rank's own endpoints only and carries nothing between ranks; start the job with GASNET_OFI_ATOMICS=native (or GASNET_SUPERNODE_MAXSIZE=1), or create the domain with AtomicsMode::Auto or Am")]
    NativeUnreachable,
}

impl From<crate::startup::StartupError> for Error {
    fn from(e: crate::startup::StartupError) -> Error {
        use crate::startup::StartupError as E;
        match e {
            E::Config(e) => Error::Config(e),
            E::Select(e) => Error::Select(e),
            E::Ofi(e) => Error::Ofi(e),
        }
    }
}

impl From<BootstrapError> for Error {
    fn from(e: BootstrapError) -> Error {
        Error::Bootstrap(Arc::new(e))
    }
}

impl Error {
    /// This error and its sources, joined with ": " (what a program
    /// prints).
    pub fn report(&self) -> String {
        let mut s = self.to_string();
        let mut cur: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(self);
        while let Some(e) = cur {
            let t = e.to_string();
            if !s.ends_with(&t) {
                s.push_str(": ");
                s.push_str(&t);
            }
            cur = e.source();
        }
        s
    }

    /// True for failures after which the network cannot be trusted to
    /// finish what was posted (a completion queue that cannot be read): a
    /// wait for an operation then cannot complete, and the process aborts
    /// rather than return while the operation may still write the caller's
    /// memory.
    pub fn is_fatal(&self) -> bool {
        matches!(
            self,
            Error::Ofi(_) | Error::UnknownContext { .. } | Error::Pshm(_)
        )
    }

    pub(crate) fn map(what: &'static str, bytes: usize, e: std::io::Error) -> Error {
        Error::Map {
            what,
            bytes,
            cause: Arc::new(e),
        }
    }
}

/// Why endpoint 0 cannot be owned, and which can.
fn endpoint_zero(count: usize) -> String {
    let others = match count {
        0 | 1 => "this client has no other (Options::endpoints at init)".to_string(),
        2 => "endpoint 1 can be owned".to_string(),
        n => format!("endpoints 1 to {} can be owned", n - 1),
    };
    format!(
        "endpoint 0 is the client's own, used by any thread through the client itself, and cannot be owned; {others}"
    )
}

/// What to do when a provider's address vector is too small.
fn av_hint(provider: &str, count: usize) -> String {
    // shm's region has room for SMR_MAX_PEERS (256) peers (libfabric 1.17
    // and 2.1): fi_av_open with a larger count fails with -FI_ENOSYS.
    const SHM_MAX_PEERS: usize = 256;
    if provider.split(';').next() == Some("shm") && count > SHM_MAX_PEERS {
        format!(
            "; the shm provider holds at most {SHM_MAX_PEERS} addresses ({} ranks of one \
             endpoint set on a host): keep the shared-memory path on for every rank \
             (GASNET_SUPERNODE_MAXSIZE=0, the default, without GASNET_OFI_ATOMICS=native \
             or GASNET_OFI_COLL_RMA=on: the address vector then holds this rank's own \
             endpoints only), run fewer ranks per host, or use another provider \
             (FI_PROVIDER=tcp)",
            SHM_MAX_PEERS / 2
        )
    } else {
        String::new()
    }
}

impl From<rma::vis::Error> for Error {
    fn from(e: rma::vis::Error) -> Self {
        Error::Vis(Box::new(e))
    }
}
