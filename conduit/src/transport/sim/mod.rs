//! A deterministic in-memory network for tests (cargo feature `sim`).
//!
//! A [`SimFabric`] is one job's network; each rank (a thread of the test
//! process) opens a [`SimTransport`] on it through [`SimFabric::network`]
//! and runs the real client engine over it. Like a NIC with manual
//! progress, the simulator moves data only when a rank calls into it:
//!
//! * a rank's sends and RMA transfers are queued when posted and carried
//!   out when that rank reads its TX queue (reading the source, or writing
//!   the destination of a get, then), after a delay of up to
//!   [`Faults::max_delay`] polls, in a shuffled order with
//!   [`Faults::reorder`]; with [`Faults::tx_on_reply`] the completion of
//!   an RMA transfer or a reply send is then reported on the reply receive
//!   queue;
//! * messages wait at their destination until it reads its receive queue;
//!   they are then matched to posted buffers (packed into multi-receive
//!   buffers with the `FI_MULTI_RECV` release when less than the minimum
//!   is left) and *written when their completion is delivered*, which may
//!   also be delayed and reordered. With [`Faults::early_release`] the
//!   completion that releases a buffer is delivered before the earlier
//!   messages placed in it, whose data then arrives later: the pattern of
//!   libfabric 1.17's tcp;ofi_rxm that corrupted AMs between hosts
//!   (known-issues.md). With [`Faults::bare_release`] the release is a
//!   completion of its own, without data, after the buffer's last message.
//!
//! Faults are injected from [`Faults`], changeable at any time with
//! [`SimFabric::set_faults`]: `-FI_EAGAIN` on any kind of post, `-FI_ENOMEM`
//! on multi-receive posts, error completions for sends and RMA transfers.
//! Each rank draws from its own seeded generator, so a rank's faults depend
//! only on its own sequence of calls.

mod state;
mod transport;

use super::{Context, ErrorCompletion, Facts, Network, OpenPlan, Region};
use crate::client::Error;
use crate::mem::Mapping;
use state::Fabric;
use std::sync::{Arc, Mutex, MutexGuard};

/// What the simulator does wrong, on purpose.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faults {
    /// Answer about one post in `n` with `-FI_EAGAIN` (0: never).
    pub eagain_one_in: u32,
    /// Delay each completion by up to this many polls of its queue.
    pub max_delay: u32,
    /// Deliver due completions in a shuffled order.
    pub reorder: bool,
    /// Answer the next this-many multi-receive posts with `-FI_ENOMEM`.
    pub nomem_multi_posts: u32,
    /// Fail the next this-many RMA transfers (error completion, no data).
    pub fail_rma: u32,
    /// Fail the next this-many sends (error completion, not delivered).
    pub fail_sends: u32,
    /// Report the next this-many messages placed in multi-receive buffers
    /// as error completions that say where their bytes were placed (a
    /// receive that failed after the provider took its room).
    pub fail_placed: u32,
    /// Deliver a multi-receive buffer's releasing completion before the
    /// earlier messages placed in the buffer.
    pub early_release: bool,
    /// Release a multi-receive buffer by a completion of its own (no
    /// data, `FI_MULTI_RECV` set) after its last message, as some
    /// providers do, instead of flagging the last message.
    pub bare_release: bool,
    /// `Some((rank, n))`: `rank`'s `n`th post from now (1: the next one)
    /// fails with an error other than -FI_EAGAIN.
    pub fail_post: Option<(usize, u32)>,
    /// `Some((rank, n))`: as `fail_post`, counting only `rank`'s message
    /// sends (send and inject), not its receive posts or RMA.
    pub refuse_send: Option<(usize, u32)>,
    /// After `refuse_send` fires, refuse this many further message sends
    /// of the same rank (its next ones) too.
    pub refuse_more: u32,
    /// Report RMA transfers and the reply side's sends (successes and
    /// failures) on the reply receive queue instead of the TX queue, as the
    /// libfabric transport does, whose reply endpoint carries RMA and is
    /// bound whole to the reply queue (not a fault: a placement the engine
    /// must accept as well).
    pub tx_on_reply: bool,
    /// Report the request side's sends on the reply receive queue and the
    /// reply side's on the TX queue, as the libfabric transport does for a
    /// profile with `am_paired_endpoints` (requests leave from the reply
    /// endpoint, replies from the request endpoint).
    pub am_paired: bool,
}

/// Network-wide settings fixed when the fabric is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimConfig {
    /// Ranks.
    pub ranks: usize,
    /// Largest transfer (transfers above are split by the engine).
    pub max_msg_size: usize,
    /// Remote addresses are virtual addresses (else offsets).
    pub virt_addr: bool,
    /// Seed of the ranks' generators.
    pub seed: u64,
    /// Writes carry remote CQ data, and a transfer moves up to two pieces
    /// (so the engine sends AM Longs in one message, `am::landing`, and
    /// VIS transfers pieces two at a time).
    pub remote_cq_data: bool,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            ranks: 2,
            max_msg_size: 1 << 16,
            virt_addr: false,
            seed: 1,
            remote_cq_data: false,
        }
    }
}

/// One job's simulated network.
#[derive(Debug)]
pub struct SimFabric {
    cfg: SimConfig,
    state: Mutex<Fabric>,
}

impl SimFabric {
    /// A network for `cfg.ranks` ranks, without faults.
    pub fn new(cfg: SimConfig) -> Arc<SimFabric> {
        Arc::new(SimFabric {
            state: Mutex::new(Fabric::new(cfg.ranks, cfg.seed)),
            cfg,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Fabric> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Change the faults.
    pub fn set_faults(&self, f: impl FnOnce(&mut Faults)) {
        f(&mut self.lock().faults);
    }

    /// The faults now (counters count down as they fire).
    pub fn faults(&self) -> Faults {
        self.lock().faults.clone()
    }

    /// What `rank` passes to the client's start-up.
    pub fn network(self: &Arc<Self>, rank: usize) -> SimNetwork {
        SimNetwork {
            fabric: self.clone(),
            rank,
        }
    }

    /// Transfers `rank` posted that have not been carried out, and the
    /// local memory each would still read or write (`(address, length)`).
    pub fn pending(&self, rank: usize) -> Vec<(usize, usize)> {
        self.lock().pending(rank)
    }

    /// Counters of what the simulator did.
    pub fn counts(&self) -> SimCounts {
        self.lock().counts
    }
}

/// Counters of the simulator.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimCounts {
    /// Posts answered with `-FI_EAGAIN`.
    pub eagain: u64,
    /// Multi-receive posts answered with `-FI_ENOMEM`.
    pub nomem: u64,
    /// Error completions generated.
    pub failed: u64,
    /// Releasing completions delivered before an earlier message of the
    /// same buffer.
    pub early_releases: u64,
    /// Messages delivered.
    pub delivered: u64,
    /// The most bytes of reads one rank had queued at once (all its
    /// endpoint sets), for the get window's tests.
    pub max_read_bytes_queued: u64,
}

/// What opens one rank's [`SimTransport`].
#[derive(Debug)]
pub struct SimNetwork {
    fabric: Arc<SimFabric>,
    rank: usize,
}

/// One rank's view of the simulated network.
#[derive(Debug)]
pub struct SimTransport {
    fabric: Arc<SimFabric>,
    rank: usize,
    facts: Facts,
}

/// A simulated memory region.
#[derive(Debug)]
pub struct SimRegion {
    key: u64,
    mem: Arc<Mapping>,
}

impl Region for SimRegion {
    type Desc = ();
    fn key(&self) -> u64 {
        self.key
    }
    fn desc(&self) {}
    fn memory(&self) -> &Arc<Mapping> {
        &self.mem
    }
}

impl Network for SimNetwork {
    type Transport = SimTransport;

    fn open(self, plan: &OpenPlan) -> Result<(SimTransport, Vec<u8>), Error> {
        self.fabric
            .lock()
            .open(self.rank, plan.sets, plan.min_multi_recv);
        let facts = Facts {
            provider: "sim".into(),
            max_msg_size: self.fabric.cfg.max_msg_size,
            mr_virt_addr: self.fabric.cfg.virt_addr,
            mr_endpoint: false,
            atomic: false,
            rma_iov_limit: if self.fabric.cfg.remote_cq_data { 2 } else { 1 },
            remote_cq_data: self.fabric.cfg.remote_cq_data,
        };
        Ok((
            SimTransport {
                fabric: self.fabric,
                rank: self.rank,
                facts,
            },
            (self.rank as u32).to_le_bytes().to_vec(),
        ))
    }
}

/// An error completion for `ctx`.
pub(crate) fn failure(ctx: Context, released: bool, what: &str) -> ErrorCompletion {
    ErrorCompletion {
        ctx: Some(ctx),
        err: ofi_sys::FI_EIO as i32,
        prov_errno: 0,
        text: format!("simulated failure of {what}"),
        released,
        placed: None,
    }
}
