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

pub mod ring;

use crate::client::Error;
use crate::config::Config;
use crate::mem::Mapping;
use crate::sync::{Lock, Mode};
use crate::transport::Side;
use ring::{footprint, Producer, Ring};
use std::sync::{Arc, OnceLock};

/// A rank's published shared-memory facts (one record of the start-up
/// exchange).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Published {
    /// Which kernel and pid namespace the rank runs in.
    kernel: [u64; 2],
    pid: u32,
    fd: i32,
    maxsize: u32,
    /// Senders the inbox has rings for.
    slots: u32,
    cap: u64,
    len: u64,
}

const RECORD: usize = 48;

/// Bytes of [`Shared::segment_record`].
pub const SEGMENT_RECORD: usize = 16;

impl Published {
    fn to_bytes(self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..8].copy_from_slice(&self.kernel[0].to_le_bytes());
        b[8..16].copy_from_slice(&self.kernel[1].to_le_bytes());
        b[16..20].copy_from_slice(&self.pid.to_le_bytes());
        b[20..24].copy_from_slice(&self.fd.to_le_bytes());
        b[24..28].copy_from_slice(&self.maxsize.to_le_bytes());
        b[28..32].copy_from_slice(&self.slots.to_le_bytes());
        b[32..40].copy_from_slice(&self.cap.to_le_bytes());
        b[40..48].copy_from_slice(&self.len.to_le_bytes());
        b
    }

    fn from_bytes(b: &[u8]) -> Option<Published> {
        if b.len() != RECORD {
            return None;
        }
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]));
        Some(Published {
            kernel: [u64_at(0), u64_at(8)],
            pid: u32_at(16),
            fd: u32_at(20) as i32,
            maxsize: u32_at(24),
            slots: u32_at(28),
            cap: u64_at(32),
            len: u64_at(40),
        })
    }
}

/// This kernel's boot id and this process's pid namespace: ranks whose
/// values differ cannot open each other's memory files.
fn kernel_identity() -> [u64; 2] {
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    // FNV-1a: a stable hash of the id's text.
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for b in boot.trim().bytes() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    let ns = std::fs::metadata("/proc/self/ns/pid")
        .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
        .unwrap_or(0);
    [h, ns]
}

/// The supernode of `rank` given each rank's host-local ranks (in rank
/// order, from the bootstrap's host map) and published kernel identity:
/// the ranks of the host with the same identity, cut into groups of
/// `maxsize` (0: one group). Every rank computes the same groups.
pub fn supernode_of(
    rank: usize,
    host_ranks: &[usize],
    kernel: &[[u64; 2]],
    maxsize: usize,
) -> Vec<usize> {
    let same: Vec<usize> = host_ranks
        .iter()
        .copied()
        .filter(|&r| kernel[r] == kernel[rank])
        .collect();
    let group = if maxsize == 0 {
        same.len().max(1)
    } else {
        maxsize
    };
    let at = same.iter().position(|&r| r == rank).unwrap_or(0);
    let start = at / group * group;
    same[start..(start + group).min(same.len())].to_vec()
}

/// Where this rank's neighbourhood (supernode) sits among the job's
/// (GASNet-EX's `gex_System_QueryMyPosition`): how many there are and the
/// index of this rank's, ordered by their lowest rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Neighbourhoods in the job.
    pub count: usize,
    /// This rank's neighbourhood.
    pub index: usize,
}

/// The neighbourhood position of `rank` when every rank of every host is
/// grouped as [`supernode_of`] does (`hosts[r]`: the ranks of `r`'s host).
pub fn position_of(
    rank: usize,
    hosts: &dyn Fn(usize) -> Vec<usize>,
    kernel: &[[u64; 2]],
    maxsize: usize,
) -> Position {
    let mut leaders: Vec<usize> = (0..kernel.len())
        .map(|r| supernode_of(r, &hosts(r), kernel, maxsize)[0])
        .collect();
    let mine = supernode_of(rank, &hosts(rank), kernel, maxsize)[0];
    leaders.sort_unstable();
    leaders.dedup();
    Position {
        count: leaders.len(),
        index: leaders.iter().position(|&l| l == mine).unwrap_or(0),
    }
}

/// A peer's segment as mapped here.
pub(crate) struct PeerSegment {
    /// Where it is mapped in this process (this rank's own segment: its
    /// mapping).
    pub base: *mut u8,
    pub len: usize,
    /// Peers' mappings (kept for as long as the client lives).
    _map: Option<Mapping>,
}

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
    /// This rank's inbox and the peers' (mapped for the client's life).
    _inboxes: Vec<Arc<Mapping>>,
    /// Segments by index, once attached.
    pub segments: OnceLock<Vec<PeerSegment>>,
}

impl<M: Mode> Shared<M> {
    /// Discover the supernode, create this rank's inbox, map the peers'
    /// (collective: one exchange over the bootstrap). `None` when the path
    /// is off or this rank is alone in its supernode; the position is this
    /// rank's neighbourhood's (each rank its own when the path is off).
    pub fn setup(
        boot: &dyn crate::boot::Bootstrap,
        cfg: &Config,
        sets: usize,
        largest: usize,
    ) -> Result<(Option<Shared<M>>, Position), Error> {
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
            let len = sets * 2 * slots * footprint(cap);
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
            return Err(Error::PshmSetup(format!(
                "{}={} on rank {rank} but {} on rank {r}: every rank needs the same value",
                crate::config::pshm::SUPERNODE_MAXSIZE,
                mine.maxsize,
                recs[r].maxsize
            )));
        }
        let kernels: Vec<[u64; 2]> = recs.iter().map(|p| p.kernel).collect();
        let position = if cfg.pshm.enabled() {
            let of_host = |r: usize| {
                hosts
                    .host_of(r)
                    .map(|h| hosts.ranks_on_host(h).to_vec())
                    .unwrap_or_else(|| vec![r])
            };
            position_of(rank, &of_host, &kernels, maxsize)
        } else {
            Position {
                count: size,
                index: rank,
            }
        };
        let Some(inbox) = inbox else {
            return Ok((None, position));
        };
        let members = supernode_of(rank, &host_ranks, &kernels, maxsize);
        if members.len() < 2 {
            return Ok((None, position));
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
                return Err(Error::PshmSetup(format!(
                    "rank {r} published an inbox for {} ranks, its supernode has {n}",
                    p.slots
                )));
            }
            let m = Mapping::open_peer(p.pid, p.fd, p.len as usize).map_err(|e| {
                Error::PshmSetup(format!(
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
            "shared-memory path: rank {rank} in a supernode of {n} ({members:?}), rings of {cap} bytes"
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
                _inboxes: inboxes,
                segments: OnceLock::new(),
            }),
            position,
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
    /// is this rank's segment.
    pub fn attach(&self, records: &[&[u8]], own: &Mapping) -> Result<(), Error> {
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
                Error::PshmSetup(format!(
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
        let _ = self.segments.set(segs);
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn supernodes_follow_host_kernel_and_maxsize() {
        let k = [[1, 1], [1, 1], [1, 1], [2, 1], [1, 1]];
        let host = [0, 1, 2, 3, 4];
        assert_eq!(supernode_of(0, &host, &k, 0), vec![0, 1, 2, 4]);
        assert_eq!(supernode_of(3, &host, &k, 0), vec![3]);
        assert_eq!(supernode_of(0, &host, &k, 2), vec![0, 1]);
        assert_eq!(supernode_of(2, &host, &k, 2), vec![2, 4]);
        assert_eq!(supernode_of(4, &host, &k, 3), vec![4]);
        assert_eq!(supernode_of(1, &host, &k, 1), vec![1]);
        assert_eq!(supernode_of(1, &[1, 4], &k, 0), vec![1, 4]);
    }

    #[test]
    fn positions_count_every_hosts_groups() {
        // Host A: ranks 0, 1, 2; host B: ranks 3, 4 (4 in another kernel).
        let k = [[1, 1], [1, 1], [1, 1], [1, 1], [2, 1]];
        let hosts = |r: usize| if r < 3 { vec![0, 1, 2] } else { vec![3, 4] };
        let p = |r, m| position_of(r, &hosts, &k, m);
        assert_eq!(p(0, 0), Position { count: 3, index: 0 });
        assert_eq!(p(2, 0), Position { count: 3, index: 0 });
        assert_eq!(p(3, 0), Position { count: 3, index: 1 });
        assert_eq!(p(4, 0), Position { count: 3, index: 2 });
        // Groups of 2: {0,1} {2} {3} {4}.
        assert_eq!(p(2, 2), Position { count: 4, index: 1 });
        assert_eq!(p(4, 2), Position { count: 4, index: 3 });
    }

    #[test]
    fn records_round_trip() {
        let p = Published {
            kernel: [7, 9],
            pid: 1234,
            fd: 17,
            maxsize: 0,
            slots: 4,
            cap: 65536,
            len: 1 << 20,
        };
        assert_eq!(Published::from_bytes(&p.to_bytes()), Some(p));
        assert_eq!(Published::from_bytes(&[0; 47]), None);
    }

    #[test]
    fn kernel_identity_is_stable() {
        assert_eq!(kernel_identity(), kernel_identity());
        assert_ne!(kernel_identity()[0], 0);
    }
}
