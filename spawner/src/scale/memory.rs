//! The memory a rank holds as the job grows: what the conduit, the
//! bootstrap and the provider (tcp;ofi_rxm, what a multi-host job on
//! Ethernet uses) allocate per rank of the job, and what does not grow.
//!
//! Each item says where its size comes from ([`Source`]): the code (the
//! formula is the code's), a measurement on the development machine, or an
//! estimate.

use super::timeline::SEGMENT_RECORD;
use super::{Params, ENDPOINTS_PER_SET};

/// Where an item's size comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The formula follows the code (named in the item).
    Code,
    /// Measured on the development machine (docs/launching.md says how).
    Measured,
    /// An estimate (docs/launching.md says from what).
    Estimated,
}

impl Source {
    /// Short label for the table.
    pub fn label(self) -> &'static str {
        match self {
            Source::Code => "code",
            Source::Measured => "measured",
            Source::Estimated => "estimated",
        }
    }
}

/// How an item is held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Held for the whole job.
    Persistent,
    /// Held during start-up only.
    Startup,
    /// Grows with the peers a rank has sent to or heard from.
    PerConnection,
}

/// One item of a rank's memory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Item {
    /// What it is.
    pub what: &'static str,
    /// Bytes.
    pub bytes: f64,
    /// Whether it lasts.
    pub kind: Kind,
    /// Where the size comes from.
    pub source: Source,
}

/// Bytes of an `fi_addr_t` (conduit/src/client/memory.rs, `address_table`).
const FI_ADDR: usize = 8;
/// Bytes per address in a tcp;ofi_rxm address vector: the util AV entry
/// (hash handle, address, context), the peer record, the red-black tree
/// node. Measured: RSS after inserting 30,000 addresses, 309 B (1.17) and
/// 311 B (2.1) each.
const RXM_AV_PER_ADDRESS: f64 = 310.0;
/// One tcp;ofi_rxm connection at one end: two 9,000-byte socket staging
/// queues (`OFI_BYTEQ_SIZE`) and the endpoint records. Measured: RSS of an
/// endpoint that connected to 100 and then 400 peers, 18.8 KiB per
/// connection with 1.17 and 2.1. One file descriptor each.
pub const RXM_PER_CONNECTION: f64 = 18.8 * 1024.0;
/// ofi_rxm's pools as the tcp;ofi_rxm profile sizes them
/// (`FI_OFI_RXM_BUFFER_SIZE=1024`, ...): anonymous memory after start-up of
/// a 2-rank `gex-bench` over tcp;ofi_rxm less the same over shm, 6,648
/// against 3,868 KiB (libfabric 1.17, 2026-11-29). With libfabric 1.17's
/// defaults the pool was 205 MB (docs/PERFORMANCE.md).
const RXM_POOLS: f64 = (6648.0 - 3868.0) * 1024.0;
/// Connections a rank holds to each peer it exchanges AMs and RMA with:
/// its requests (its reply endpoint to the peer's request endpoint, the
/// peer's replies coming back on it), the peer's requests, and RMA between
/// the two reply endpoints.
const CONNECTIONS_PER_PEER: usize = 3;
/// A glibc heap chunk for an allocation of `n` bytes (16-byte granules,
/// 8 bytes of header, at least 32).
fn chunk(n: usize) -> usize {
    (n + 8).div_ceil(16).max(2) * 16
}

/// What a rank of `p`'s job holds, item by item.
pub fn per_rank(p: &Params) -> Vec<Item> {
    use Kind::*;
    use Source::*;
    let n = p.n;
    let nf = n as f64;
    let blob = p.names_blob();
    let addresses = ENDPOINTS_PER_SET * n;
    let hosts = p.hosts as f64;
    // The names allgather at a rank (bootstrap/src/tcp.rs): the down frame,
    // then the decoded result, one Vec per rank; the conduit then borrows
    // every name (`Vec<&[u8]>`) while it fills the address vector.
    let frame = 4 + 9 + 4 + n * (4 + blob);
    let decoded = n * (24 + chunk(blob));
    let borrowed = addresses * 16;
    vec![
        Item {
            what: "conduit address table: 2 `fi_addr_t` per rank",
            bytes: (addresses * FI_ADDR) as f64,
            kind: Persistent,
            source: Code,
        },
        Item {
            what: "conduit segment table: base, size, key per rank",
            bytes: (n * SEGMENT_RECORD) as f64,
            kind: Persistent,
            source: Code,
        },
        Item {
            what: "host map: host of each rank, ranks of each host",
            bytes: 16.0 * nf + hosts * (48.0 + p.conduit.host_name_len as f64),
            kind: Persistent,
            source: Code,
        },
        Item {
            what: "tcp;ofi_rxm address vector: 2 addresses per rank",
            bytes: addresses as f64 * RXM_AV_PER_ADDRESS,
            kind: Persistent,
            source: Measured,
        },
        Item {
            what: "names allgather: down frame, decoded names, borrowed names",
            bytes: (frame + decoded + borrowed) as f64,
            kind: Startup,
            source: Code,
        },
        Item {
            what: "rank 0 only: gathered entries and slot table",
            bytes: nf * (8.0 + blob as f64 + 16.0),
            kind: Startup,
            source: Code,
        },
        Item {
            what: "tcp;ofi_rxm connections, all-to-all: 3 (N-1) of them",
            bytes: (CONNECTIONS_PER_PEER * (n - 1)) as f64 * RXM_PER_CONNECTION,
            kind: PerConnection,
            source: Measured,
        },
    ]
}

/// Memory that does not depend on N, per rank: (what, bytes, source).
pub fn constant() -> [(&'static str, f64, Source); 4] {
    [
        (
            "conduit AM receive buffers (8 x 1 MiB)",
            8.0 * 1048576.0,
            Source::Code,
        ),
        (
            "conduit AM send pools (2 x 256 of 8,280 B; grow to 1,024)",
            2.0 * 256.0 * 8280.0,
            Source::Code,
        ),
        (
            "conduit bounce buffers (64 x 4 KiB)",
            262144.0,
            Source::Code,
        ),
        (
            "ofi_rxm pools, as the tcp;ofi_rxm profile sizes them",
            RXM_POOLS,
            Source::Measured,
        ),
    ]
}

/// Sum of the items of one kind.
pub fn total(items: &[Item], kind: Kind) -> f64 {
    items
        .iter()
        .filter(|i| i.kind == kind)
        .map(|i| i.bytes)
        .sum()
}
