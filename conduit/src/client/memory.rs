//! What the conduit itself holds in memory, by purpose, for
//! [`crate::client::Client::memory_use`] (gex-bench and
//! docs/PERFORMANCE.md compare it with the resident set size).

use serde::{Deserialize, Serialize};

/// Bytes the conduit allocated, by purpose. These are allocations, not
/// resident pages: a page counts in the resident set size once touched.
/// The provider's own buffers (e.g. ofi_rxm's receive pools) and the
/// program's code and libraries are not included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryUse {
    /// AM receive buffers posted to the provider
    /// (`GASNET_OFI_NUM_RECEIVE_BUFFS` x `GASNET_OFI_RECEIVE_BUFF_SIZE`).
    pub receive_buffers: usize,
    /// Request send buffers allocated so far (they grow on demand up to
    /// `GASNET_OFI_MAX_REQUEST_BUFFS`), x their size.
    pub request_buffers: usize,
    /// Reply send buffers allocated so far, x their size.
    pub reply_buffers: usize,
    /// RMA bounce buffers (`GASNET_OFI_NUM_BBUFS` x `GASNET_OFI_BBUF_SIZE`).
    pub bounce_buffers: usize,
    /// Get bounce buffers, where `GASNET_OFI_GET_BOUNCE` turned them on
    /// (4 x (256 KiB + 4 KiB); resident only once gets have used them).
    #[serde(default)]
    pub get_bounce_buffers: usize,
    /// The address table: the transport's `fi_addr_t`s (one per endpoint
    /// of every rank: 2 per rank and endpoint set) and every rank's
    /// segment description.
    pub address_table: usize,
    /// Endpoint names gathered at start-up (2 per rank and endpoint set),
    /// kept while the address vector is filled, then freed.
    pub names_at_startup: usize,
    /// This rank's segment (a shared-memory mapping, counted as shared
    /// memory; or, where `GASNET_OFI_SEGMENT_HUGEPAGES` put it in huge
    /// pages, anonymous memory; resident only where touched, 2 MiB at a
    /// time in huge pages).
    pub segment: usize,
}

impl MemoryUse {
    /// Everything but the segment.
    pub fn private_total(&self) -> usize {
        self.receive_buffers
            + self.request_buffers
            + self.reply_buffers
            + self.bounce_buffers
            + self.get_bounce_buffers
            + self.address_table
    }
}

/// What `core` holds.
pub(crate) fn memory_use<M: crate::sync::Mode, T: crate::transport::Transport, S>(
    core: &super::engine::Core<M, T, S>,
) -> MemoryUse {
    use crate::sync::Lock;
    let mut m = MemoryUse::default();
    for s in core.sets.iter() {
        m.receive_buffers += s.recv_mem.len();
        m.request_buffers += s.pools[0].lock().allocated() * s.send_bytes;
        m.reply_buffers += s.pools[1].lock().allocated() * s.send_bytes;
    }
    m.bounce_buffers = core.bounce.as_ref().map_or(0, |b| b.mem.len());
    m.get_bounce_buffers = core.get_bounce.as_ref().map_or(0, |b| b.mem.len());
    m.address_table = core.tp.address_entries() * std::mem::size_of::<crate::ofi::FiAddr>();
    if let Some(g) = core.segment.get() {
        m.address_table += g.peers.len() * core.size * std::mem::size_of::<super::SegmentInfo>();
        m.segment = g.len();
    }
    m.names_at_startup = core.names_at_startup;
    m
}
