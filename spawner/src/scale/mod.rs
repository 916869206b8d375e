//! A deterministic model of a job's start-up at scale: the launcher, the
//! bootstrap tree and the conduit's use of it, as the code does them, and
//! the memory a rank holds as the job grows ([`memory`]).
//!
//! [`simulate`] follows the real protocol step by step, rank by rank:
//! * **spawn**: one host (the local spawner) forks its ranks one after
//!   another; several hosts (ssh) each get an ssh session, started one after
//!   another by the launcher, whose agent forks that host's ranks one after
//!   another ([`block_placement`] decides which ranks a host has);
//! * **hellos**: every rank connects to the launcher and says hello; the
//!   launcher handles the hellos one at a time in order of arrival (accept,
//!   a thread, read, the event loop) and welcomes a rank once it and its
//!   parent have both said hello (`Job::try_welcome`);
//! * **wiring**: a welcomed rank connects to its parent, sends its
//!   `ChildHello`, and waits for its own children's (`TcpBootstrap::connect`);
//! * **collectives** ([`bootstrap::tcp`]): each rank reads its children's
//!   frames in rank order, sends its subtree's up to its parent, and
//!   forwards what comes down to its children one after another before it
//!   decodes it; frame sizes are those of the wire format;
//! * **the conduit's start-up** (`Core::init`, `attach_segment`): the
//!   host-map allgather, opening the provider, the allgather of endpoint
//!   names, the address-vector insertions, a barrier, then the segment
//!   allgather and its barrier.
//!
//! The tree is [`tree_parent`]/[`tree_children`] themselves. What the model
//! leaves out: contention between transfers that share a host's link
//! (except that a rank receives its children's frames one at a time),
//! retransmissions, and scheduling noise. Its costs are [`Params`];
//! [`Params::cluster`] documents where each default value comes from.

pub mod memory;
mod table;
#[cfg(test)]
mod tests;
mod timeline;

pub use table::{memory_table, time_table, what_if_table, Variant};
#[cfg(test)]
pub(crate) use timeline::{allgather, barrier, child_hello_len};
pub use timeline::{simulate, Collective, Startup};

use crate::block_placement;
use bootstrap::tcp::{tree_children, tree_parent};

/// Costs of the network between ranks (seconds, bytes per second).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Net {
    /// One-way latency of a small TCP message between two ranks of a host.
    pub lat_intra: f64,
    /// One-way latency of a small TCP message between hosts.
    pub lat_inter: f64,
    /// Bandwidth of a TCP stream within a host.
    pub bw_intra: f64,
    /// Bandwidth of a TCP stream between hosts.
    pub bw_inter: f64,
    /// CPU time of one frame at one end (a write or a read, the wake-up).
    pub per_frame: f64,
}

/// Costs of starting the ranks and of the launcher (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Launch {
    /// From the launcher starting a host's ssh session to its agent running.
    pub ssh_start: f64,
    /// Between two ssh sessions started by the launcher.
    pub ssh_gap: f64,
    /// Between two ranks started by the same process (agent or launcher).
    pub rank_gap: f64,
    /// From a rank's start to its hello (exec, loading the libraries).
    pub rank_init: f64,
    /// The launcher's accept thread per connection (accept, a thread to
    /// read it), one connection at a time.
    pub per_accept: f64,
    /// The launcher's event loop per hello (the event, the welcome), one
    /// hello at a time.
    pub per_hello: f64,
    /// Connections the launcher's listen queue holds.
    pub backlog: usize,
    /// First retransmission of a dropped SYN (then twice as long each time).
    pub syn_retry: f64,
}

/// Costs of the conduit's start-up at each rank (seconds, bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Conduit {
    /// Provider selection, domain, endpoints, buffers: independent of N.
    pub open: f64,
    /// Bytes of one endpoint name (`fi_getname`).
    pub name_bytes: usize,
    /// Time of one address-vector insertion.
    pub av_insert: f64,
    /// Time to decode one entry of an allgather's result (its own buffer).
    pub per_entry: f64,
    /// Length of a host name (the host-map allgather).
    pub host_name_len: usize,
}

/// What the model needs: the job's shape and its costs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// Ranks.
    pub n: usize,
    /// Hosts (1: the local spawner; more: ssh).
    pub hosts: usize,
    /// Radix of the bootstrap tree (`GASNET_OFI_BOOTSTRAP_RADIX`).
    pub radix: usize,
    /// Network costs.
    pub net: Net,
    /// Launch costs.
    pub launch: Launch,
    /// Conduit costs.
    pub conduit: Conduit,
}

/// Endpoints a rank opens per endpoint set (request and reply; RMA goes
/// through the reply endpoint).
pub const ENDPOINTS_PER_SET: usize = 2;

impl Params {
    /// `n` ranks on `hosts` hosts, radix 8, with the costs of a cluster of
    /// hosts on 10 Gb/s Ethernet running libfabric 2.1's tcp;ofi_rxm.
    /// Values measured on the 2-core development machine are marked so;
    /// the others are estimates (docs/launching.md, "Scaling model").
    pub fn cluster(n: usize, hosts: usize) -> Params {
        Params {
            n,
            hosts,
            radix: 8,
            net: Net {
                // Measured here: 3-17 us one-way over loopback (13-byte
                // ping-pong, TCP_NODELAY), depending on the load.
                lat_intra: 10e-6,
                // Estimate: TCP over 10-25 Gb/s Ethernet, kernel stack.
                lat_inter: 25e-6,
                // Estimates: loopback copy rate; 10 Gb/s line rate.
                bw_intra: 4e9,
                bw_inter: 1.25e9,
                // Estimate: one write or read system call and a wake-up.
                per_frame: 5e-6,
            },
            launch: Launch {
                // Measured here: an OpenSSH session on 127.0.0.1 to a
                // running agent, ~0.5 s (the ssh column of the launch table).
                ssh_start: 0.5,
                // Estimate: fork and exec of ssh by the launcher.
                ssh_gap: 2e-3,
                // Measured here: `gasnetrun-ofi -n 64 /bin/true`, 57 ms.
                rank_gap: 0.9e-3,
                // Estimate from the 30 ms a whole 2-rank hello job takes
                // with libfabric 2.1 (0.27 s more with Debian's 1.17).
                rank_init: 10e-3,
                // Measured here: creating a thread with a 128 KiB stack,
                // 24-28 us (release build); the accept call is a few us.
                per_accept: 30e-6,
                // Estimate: `launcher_rate_of_hellos` measures the whole
                // path, the ranks' side included, at 93-140 us per hello
                // on two busy cores (debug build); the loop's part of it.
                per_hello: 30e-6,
                // The launcher asks for the longest listen queue, which is
                // net.core.somaxconn: 4096 here and by default since Linux
                // 5.4. Linux sends a dropped SYN again after 1 s
                // (TCP_TIMEOUT_INIT).
                backlog: 4096,
                syn_retry: 1.0,
            },
            conduit: Conduit {
                // Estimate (part of the 30 ms above).
                open: 10e-3,
                // Measured: fi_getname of tcp;ofi_rxm (a sockaddr_in).
                name_bytes: 16,
                // Measured: 30,000 insertions in a tcp;ofi_rxm AV, 0.65 us
                // each (libfabric 2.1; 0.91 us with 1.17).
                av_insert: 0.65e-6,
                // Estimate: an allocation and a copy of ~60 bytes.
                per_entry: 0.1e-6,
                // Estimate: a cluster host name such as "node0042.cluster".
                host_name_len: 16,
            },
        }
    }

    /// Host of every rank, as the launcher places them.
    pub fn host_of(&self) -> Vec<usize> {
        block_placement(self.n, self.hosts.max(1))
    }

    /// Bytes each rank contributes to the allgather of endpoint names
    /// (`pack_names`: a 2-byte length before each name, one endpoint set).
    pub fn names_blob(&self) -> usize {
        ENDPOINTS_PER_SET * (2 + self.conduit.name_bytes)
    }
}

/// The tree's shape: height (hops from the deepest rank to rank 0), levels,
/// and how many of its edges join ranks of different hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    /// Edges on the longest path from a rank to rank 0.
    pub height: usize,
    /// Tree edges between ranks of different hosts.
    pub cross_host_edges: usize,
    /// Most children of one rank.
    pub max_children: usize,
}

/// The shape of the tree of `p`, from [`tree_parent`] and [`tree_children`].
pub fn shape(p: &Params) -> Shape {
    let host = p.host_of();
    let mut depth = vec![0usize; p.n];
    let mut cross = 0;
    for r in 1..p.n {
        let parent = tree_parent(r, p.radix).unwrap_or(0);
        depth[r] = depth[parent] + 1;
        cross += usize::from(host[r] != host[parent]);
    }
    Shape {
        height: depth.iter().copied().max().unwrap_or(0),
        cross_host_edges: cross,
        max_children: (0..p.n)
            .map(|r| tree_children(r, p.n, p.radix).len())
            .max()
            .unwrap_or(0),
    }
}
