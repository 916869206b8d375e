//! Names (and the conduit's values) of the libfabric `FI_*` variables the
//! conduit reads or sets in its own environment before `fi_getinfo`.
//!
//! Only `FI_PROVIDER` is read into [`super::Config`]; the others are set by
//! the fabric setup code (never replacing a value the user set), and are
//! listed here so that every module uses the same names and values and so
//! that `docs/environment.md` can be checked against the code.

/// libfabric's provider filter; recorded in [`super::GeneralConfig::fi_provider`].
pub const FI_PROVIDER: &str = "FI_PROVIDER";
/// Number of peers the provider should expect; set to the job size when
/// `GASNET_OFI_SET_UNIVERSE_SIZE` allows it and the user has not set it.
pub const FI_UNIVERSE_SIZE: &str = "FI_UNIVERSE_SIZE";
/// Memory-registration cache size limit; set to [`MR_CACHE_UNLIMITED`] for
/// cxi and verbs (bug 4676). An empty value asks the conduit to unset it.
pub const FI_MR_CACHE_MAX_SIZE: &str = "FI_MR_CACHE_MAX_SIZE";
/// Memory-registration cache entry limit; treated like
/// [`FI_MR_CACHE_MAX_SIZE`].
pub const FI_MR_CACHE_MAX_COUNT: &str = "FI_MR_CACHE_MAX_COUNT";
/// cxi receive matching mode; set to [`CXI_RX_MATCH_MODE_VALUE`].
pub const FI_CXI_RX_MATCH_MODE: &str = "FI_CXI_RX_MATCH_MODE";
/// cxi rendezvous threshold; set to [`CXI_RDZV_THRESHOLD_VALUE`].
pub const FI_CXI_RDZV_THRESHOLD: &str = "FI_CXI_RDZV_THRESHOLD";
/// cxi rendezvous get minimum; set to [`CXI_RDZV_GET_MIN_VALUE`].
pub const FI_CXI_RDZV_GET_MIN: &str = "FI_CXI_RDZV_GET_MIN";
/// shm's switch for cross-memory attach: read (never set) by the conduit,
/// whose `GASNET_OFI_GET_BOUNCE=auto` stays off when it turns CMA off.
pub const FI_SHM_DISABLE_CMA: &str = "FI_SHM_DISABLE_CMA";
/// psm2 lazy connection; set to [`PSM2_LAZY_CONN_VALUE`] (psm2 only).
pub const FI_PSM2_LAZY_CONN: &str = "FI_PSM2_LAZY_CONN";

/// ofi_rxm's bounce-buffer size (tcp;ofi_rxm profile: 1024).
pub const FI_OFI_RXM_BUFFER_SIZE: &str = "FI_OFI_RXM_BUFFER_SIZE";
/// ofi_rxm's eager limit with dynamic receive buffers, libfabric 1.x
/// (tcp;ofi_rxm profile: the largest AM).
pub const FI_OFI_RXM_EAGER_LIMIT: &str = "FI_OFI_RXM_EAGER_LIMIT";
/// ofi_rxm's segmented-protocol limit, libfabric 2.x (tcp;ofi_rxm profile:
/// the largest AM).
pub const FI_OFI_RXM_SAR_LIMIT: &str = "FI_OFI_RXM_SAR_LIMIT";
/// Receives ofi_rxm posts on its shared receive context (tcp;ofi_rxm
/// profile: 512).
pub const FI_OFI_RXM_MSG_RX_SIZE: &str = "FI_OFI_RXM_MSG_RX_SIZE";
/// ofi_rxm's send credits per endpoint (tcp;ofi_rxm profile: 1024).
pub const FI_OFI_RXM_TX_SIZE: &str = "FI_OFI_RXM_TX_SIZE";
/// libfabric 2.x tcp's receive data buffer (tcp;ofi_rxm profile: 256).
pub const FI_TCP_MAX_RX_SIZE: &str = "FI_TCP_MAX_RX_SIZE";

/// Packets ofi_rxd sends to a peer before an acknowledgement (udp;ofi_rxd
/// profile: [`RXD_MAX_UNACKED_VALUE`]; rxd's own 128 overflows a receiver's
/// socket buffer, known-issues.md).
pub const FI_OFI_RXD_MAX_UNACKED: &str = "FI_OFI_RXD_MAX_UNACKED";
/// The value the udp;ofi_rxd profile writes to [`FI_OFI_RXD_MAX_UNACKED`].
pub const RXD_MAX_UNACKED_VALUE: &str = "16";

/// The variables the tcp;ofi_rxm profile sets (`providers.toml`), to size
/// rxm's pools for the job.
pub const RXM_POOL_SETTINGS: [&str; 6] = [
    FI_OFI_RXM_BUFFER_SIZE,
    FI_OFI_RXM_EAGER_LIMIT,
    FI_OFI_RXM_SAR_LIMIT,
    FI_OFI_RXM_MSG_RX_SIZE,
    FI_OFI_RXM_TX_SIZE,
    FI_TCP_MAX_RX_SIZE,
];

/// The value written to `FI_MR_CACHE_MAX_{SIZE,COUNT}`: no limit.
pub const MR_CACHE_UNLIMITED: &str = "-1";
/// The value written to `FI_CXI_RX_MATCH_MODE`.
pub const CXI_RX_MATCH_MODE_VALUE: &str = "hybrid";
/// The value written to `FI_CXI_RDZV_THRESHOLD`.
pub const CXI_RDZV_THRESHOLD_VALUE: &str = "256";
/// The value written to `FI_CXI_RDZV_GET_MIN`.
pub const CXI_RDZV_GET_MIN_VALUE: &str = "256";
/// The value written to `FI_PSM2_LAZY_CONN`.
pub const PSM2_LAZY_CONN_VALUE: &str = "1";

/// The cxi settings the conduit applies when they are not already set, as
/// `(name, value)` pairs.
pub const CXI_SETTINGS: [(&str, &str); 3] = [
    (FI_CXI_RX_MATCH_MODE, CXI_RX_MATCH_MODE_VALUE),
    (FI_CXI_RDZV_THRESHOLD, CXI_RDZV_THRESHOLD_VALUE),
    (FI_CXI_RDZV_GET_MIN, CXI_RDZV_GET_MIN_VALUE),
];
