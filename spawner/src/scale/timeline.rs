//! The model's timeline: for every rank, when each step of start-up ends
//! (see the module documentation of [`crate::scale`]).

use super::{shape, Params, Shape, ENDPOINTS_PER_SET};
use bootstrap::tcp::{tree_children, tree_parent};

/// Bytes before a frame's payload (its length).
const PREFIX: usize = 4;
/// A collective frame's header: operation and sequence number.
const HEADER: usize = 9;
/// A published segment record (`SegmentInfo::to_bytes`: base, size, key).
pub(super) const SEGMENT_RECORD: usize = 24;

/// One collective as the model runs it: when every rank is done, and the
/// frames and bytes every rank writes to its tree connections (counted as
/// `TcpBootstrap::traffic` counts them).
#[derive(Debug, Clone, PartialEq)]
pub struct Collective {
    /// When each rank returns from the collective.
    pub done: Vec<f64>,
    /// Frames each rank writes.
    pub frames: Vec<u64>,
    /// Bytes each rank writes (frames with their length).
    pub bytes: Vec<u64>,
}

impl Collective {
    /// When the last rank is done.
    pub fn end(&self) -> f64 {
        self.done.iter().copied().fold(0.0, f64::max)
    }
}

/// The end of each start-up step (seconds from the launcher's start; the
/// latest rank's time for steps that ranks do).
#[derive(Debug, Clone, PartialEq)]
pub struct Startup {
    /// The tree.
    pub shape: Shape,
    /// The last rank sends its hello.
    pub last_hello: f64,
    /// The launcher has handled every hello.
    pub launcher_done: f64,
    /// Connection attempts to the launcher dropped (listen queue full).
    pub dropped_syns: usize,
    /// Every rank is connected to its parent and children.
    pub wired: f64,
    /// The host-map allgather (the end of `TcpBootstrap::connect`).
    pub host_map: f64,
    /// Provider opened and endpoint names gathered.
    pub names: f64,
    /// Every address inserted in the address vector.
    pub av: f64,
    /// The barrier that ends `Client::init`.
    pub barrier: f64,
    /// The segment records gathered and the barrier after them.
    pub segment: f64,
    /// Bytes of one down frame of the names allgather (what every tree
    /// edge carries, and every rank holds, on the way down).
    pub names_frame: usize,
}

impl Startup {
    /// Each step and the time it adds to the previous step's end.
    pub fn steps(&self) -> [(&'static str, f64); 8] {
        [
            ("spawn: last hello sent", self.last_hello),
            (
                "launcher: every hello handled",
                self.launcher_done - self.last_hello,
            ),
            ("tree wired", self.wired - self.launcher_done),
            ("host-map allgather", self.host_map - self.wired),
            (
                "provider open + names allgather",
                self.names - self.host_map,
            ),
            ("address-vector inserts", self.av - self.names),
            ("barrier", self.barrier - self.av),
            ("segment allgather + barrier", self.segment - self.barrier),
        ]
    }
}

/// Latency and bandwidth between two ranks.
struct Links<'a> {
    p: &'a Params,
    host: Vec<usize>,
}

impl Links<'_> {
    fn lat(&self, a: usize, b: usize) -> f64 {
        if self.host[a] == self.host[b] {
            self.p.net.lat_intra
        } else {
            self.p.net.lat_inter
        }
    }

    fn transfer(&self, a: usize, b: usize, bytes: usize) -> f64 {
        let bw = if self.host[a] == self.host[b] {
            self.p.net.bw_intra
        } else {
            self.p.net.bw_inter
        };
        bytes as f64 / bw
    }

    /// Latency between a rank and the launcher: local jobs run on one
    /// host with it, ssh jobs reach it over the network.
    fn lat_launcher(&self) -> f64 {
        if self.p.hosts <= 1 {
            self.p.net.lat_intra
        } else {
            self.p.net.lat_inter
        }
    }
}

/// When each rank sends its hello.
fn spawn(p: &Params, host: &[usize]) -> Vec<f64> {
    let l = &p.launch;
    let mut next_on_host = vec![0usize; p.hosts.max(1)];
    host.iter()
        .map(|&h| {
            next_on_host[h] += 1;
            let agent = if p.hosts <= 1 {
                0.0
            } else {
                h as f64 * l.ssh_gap + l.ssh_start
            };
            agent + next_on_host[h] as f64 * l.rank_gap + l.rank_init
        })
        .collect()
}

/// A connection attempt reaching the launcher's host (min-heap order).
#[derive(PartialEq)]
struct Syn {
    at: f64,
    rank: usize,
    attempt: u32,
}

impl Eq for Syn {}

impl Ord for Syn {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.at.total_cmp(&self.at).then(o.rank.cmp(&self.rank))
    }
}

impl PartialOrd for Syn {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}

/// What the launcher did with the hellos.
pub(super) struct Hellos {
    /// When each rank's welcome arrives.
    pub welcome: Vec<f64>,
    /// When the launcher handled its last hello.
    pub done: f64,
    /// Connection attempts dropped because the listen queue was full.
    pub dropped: usize,
}

/// The launcher: connections wait in the listen queue (`backlog` of them;
/// the kernel drops a SYN that finds it full and the rank's kernel sends
/// it again after 1 s, 2 s, 4 s, ...); the accept thread takes them one at
/// a time (accept, a thread for the connection), and the event loop
/// handles their hellos one at a time in that order; a rank is welcomed
/// once it and its parent have said hello.
fn launcher(p: &Params, links: &Links<'_>, sent: &[f64]) -> Hellos {
    use std::collections::{BinaryHeap, VecDeque};
    let l = links.lat_launcher();
    let lp = &p.launch;
    let mut syns: BinaryHeap<Syn> = (0..p.n)
        .map(|rank| Syn {
            at: sent[rank] + l,
            rank,
            attempt: 0,
        })
        .collect();
    // The listen queue: rank, when its connection (and hello) is complete.
    let mut queue: VecDeque<(usize, f64)> = VecDeque::new();
    let mut accepted: Vec<(f64, usize)> = Vec::with_capacity(p.n);
    let mut free = 0.0f64;
    let mut dropped = 0;
    let mut accept = |queue: &mut VecDeque<(usize, f64)>, until: f64| {
        while let Some(&(r, ready)) = queue.front() {
            let start = free.max(ready);
            if start > until {
                break;
            }
            queue.pop_front();
            free = start + lp.per_accept;
            accepted.push((free, r));
        }
    };
    while let Some(syn) = syns.pop() {
        accept(&mut queue, syn.at);
        if queue.len() >= lp.backlog {
            dropped += 1;
            syns.push(Syn {
                at: syn.at + lp.syn_retry * f64::from(1u32 << syn.attempt.min(16)),
                rank: syn.rank,
                attempt: syn.attempt + 1,
            });
        } else {
            // The handshake's second half and the hello.
            queue.push_back((syn.rank, syn.at + 2.0 * l));
        }
    }
    accept(&mut queue, f64::INFINITY);
    let mut handled = vec![0.0; p.n];
    let mut busy = 0.0f64;
    for (at, r) in accepted {
        busy = busy.max(at) + lp.per_hello;
        handled[r] = busy;
    }
    let welcome = (0..p.n)
        .map(|r| {
            let parent = tree_parent(r, p.radix).map_or(0.0, |q| handled[q]);
            handled[r].max(parent) + l
        })
        .collect();
    Hellos {
        welcome,
        done: busy,
        dropped,
    }
}

/// Tree wiring: connect to the parent and send the `ChildHello`, wait for
/// every child's. Returns when each rank is wired.
fn wire(p: &Params, links: &Links<'_>, welcome: &[f64]) -> Vec<f64> {
    let o = p.net.per_frame;
    let mut ready = vec![0.0; p.n];
    for r in 0..p.n {
        let mut t = match tree_parent(r, p.radix) {
            None => welcome[r],
            Some(q) => welcome[r] + 2.0 * links.lat(r, q) + o,
        };
        for c in tree_children(r, p.n, p.radix) {
            t = t.max(welcome[c] + 3.0 * links.lat(c, r) + o) + o;
        }
        ready[r] = t;
    }
    ready
}

/// Payload bytes of a `ChildHello`.
#[cfg(test)]
pub(crate) fn child_hello_len() -> usize {
    bootstrap::wire::Msg::ChildHello {
        secret: [0; bootstrap::wire::SECRET_LEN],
        rank: 0,
    }
    .encode()
    .len()
}

/// A collective over the tree: up frames of `up[r]` payload bytes (ranks
/// read their children's in rank order), one down frame of `down` payload
/// bytes forwarded to each child in turn; `root` is rank 0's work between
/// the two, `decode` every rank's after forwarding.
fn collective(
    p: &Params,
    links: &Links<'_>,
    start: &[f64],
    up: &[usize],
    down: usize,
    (root, decode): (f64, f64),
) -> Collective {
    let (n, o) = (p.n, p.net.per_frame);
    let mut frames = vec![0u64; n];
    let mut bytes = vec![0u64; n];
    let mut sent_up = vec![0.0f64; n];
    let mut after_up = vec![0.0; n];
    for r in (0..n).rev() {
        let mut t = start[r];
        for c in tree_children(r, n, p.radix) {
            let arrive = sent_up[c] + links.lat(c, r);
            t = t.max(arrive) + links.transfer(c, r, PREFIX + up[c]) + o;
        }
        if r > 0 {
            sent_up[r] = t + o;
            frames[r] += 1;
            bytes[r] += (PREFIX + up[r]) as u64;
        }
        after_up[r] = t;
    }
    let mut arrive_down = vec![0.0f64; n];
    let mut done = vec![0.0; n];
    for r in 0..n {
        let mut t = if r == 0 {
            after_up[0] + root
        } else {
            arrive_down[r].max(sent_up[r]) + o
        };
        for c in tree_children(r, n, p.radix) {
            t += o + links.transfer(r, c, PREFIX + down);
            arrive_down[c] = t + links.lat(r, c);
            frames[r] += 1;
            bytes[r] += (PREFIX + down) as u64;
        }
        done[r] = t + decode;
    }
    Collective {
        done,
        frames,
        bytes,
    }
}

/// An allgather of `blob[r]` bytes from every rank `r`.
pub(crate) fn allgather(
    p: &Params,
    host: &[usize],
    start: &[f64],
    blob: &dyn Fn(usize) -> usize,
) -> Collective {
    let links = Links {
        p,
        host: host.to_vec(),
    };
    // Up: the subtree's (u32 rank, u32 length, bytes) entries.
    let mut sub = vec![0usize; p.n];
    for r in (0..p.n).rev() {
        sub[r] = 8
            + blob(r)
            + tree_children(r, p.n, p.radix)
                .iter()
                .map(|&c| sub[c])
                .sum::<usize>();
    }
    let up: Vec<usize> = sub.iter().map(|s| HEADER + s).collect();
    // Down: header, u32 count, every rank's (u32 length, bytes).
    let down = HEADER + 4 + (0..p.n).map(|r| 4 + blob(r)).sum::<usize>();
    let per_result = p.n as f64 * p.conduit.per_entry;
    collective(p, &links, start, &up, down, (per_result, per_result))
}

/// A barrier: empty frames up and down.
pub(crate) fn barrier(p: &Params, host: &[usize], start: &[f64]) -> Collective {
    let links = Links {
        p,
        host: host.to_vec(),
    };
    collective(p, &links, start, &vec![HEADER; p.n], HEADER, (0.0, 0.0))
}

/// Host-map entry of a rank: u32 host index and the host's name.
pub(super) fn host_map_blob(p: &Params) -> usize {
    4 + p.conduit.host_name_len
}

/// The whole start-up of `p`'s job.
pub fn simulate(p: &Params) -> Startup {
    assert!(p.n >= 1 && p.radix >= 2 && p.hosts >= 1, "{p:?}");
    let host = p.host_of();
    let links = Links {
        p,
        host: host.clone(),
    };
    let sent = spawn(p, &host);
    let hellos = launcher(p, &links, &sent);
    let wired = wire(p, &links, &hellos.welcome);
    let hm = host_map_blob(p);
    let host_map = allgather(p, &host, &wired, &|_| hm);
    let opened: Vec<f64> = host_map.done.iter().map(|t| t + p.conduit.open).collect();
    let blob = p.names_blob();
    let names = allgather(p, &host, &opened, &|_| blob);
    let inserts = (ENDPOINTS_PER_SET * p.n) as f64 * p.conduit.av_insert;
    let av: Vec<f64> = names.done.iter().map(|t| t + inserts).collect();
    let bar = barrier(p, &host, &av);
    let seg = allgather(p, &host, &bar.done, &|_| SEGMENT_RECORD);
    let seg_bar = barrier(p, &host, &seg.done);
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    Startup {
        shape: shape(p),
        last_hello: max(&sent),
        launcher_done: hellos.done,
        dropped_syns: hellos.dropped,
        wired: max(&wired),
        host_map: host_map.end(),
        names: names.end(),
        av: max(&av),
        barrier: bar.end(),
        segment: seg_bar.end(),
        names_frame: PREFIX + HEADER + 4 + p.n * (4 + blob),
    }
}
