//! Statistics counters.

use crate::sync::Counter;

/// Counters, readable with `Client::stats()` and written at exit to
/// `GASNET_STATSFILE`, summed over the client's endpoints. Index `[kind]`
/// is Short, Medium, Long.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AmStats {
    /// Requests sent per kind.
    pub requests_sent: [u64; 3],
    /// Replies sent per kind.
    pub replies_sent: [u64; 3],
    /// Requests received per kind (client handlers only).
    pub requests_received: [u64; 3],
    /// Replies received per kind.
    pub replies_received: [u64; 3],
    /// Messages sent with `fi_inject`.
    pub injected: u64,
    /// Messages sent with `fi_send` from a pool buffer.
    pub sent_from_buffer: u64,
    /// Long payloads moved by RMA before their header.
    pub long_rma: u64,
    /// Long payloads carried inside the message.
    pub long_inline: u64,
    /// Longs sent in one message (payload and header in one write with
    /// remote CQ data, `am::landing`).
    pub long_landed: u64,
    /// Longs that would have gone in one message but found no free
    /// landing slot at the destination (sent put-then-send).
    pub long_landing_waits: u64,
    /// Longs received in one message (landings handled).
    pub landings_received: u64,
    /// Landing-slot credit reports sent back to senders.
    pub landing_credits_sent: u64,
    /// Landing slots this rank voided at their destination (their write
    /// failed).
    pub landing_voids_sent: u64,
    /// Landing slots senders voided here.
    pub landing_voids_received: u64,
    /// Request buffers allocated (initial plus grown).
    pub request_buffers: u64,
    /// Reply buffers allocated.
    pub reply_buffers: u64,
    /// Queue reads that returned completions.
    pub cq_reads: u64,
    /// Completions read.
    pub completions: u64,
    /// -FI_EAGAIN answers that were retried.
    pub eagain_retries: u64,
    /// Receive buffers reposted.
    pub reposts: u64,
    /// Receive posts without FI_MULTI_RECV after the provider had no
    /// receive entry for a multi-receive post (`am::recv`).
    pub rescue_posts: u64,
    /// Multi-receive buffers whose release arrived before all of their
    /// messages had (`am::recv`).
    pub early_releases: u64,
    /// AMs sent to this rank itself (delivered by the next poll, without
    /// the provider).
    pub loopback: u64,
    /// AMs sent through shared memory to a rank of this supernode.
    pub shared_sent: u64,
    /// Of those, requests sent through the pair's lane and replies written
    /// in place of their request (`conduit::pshm::lane`).
    pub shared_lane: u64,
    /// Puts, gets and AM Long payloads done as memory copies into or out
    /// of a supernode peer's segment.
    pub shared_rma: u64,
    /// CPU yields made by wait loops ([`crate::client::WaitMode::Yield`]).
    pub wait_yields: u64,
    /// Atomic operations posted to the provider (`fi_fetch_atomic`,
    /// `fi_compare_atomic`).
    pub atomic_native: u64,
    /// Atomic operations sent by Active Message.
    pub atomic_am: u64,
    /// VIS RMA calls carrying several pieces (`fi_writemsg` /
    /// `fi_readmsg` with several iovs).
    pub vis_iov_calls: u64,
    /// VIS AMs carrying packed pieces.
    pub vis_packed: u64,
    /// AMs carrying aggregated implicit puts (`NB_PUT_AGGREGATE` counts
    /// the puts).
    pub put_batches: u64,
    /// Collective chunks copied into a supernode peer's collective cache.
    pub coll_cache_local: u64,
    /// Collective chunks written into a peer's collective cache by RMA.
    pub coll_cache_rma: u64,
    /// Contributions to small reductions to all posted on this rank's
    /// board (a team that shares memory), where the others read them;
    /// broadcasts this rank posted there as their root included.
    pub coll_board: u64,
    /// Of those, broadcasts this rank posted as their root (each read in
    /// place by every other member).
    pub coll_board_bcast: u64,
    /// Blocking reductions to all through the boards, and blocking
    /// broadcasts posted on a root's board, that ran at once in the
    /// caller's loop (nothing else of the team in flight here), without a
    /// collective's machinery; their posts count in `coll_board` (and
    /// `coll_board_bcast`) too.
    pub coll_board_now: u64,
    /// Rounds of progress run once every `GASNET_OFI_RMA_POLL_FREQ` RMA
    /// posts, before the post (on the queues RMA completions arrive on).
    pub rma_post_polls: u64,
    /// Gets started through the get bounce buffers (`GASNET_OFI_GET_BOUNCE`:
    /// their destination 1 to 63 bytes after the source within a page),
    /// failed ones included.
    pub get_bounce: u64,
    /// Transfers of gets that waited for room in their peer's get window
    /// (`GASNET_OFI_GET_WINDOW`) before they were posted.
    pub get_window_waits: u64,
}

impl AmStats {
    /// The report written to `GASNET_STATSFILE`.
    pub fn report(&self, rank: usize) -> String {
        let k = ["SHORT", "MEDIUM", "LONG"];
        let mut s = format!("# ofi-conduit statistics, rank {rank}\n");
        for (i, name) in k.iter().enumerate() {
            s.push_str(&format!(
                "AM_REQUEST_{name}_SENT {}\n",
                self.requests_sent[i]
            ));
            s.push_str(&format!("AM_REPLY_{name}_SENT {}\n", self.replies_sent[i]));
            s.push_str(&format!(
                "AM_REQUEST_{name}_RECEIVED {}\n",
                self.requests_received[i]
            ));
            s.push_str(&format!(
                "AM_REPLY_{name}_RECEIVED {}\n",
                self.replies_received[i]
            ));
        }
        s.push_str(&format!(
            "AM_INJECT {}\nAM_SEND_BUFFERED {}\n",
            self.injected, self.sent_from_buffer
        ));
        s.push_str(&format!(
            "AM_LONG_RMA {}\nAM_LONG_INLINE {}\n",
            self.long_rma, self.long_inline
        ));
        s.push_str(&format!(
            "AM_LONG_LANDED {}\nAM_LONG_LANDING_WAITS {}\nAM_LANDINGS_RECEIVED {}\nAM_LANDING_CREDITS_SENT {}\n",
            self.long_landed, self.long_landing_waits, self.landings_received, self.landing_credits_sent
        ));
        s.push_str(&format!(
            "AM_LANDING_VOIDS_SENT {}\nAM_LANDING_VOIDS_RECEIVED {}\n",
            self.landing_voids_sent, self.landing_voids_received
        ));
        s.push_str(&format!(
            "ALLOC_REQ_BUFF {}\nALLOC_REP_BUFF {}\n",
            self.request_buffers, self.reply_buffers
        ));
        s.push_str(&format!(
            "CQ_READS {}\nCQ_COMPLETIONS {}\nEAGAIN_RETRIES {}\nRECV_REPOSTS {}\n",
            self.cq_reads, self.completions, self.eagain_retries, self.reposts
        ));
        s.push_str(&format!(
            "RECV_RESCUE_POSTS {}\nRECV_EARLY_RELEASES {}\n",
            self.rescue_posts, self.early_releases
        ));
        s.push_str(&format!("AM_LOOPBACK {}\n", self.loopback));
        s.push_str(&format!(
            "AM_SHARED {}\nAM_SHARED_LANE {}\nRMA_SHARED {}\n",
            self.shared_sent, self.shared_lane, self.shared_rma
        ));
        s.push_str(&format!("WAIT_YIELDS {}\n", self.wait_yields));
        s.push_str(&format!(
            "ATOMIC_NATIVE {}\nATOMIC_AM {}\nVIS_IOV_CALLS {}\nVIS_PACKED {}\n",
            self.atomic_native, self.atomic_am, self.vis_iov_calls, self.vis_packed
        ));
        s.push_str(&format!("PUT_BATCHES {}\n", self.put_batches));
        s.push_str(&format!(
            "COLL_CACHE_LOCAL {}\nCOLL_CACHE_RMA {}\nCOLL_BOARD {}\nCOLL_BOARD_BCAST {}\nCOLL_BOARD_NOW {}\n",
            self.coll_cache_local,
            self.coll_cache_rma,
            self.coll_board,
            self.coll_board_bcast,
            self.coll_board_now
        ));
        s.push_str(&format!("RMA_POST_POLLS {}\n", self.rma_post_polls));
        s.push_str(&format!("GET_BOUNCE {}\n", self.get_bounce));
        s.push_str(&format!("GET_WINDOW_WAITS {}\n", self.get_window_waits));
        s
    }
}

/// One endpoint set's counters (cells single-threaded, relaxed atomics
/// multi-threaded).
#[derive(Debug, Default)]
pub(crate) struct SetStats<C: Counter> {
    pub requests_sent: [C; 3],
    pub replies_sent: [C; 3],
    pub requests_received: [C; 3],
    pub replies_received: [C; 3],
    pub injected: C,
    pub sent_from_buffer: C,
    pub long_rma: C,
    pub long_inline: C,
    pub long_landed: C,
    pub long_landing_waits: C,
    pub landings_received: C,
    pub landing_credits_sent: C,
    pub cq_reads: C,
    pub completions: C,
    pub eagain_retries: C,
    pub loopback: C,
    pub put_inject: C,
    pub put_bounce: C,
    pub put_block: C,
    pub put_aggregate: C,
    pub put_batches: C,
    pub shared_sent: C,
    pub shared_rma: C,
    pub atomic_native: C,
    pub atomic_am: C,
    pub vis_iov_calls: C,
    pub vis_packed: C,
    pub coll_cache_local: C,
    pub coll_cache_rma: C,
    pub coll_board: C,
    pub coll_board_bcast: C,
    pub coll_board_now: C,
    pub rma_post_polls: C,
    // Cold counters last: the hot ones keep their places.
    pub landing_voids_sent: C,
    pub landing_voids_received: C,
    pub get_bounce: C,
    pub get_window_waits: C,
    pub shared_lane: C,
}

impl<C: Counter> SetStats<C> {
    /// Add this set's counters to `s`.
    pub fn add_to(&self, s: &mut AmStats) {
        for i in 0..3 {
            s.requests_sent[i] += self.requests_sent[i].get();
            s.replies_sent[i] += self.replies_sent[i].get();
            s.requests_received[i] += self.requests_received[i].get();
            s.replies_received[i] += self.replies_received[i].get();
        }
        s.injected += self.injected.get();
        s.sent_from_buffer += self.sent_from_buffer.get();
        s.long_rma += self.long_rma.get();
        s.long_inline += self.long_inline.get();
        s.long_landed += self.long_landed.get();
        s.long_landing_waits += self.long_landing_waits.get();
        s.landings_received += self.landings_received.get();
        s.landing_credits_sent += self.landing_credits_sent.get();
        s.landing_voids_sent += self.landing_voids_sent.get();
        s.landing_voids_received += self.landing_voids_received.get();
        s.cq_reads += self.cq_reads.get();
        s.completions += self.completions.get();
        s.eagain_retries += self.eagain_retries.get();
        s.loopback += self.loopback.get();
        s.shared_sent += self.shared_sent.get();
        s.shared_lane += self.shared_lane.get();
        s.shared_rma += self.shared_rma.get();
        s.atomic_native += self.atomic_native.get();
        s.atomic_am += self.atomic_am.get();
        s.vis_iov_calls += self.vis_iov_calls.get();
        s.vis_packed += self.vis_packed.get();
        s.put_batches += self.put_batches.get();
        s.coll_cache_local += self.coll_cache_local.get();
        s.coll_cache_rma += self.coll_cache_rma.get();
        s.coll_board += self.coll_board.get();
        s.coll_board_bcast += self.coll_board_bcast.get();
        s.coll_board_now += self.coll_board_now.get();
        s.rma_post_polls += self.rma_post_polls.get();
        s.get_bounce += self.get_bounce.get();
        s.get_window_waits += self.get_window_waits.get();
    }
}

/// Index of a kind in the per-kind counters.
pub(crate) fn kind_index(k: am::wire::Kind) -> usize {
    use am::wire::Kind;
    match k {
        Kind::Short => 0,
        Kind::Medium => 1,
        Kind::Long | Kind::LongInline => 2,
    }
}
