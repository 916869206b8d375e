//! Supernode discovery: what each rank publishes at start-up, which ranks
//! can share memory, and how every rank cuts the same groups.

/// A rank's published shared-memory facts (one record of the start-up
/// exchange).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Published {
    /// Which kernel and pid namespace the rank runs in.
    pub kernel: [u64; 2],
    pub pid: u32,
    pub fd: i32,
    pub maxsize: u32,
    /// Senders the inbox has rings for.
    pub slots: u32,
    pub cap: u64,
    pub len: u64,
    /// `GASNET_OFI_MAX_MEDIUM`: every rank sizes its receive buffers and
    /// rings by it, so it must be the same everywhere.
    pub max_medium: u64,
    /// Endpoint sets the rank opened: a peer's rings and the provider's
    /// address table are laid out by it, so it must be the same everywhere.
    pub sets: u32,
    /// `GASNET_OFI_COLL_CACHE_PAGES`: a team's members take part in its
    /// cache set-up, or not, by it, so it must be the same everywhere.
    pub coll_pages: u64,
    /// 1 when the rank would send and read through lanes
    /// (`GASNET_OFI_PSHM_LANES` on, single-threaded mode): a supernode uses
    /// them only when all of its members would.
    pub lanes: u32,
}

const RECORD: usize = 72;

/// Bytes of the record `Shared::segment_record` makes.
pub const SEGMENT_RECORD: usize = 16;

impl Published {
    pub(super) fn to_bytes(self) -> [u8; RECORD] {
        let mut b = [0u8; RECORD];
        b[0..8].copy_from_slice(&self.kernel[0].to_le_bytes());
        b[8..16].copy_from_slice(&self.kernel[1].to_le_bytes());
        b[16..20].copy_from_slice(&self.pid.to_le_bytes());
        b[20..24].copy_from_slice(&self.fd.to_le_bytes());
        b[24..28].copy_from_slice(&self.maxsize.to_le_bytes());
        b[28..32].copy_from_slice(&self.slots.to_le_bytes());
        b[32..40].copy_from_slice(&self.cap.to_le_bytes());
        b[40..48].copy_from_slice(&self.len.to_le_bytes());
        b[48..56].copy_from_slice(&self.max_medium.to_le_bytes());
        b[56..60].copy_from_slice(&self.sets.to_le_bytes());
        b[60..68].copy_from_slice(&self.coll_pages.to_le_bytes());
        b[68..72].copy_from_slice(&self.lanes.to_le_bytes());
        b
    }

    pub(super) fn from_bytes(b: &[u8]) -> Option<Published> {
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
            max_medium: u64_at(48),
            sets: u32_at(56),
            coll_pages: u64_at(60),
            lanes: u32_at(68),
        })
    }
}

/// Check what rank `r` published about its inbox before mapping it: its
/// rings' capacity must be a power of two that holds two of the largest
/// records, and the file must hold every ring (`sets` x 2 sides x `slots`
/// senders) and the lanes after them (one per sender). A rank built from another version, or a corrupt record,
/// would otherwise place rings outside the mapping or make sends to it
/// spin for ever; the error says what was published.
pub(super) fn check_inbox(
    r: usize,
    p: &Published,
    sets: usize,
    largest: usize,
) -> Result<(), crate::client::Error> {
    use super::lane::LANE_BYTES;
    use super::ring::{footprint, min_capacity, record_len};
    let need_cap = min_capacity(record_len(largest));
    let cap = usize::try_from(p.cap).ok();
    let rings_fit = cap
        .filter(|c| c.is_power_of_two() && *c >= need_cap)
        .and_then(|c| {
            sets.checked_mul(2)?
                .checked_mul(p.slots as usize)?
                .checked_mul(footprint(c))?
                .checked_add((p.slots as usize).checked_mul(LANE_BYTES)?)
        });
    match rings_fit {
        Some(need) if need as u64 <= p.len => Ok(()),
        _ => Err(crate::client::Error::Pshm(format!(
            "rank {r} published a shared-memory inbox of {} bytes with rings of {} bytes for {} \
senders and {sets} endpoint sets; this rank needs rings of a power of two of at least {need_cap} \
bytes, all inside the inbox with a lane per sender (are the ranks built from different \
versions?)",
            p.len, p.cap, p.slots
        ))),
    }
}

/// This kernel's boot id and this process's pid namespace: ranks whose
/// values differ cannot open each other's memory files.
pub(super) fn kernel_identity() -> [u64; 2] {
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

/// Every rank's neighbourhood (supernode) index, ordered by the
/// neighbourhoods' lowest ranks: what GASNet's `gasnet_getNodeInfo` reports
/// per rank, and (for one rank) `gex_System_QueryMyPosition`. Computed
/// once at start-up from data every rank already has (no exchange).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Neighbourhoods {
    count: usize,
    of: Box<[u32]>,
}

impl Neighbourhoods {
    /// Every rank of every host grouped as [`supernode_of`] does
    /// (`hosts(r)`: the ranks of `r`'s host, in rank order).
    pub fn grouped(
        hosts: &dyn Fn(usize) -> Vec<usize>,
        kernel: &[[u64; 2]],
        maxsize: usize,
    ) -> Self {
        let n = kernel.len();
        // A rank's neighbourhood is named by its lowest member; only the
        // first rank of each host's group computes the group.
        let mut leader = vec![usize::MAX; n];
        for r in 0..n {
            if leader[r] == usize::MAX {
                for m in supernode_of(r, &hosts(r), kernel, maxsize) {
                    leader[m] = leader[m].min(r);
                }
                // A host map that leaves `r` out of its own host's ranks
                // (supernode_of then answers that host's first group):
                // `r` still names a neighbourhood of its own.
                leader[r] = leader[r].min(r);
            }
        }
        let mut leaders: Vec<usize> = leader.clone();
        leaders.sort_unstable();
        leaders.dedup();
        let of = leader
            .iter()
            .map(|l| leaders.binary_search(l).unwrap_or(0) as u32)
            .collect();
        Neighbourhoods {
            count: leaders.len(),
            of,
        }
    }

    /// With the shared-memory path off: every rank a neighbourhood of its
    /// own.
    pub fn singletons(size: usize) -> Self {
        Neighbourhoods {
            count: size,
            of: (0..size as u32).collect(),
        }
    }

    /// How many neighbourhoods the job has.
    pub fn count(&self) -> usize {
        self.count
    }

    /// `rank`'s neighbourhood index, if `rank` is in the job.
    pub fn of(&self, rank: usize) -> Option<usize> {
        self.of.get(rank).map(|&i| i as usize)
    }

    /// Where `rank`'s neighbourhood sits among the job's.
    pub fn position(&self, rank: usize) -> Position {
        Position {
            count: self.count,
            index: self.of(rank).unwrap_or(0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inboxes_that_cannot_hold_their_rings_are_refused() {
        use super::super::ring::{capacity, footprint};
        let largest = 4096;
        let cap = capacity(largest, 0);
        let ok = Published {
            kernel: [1, 1],
            pid: 7,
            fd: 3,
            maxsize: 0,
            slots: 4,
            cap: cap as u64,
            len: (2 * 2 * 4 * footprint(cap) + 4 * super::super::lane::LANE_BYTES) as u64,
            max_medium: largest as u64,
            sets: 2,
            coll_pages: 4,
            lanes: 1,
        };
        assert!(check_inbox(1, &ok, 2, largest).is_ok());
        let short = Published {
            len: ok.len - 1,
            ..ok
        };
        let msg = check_inbox(1, &short, 2, largest).unwrap_err().to_string();
        assert!(
            msg.contains(&format!("rank 1 published a shared-memory inbox of {} bytes with rings of {cap} bytes for 4 senders and 2 endpoint sets", short.len)),
            "{msg}"
        );
        for bad_cap in [cap as u64 + 8, (cap / 4) as u64, 0, u64::MAX] {
            let p = Published { cap: bad_cap, ..ok };
            assert!(check_inbox(1, &p, 2, largest).is_err(), "cap {bad_cap}");
        }
        let many = Published {
            slots: u32::MAX,
            len: u64::MAX,
            ..ok
        };
        assert!(check_inbox(1, &many, usize::MAX / 2, largest).is_err());
    }

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
        let p = |r, m| Neighbourhoods::grouped(&hosts, &k, m).position(r);
        assert_eq!(p(0, 0), Position { count: 3, index: 0 });
        assert_eq!(p(2, 0), Position { count: 3, index: 0 });
        assert_eq!(p(3, 0), Position { count: 3, index: 1 });
        assert_eq!(p(4, 0), Position { count: 3, index: 2 });
        // Groups of 2: {0,1} {2} {3} {4}.
        assert_eq!(p(2, 2), Position { count: 4, index: 1 });
        assert_eq!(p(4, 2), Position { count: 4, index: 3 });
        // Every rank's index at once, and the path off.
        let all = Neighbourhoods::grouped(&hosts, &k, 2);
        assert_eq!(
            (0..5).map(|r| all.of(r).unwrap()).collect::<Vec<_>>(),
            [0, 0, 1, 2, 3]
        );
        assert_eq!(all.of(5), None);
        let off = Neighbourhoods::singletons(3);
        assert_eq!(off.position(2), Position { count: 3, index: 2 });
    }

    #[test]
    fn interleaved_hosts_name_groups_by_their_lowest_rank() {
        // Round-robin placement: host A has 0, 2, 4; host B has 1, 3, 5.
        let k = [[1, 1]; 6];
        let hosts = |r: usize| {
            if r % 2 == 0 {
                vec![0, 2, 4]
            } else {
                vec![1, 3, 5]
            }
        };
        let all = Neighbourhoods::grouped(&hosts, &k, 0);
        assert_eq!(all.count(), 2);
        assert_eq!(
            (0..6).map(|r| all.of(r).unwrap()).collect::<Vec<_>>(),
            [0, 1, 0, 1, 0, 1]
        );
        // Groups of 2 on each host: {0,2} {1,3} {4} {5}, indexed by lowest rank.
        let pairs = Neighbourhoods::grouped(&hosts, &k, 2);
        assert_eq!(pairs.count(), 4);
        assert_eq!(
            (0..6).map(|r| pairs.of(r).unwrap()).collect::<Vec<_>>(),
            [0, 1, 0, 1, 2, 3]
        );
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
            max_medium: 8192,
            sets: 3,
            coll_pages: 64,
            lanes: 1,
        };
        assert_eq!(Published::from_bytes(&p.to_bytes()), Some(p));
        assert_eq!(Published::from_bytes(&[0; 55]), None);
    }

    #[test]
    fn kernel_identity_is_stable() {
        assert_eq!(kernel_identity(), kernel_identity());
        assert_ne!(kernel_identity()[0], 0);
    }
}
