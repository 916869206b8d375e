//! The shared-memory path between ranks of one host (GASNet's PSHM).
//!
//! The ranks of a host that share a kernel form supernodes (at most
//! `GASNET_SUPERNODE_MAXSIZE` ranks each; 0 = all of the host, 1 = off).
//! Within a supernode:
//!
//! * **Active Messages** travel through rings in shared memory
//!   ([`ring`]): each rank owns an *inbox* holding one ring per endpoint
//!   set, side (request, reply) and sending peer; a sender writes the
//!   encoded message into its ring of the receiver's inbox, the receiver's
//!   progress call reads it and runs the handler on the bytes in place. A
//!   full ring makes the sender make progress and retry (backpressure, no
//!   loss); requests and replies have separate rings, so a rank waiting to
//!   send a reply can always drain the replies sent to it.
//! * **Segments** are mapped by every peer at attach, so puts, gets and AM
//!   Long payloads are memory copies with no provider involved.
//!
//! Memory: every inbox and segment is a `memfd` (no name in any file
//! system, so nothing can be left in `/dev/shm`, even after `kill -9`).
//! Peers map it through `/proc/<pid>/fd/<fd>`, which the kernel lets only
//! processes of the same user (that may ptrace the owner) open.
//!
//! Ranks on other hosts, or in other supernodes, go through the provider
//! as before.

mod discovery;
pub mod lane;
pub mod ring;

use discovery::{check_inbox, kernel_identity, Published};
pub use discovery::{supernode_of, Neighbourhoods, Position, SEGMENT_RECORD};

use crate::client::Error;
use crate::config::Config;
use crate::mem::Mapping;
use crate::sync::{Lock, Mode};
use crate::transport::Side;
use lane::{Lane, Lanes, LANE_BYTES};
use ring::{footprint, Producer, Ring};
use std::sync::{Arc, OnceLock};

/// A peer's segment as mapped here.
pub(crate) struct PeerSegment {
    /// Where it is mapped in this process (this rank's own segment: its
    /// mapping).
    pub base: *mut u8,
    pub len: usize,
    /// Peers' mappings (kept for as long as the client lives).
    _map: Option<Mapping>,
}

/// The supernode's segments as one attach mapped them, not yet kept.
pub(crate) struct PeerSegments(Vec<PeerSegment>);

// SAFETY: an address of shared memory mapped for the client's life; the
// conduit only copies through it.
unsafe impl Send for PeerSegment {}
// SAFETY: as above.
unsafe impl Sync for PeerSegment {}

/// The shared-memory state of one rank.
pub(crate) struct Shared<M: Mode> {
    /// Job rank to its index in the supernode (`u32::MAX`: not in it).
    local_of: Box<[u32]>,
    /// Supernode members by index.
    pub members: Vec<usize>,
    /// This rank's index.
    pub me: usize,
    /// Whether every rank of the job is in this supernode.
    pub all_local: bool,
    /// Rings this rank reads: `[set * 2 + side]`, one per peer.
    rx: Box<[Box<[Ring]>]>,
    /// Rings this rank writes: `[(set * 2 + side) * members + index]`.
    tx: Box<[Ring]>,
    /// Producer state (in this process's memory) and lock, as `tx`.
    tx_lock: Box<[M::Lock<Producer>]>,
    /// Consumer try-locks, as `rx`.
    rx_lock: Box<[M::Lock<()>]>,
    /// Largest message a ring takes.
    pub largest: usize,
    /// The lanes of set 0, when every member uses them (single-threaded
    /// mode, `GASNET_OFI_PSHM_LANES` on everywhere).
    pub lanes: Option<Lanes>,
    /// This rank's inbox and the peers' (mapped for the client's life).
    _inboxes: Vec<Arc<Mapping>>,
    /// Segments by index, once attached.
    pub segments: OnceLock<Vec<PeerSegment>>,
}

/// A start-up setting every rank must give alike: the first rank whose
/// published value differs from this one's stops start-up, naming the
/// variable and both values.
fn same_everywhere(
    rank: usize,
    recs: &[Published],
    var: &str,
    value: impl Fn(&Published) -> u64,
) -> Result<(), Error> {
    let mine = value(&recs[rank]);
    match recs.iter().position(|p| value(p) != mine) {
        None => Ok(()),
        Some(r) => Err(Error::Config(crate::config::ConfigError::Conflict(
            gex_env::EnvError::new(
                var,
                &mine.to_string(),
                format!(
                    "the same value on every rank (rank {rank} has {mine}, rank {r} has {})",
                    value(&recs[r])
                ),
            ),
        ))),
    }
}

impl<M: Mode> Shared<M> {
    /// Discover the supernode, create this rank's inbox, map the peers'
    /// (collective: one exchange over the bootstrap). `None` when the path
    /// is off or this rank is alone in its supernode; with it, every rank's
    /// neighbourhood (each rank its own when the path is off).
    pub fn setup(
        boot: &dyn crate::boot::Bootstrap,
        cfg: &Config,
        sets: usize,
        largest: usize,
    ) -> Result<(Option<Shared<M>>, Neighbourhoods), Error> {
        let (rank, size) = (boot.rank(), boot.size());
        let maxsize = cfg.pshm.supernode_maxsize;
        let cap = cfg
            .pshm
            .ring_bytes(largest, ring::min_capacity(ring::record_len(largest)))
            .map_err(Error::Config)?;
        let hosts = boot.hosts();
        let host_ranks = hosts.local_ranks().to_vec();
        // Rings for every rank this one could share a supernode with.
        let slots = if maxsize == 0 {
            host_ranks.len()
        } else {
            host_ranks.len().min(maxsize)
        };
        let kernel = kernel_identity();
        let want = cfg.pshm.enabled() && slots > 1;
        let inbox = if want {
            // The rings, then a lane per sender.
            let len = sets * 2 * slots * footprint(cap) + slots * LANE_BYTES;
            Some(Arc::new(Mapping::memfd(len, "gasnet-ofi-inbox").map_err(
                |e| Error::map("the shared-memory AM inbox", len, e),
            )?))
        } else {
            None
        };
        let mine = Published {
            kernel,
            pid: std::process::id(),
            fd: inbox.as_ref().and_then(|m| m.fd()).unwrap_or(-1),
            maxsize: maxsize as u32,
            slots: slots as u32,
            cap: cap as u64,
            len: inbox.as_ref().map_or(0, |m| m.len() as u64),
            max_medium: cfg.am.max_medium as u64,
            sets: sets as u32,
            coll_pages: cfg.extended.coll_cache_pages as u64,
            lanes: u32::from(cfg.pshm.lanes && !M::PAR),
        };
        let all = boot.allgather(&mine.to_bytes())?;
        let mut recs = Vec::with_capacity(size);
        for (r, b) in all.iter().enumerate() {
            recs.push(Published::from_bytes(b).ok_or(Error::Published {
                rank: r,
                what: "shared-memory record",
            })?);
        }
        if let Some(r) = recs.iter().position(|p| p.maxsize != mine.maxsize) {
            return Err(Error::Pshm(format!(
                "{}={} on rank {rank} but {} on rank {r}: every rank needs the same value",
                crate::config::pshm::SUPERNODE_MAXSIZE,
                mine.maxsize,
                recs[r].maxsize
            )));
        }
        // A larger Medium than a receiver sized its buffers and rings for
        // would be lost (the provider drops it) or overrun its ring; and
        // members with and without a collective cache would pair
        // different collectives under one sequence number.
        same_everywhere(rank, &recs, crate::config::am::MAX_MEDIUM, |p| p.max_medium)?;
        same_everywhere(
            rank,
            &recs,
            crate::config::extended::COLL_CACHE_PAGES,
            |p| p.coll_pages,
        )?;
        // A peer's inbox has rings for its own sets only (and its address
        // table entries for them): a rank with more would write past it.
        if let Some(r) = recs.iter().position(|p| p.sets != mine.sets) {
            return Err(Error::EndpointSetsDiffer {
                rank,
                sets: mine.sets as usize,
                other: r,
                other_sets: recs[r].sets as usize,
            });
        }
        let kernels: Vec<[u64; 2]> = recs.iter().map(|p| p.kernel).collect();
        let nbrhds = if cfg.pshm.enabled() {
            let of_host = |r: usize| {
                hosts
                    .host_of(r)
                    .map(|h| hosts.ranks_on_host(h).to_vec())
                    .unwrap_or_else(|| vec![r])
            };
            Neighbourhoods::grouped(&of_host, &kernels, maxsize)
        } else {
            Neighbourhoods::singletons(size)
        };
        let Some(inbox) = inbox else {
            return Ok((None, nbrhds));
        };
        let members = supernode_of(rank, &host_ranks, &kernels, maxsize);
        if members.len() < 2 {
            return Ok((None, nbrhds));
        }
        let n = members.len();
        let me = members.iter().position(|&r| r == rank).unwrap_or(0);
        let mut local_of = vec![u32::MAX; size];
        for (i, &r) in members.iter().enumerate() {
            local_of[r] = i as u32;
        }
        let mut inboxes = Vec::with_capacity(n);
        let mut tx = Vec::with_capacity(sets * 2 * n);
        let mut peer_maps: Vec<Option<Arc<Mapping>>> = Vec::with_capacity(n);
        for &r in &members {
            if r == rank {
                peer_maps.push(Some(inbox.clone()));
                continue;
            }
            let p = recs[r];
            if (p.slots as usize) < n || p.fd < 0 {
                return Err(Error::Pshm(format!(
                    "rank {r} published an inbox for {} ranks, its supernode has {n}",
                    p.slots
                )));
            }
            check_inbox(r, &p, sets, largest)?;
            let m = Mapping::open_peer(p.pid, p.fd, p.len as usize).map_err(|e| {
                Error::Pshm(format!(
                    "rank {rank} cannot map the shared memory of rank {r} (/proc/{}/fd/{}: {e}); \
set {}=1 to turn the shared-memory path off",
                    p.pid,
                    p.fd,
                    crate::config::pshm::SUPERNODE_MAXSIZE
                ))
            })?;
            peer_maps.push(Some(Arc::new(m)));
        }
        // Ring (set, side, sender) of the inbox of member `owner`.
        let ring_at = |owner: usize, set: usize, side: usize, sender: usize| -> Ring {
            let p = recs[members[owner]];
            let (cap, slots) = (p.cap as usize, p.slots as usize);
            let idx = (set * 2 + side) * slots + sender;
            let m = peer_maps[owner].as_ref().unwrap_or(&inbox);
            // SAFETY: idx < sets * 2 * slots, so the ring lies inside the
            // inbox of sets * 2 * slots footprints (checked against the
            // file's size when mapped); footprints are multiples of 128
            // from a page-aligned start; the memory is a fresh file's
            // (zeroed) and lives as long as `inboxes`.
            unsafe { Ring::new(m.as_ptr().add(idx * footprint(cap)), cap) }
        };
        // Lane of `sender` in the inbox of member `owner`, after its rings.
        let lane_at = |owner: usize, sender: usize| -> Lane {
            let p = recs[members[owner]];
            let (cap, slots) = (p.cap as usize, p.slots as usize);
            let m = peer_maps[owner].as_ref().unwrap_or(&inbox);
            // SAFETY: sender < n <= slots, so the lane lies inside the
            // inbox of sets * 2 * slots ring footprints and slots lanes
            // (checked against the file's size when mapped); 128-byte
            // aligned; zeroed by the fresh file, alive as `inboxes`.
            unsafe {
                Lane::new(
                    m.as_ptr()
                        .add(sets * 2 * slots * footprint(cap) + sender * LANE_BYTES),
                )
            }
        };
        let lanes = members.iter().all(|&r| recs[r].lanes == 1).then(|| {
            Lanes::new(
                (0..n).map(|j| lane_at(me, j)).collect(),
                (0..n).map(|owner| lane_at(owner, me)).collect(),
            )
        });
        let mut rx = Vec::with_capacity(sets * 2);
        for set in 0..sets {
            for side in 0..2 {
                let rings: Vec<Ring> = (0..n)
                    .filter(|&j| j != me)
                    .map(|j| ring_at(me, set, side, j))
                    .collect();
                rx.push(rings.into_boxed_slice());
                for owner in 0..n {
                    tx.push(ring_at(owner, set, side, me));
                }
            }
        }
        for m in peer_maps.into_iter().flatten() {
            inboxes.push(m);
        }
        let tx_lock = (0..tx.len())
            .map(|_| M::Lock::new(Producer::default()))
            .collect();
        let rx_lock = (0..rx.len()).map(|_| M::Lock::new(())).collect();
        tracing::debug!(
            "shared-memory path: rank {rank} in a supernode of {n} ({members:?}), rings of {cap} bytes, lanes {}",
            if lanes.is_some() { "on" } else { "off" }
        );
        Ok((
            Some(Shared {
                local_of: local_of.into_boxed_slice(),
                all_local: n == size,
                members,
                me,
                rx: rx.into_boxed_slice(),
                tx: tx.into_boxed_slice(),
                tx_lock,
                rx_lock,
                largest,
                lanes,
                _inboxes: inboxes,
                segments: OnceLock::new(),
            }),
            nbrhds,
        ))
    }

    /// `rank`'s index in this supernode, when it is in it (this rank
    /// included: its own segment is reached by copies too).
    #[inline(always)]
    pub fn peer(&self, rank: usize) -> Option<usize> {
        match self.local_of.get(rank) {
            Some(&i) if i != u32::MAX => Some(i as usize),
            _ => None,
        }
    }

    /// Append a message of `len` bytes, written by `fill`, to the ring of
    /// peer `index` for `set` and `side`; `false` when the ring is full.
    #[inline]
    pub fn push(
        &self,
        set: usize,
        side: Side,
        index: usize,
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        let k = (set * 2 + side.index()) * self.members.len() + index;
        let mut p = self.tx_lock[k].lock();
        debug_assert!(len <= self.largest);
        // SAFETY: the lock makes this thread the ring's only producer in
        // this process, with the ring's one Producer, and only this process
        // writes this ring (it is this rank's ring in the peer's inbox);
        // len <= largest, and the ring's capacity is at least
        // min_capacity of the largest record (ring_bytes).
        unsafe { self.tx[k].push(&mut p, len, fill) }
    }

    /// The rings this rank reads for `set` and `side`, with their try-lock.
    #[inline(always)]
    pub fn inbox(&self, set: usize, side: Side) -> (&[Ring], &M::Lock<()>) {
        let k = set * 2 + side.index();
        (&self.rx[k], &self.rx_lock[k])
    }

    /// What this rank publishes about its segment (appended to the
    /// segment record of the attach exchange): pid, memory file, length.
    pub fn segment_record(own: &Mapping) -> [u8; SEGMENT_RECORD] {
        let mut b = [0u8; SEGMENT_RECORD];
        b[0..4].copy_from_slice(&std::process::id().to_le_bytes());
        b[4..8].copy_from_slice(&own.fd().unwrap_or(-1).to_le_bytes());
        b[8..16].copy_from_slice(&(own.len() as u64).to_le_bytes());
        b
    }

    /// Map every peer's segment from the records the attach exchange
    /// gathered (`records[rank]`, from [`Shared::segment_record`]); `own`
    /// is this rank's segment. Nothing is kept: [`Shared::set_segments`]
    /// keeps the result once every rank's attach could go on.
    pub(crate) fn map_segments(
        &self,
        records: &[&[u8]],
        own: &Mapping,
    ) -> Result<PeerSegments, Error> {
        let mut segs = Vec::with_capacity(self.members.len());
        for (i, &r) in self.members.iter().enumerate() {
            if i == self.me {
                segs.push(PeerSegment {
                    base: own.as_ptr(),
                    len: own.len(),
                    _map: None,
                });
                continue;
            }
            let b = records.get(r).copied().unwrap_or(&[]);
            let rec = (b.len() == SEGMENT_RECORD).then(|| {
                (
                    u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                    i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
                    u64::from_le_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]),
                )
            });
            let Some((pid, fd, len)) = rec.filter(|x| x.1 >= 0) else {
                return Err(Error::Published {
                    rank: r,
                    what: "shared segment record",
                });
            };
            let m = Mapping::open_peer(pid, fd, len as usize).map_err(|e| {
                Error::Pshm(format!(
                    "rank {} cannot map the segment of rank {r} (/proc/{pid}/fd/{fd}: {e})",
                    self.members[self.me]
                ))
            })?;
            segs.push(PeerSegment {
                base: m.as_ptr(),
                len: len as usize,
                _map: Some(m),
            });
        }
        Ok(PeerSegments(segs))
    }

    /// Keep the segments [`Shared::map_segments`] mapped (once: a client
    /// attaches one segment).
    pub(crate) fn set_segments(&self, segs: PeerSegments) -> Result<(), Error> {
        self.segments
            .set(segs.0)
            .map_err(|_| Error::SegmentAttached)
    }

    /// Where `rank`'s segment bytes `off..off+len` are mapped here, when
    /// `rank` is in this supernode (this rank included) and segments are
    /// attached. `Err` when the range is outside its segment.
    #[inline]
    pub fn segment_range(
        &self,
        rank: usize,
        off: usize,
        len: usize,
    ) -> Option<Result<*mut u8, Error>> {
        let i = self.peer(rank)?;
        let seg = self.segments.get()?.get(i)?;
        if off.checked_add(len).is_none_or(|e| e > seg.len) {
            return Some(Err(::rma::Error::OutOfSegment {
                rank,
                offset: off,
                len,
                size: seg.len,
            }
            .into()));
        }
        // SAFETY: off + len <= seg.len: inside the mapping.
        Some(Ok(unsafe { seg.base.add(off) }))
    }
}
