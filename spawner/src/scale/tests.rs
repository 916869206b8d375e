use super::memory::{self, Kind};
use super::timeline::{allgather, barrier, child_hello_len};
use super::*;

/// Every cost zero: each test turns on the one it checks.
fn free(n: usize, hosts: usize, radix: usize) -> Params {
    let mut p = Params::cluster(n, hosts);
    p.radix = radix;
    p.net = Net {
        lat_intra: 0.0,
        lat_inter: 0.0,
        bw_intra: f64::INFINITY,
        bw_inter: f64::INFINITY,
        per_frame: 0.0,
    };
    p.launch = Launch {
        ssh_start: 0.0,
        ssh_gap: 0.0,
        rank_gap: 0.0,
        rank_init: 0.0,
        per_accept: 0.0,
        per_hello: 0.0,
        backlog: usize::MAX,
        syn_retry: 1.0,
    };
    p.conduit.open = 0.0;
    p.conduit.av_insert = 0.0;
    p.conduit.per_entry = 0.0;
    p
}

/// Levels of a complete `k`-ary tree of `n` nodes: the least `L` with
/// `k^L >= (k-1) n + 1`, i.e. `ceil(log_k((k-1) n + 1))`, in integers.
fn levels(n: usize, k: usize) -> usize {
    let want = (k - 1) * n + 1;
    let (mut l, mut pow) = (0, 1usize);
    while pow < want {
        pow *= k;
        l += 1;
    }
    l
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1e-12)
}

const SIZES: [usize; 12] = [1, 2, 3, 8, 9, 10, 63, 64, 73, 585, 4681, 10_000];

#[test]
fn tree_height_is_the_closed_form() {
    for n in SIZES.into_iter().chain(100..140) {
        for k in [2, 3, 8, 16] {
            let s = shape(&free(n, 1, k));
            assert_eq!(s.height, levels(n, k) - 1, "n={n} k={k}");
            assert_eq!(s.max_children, (n - 1).min(k), "n={n} k={k}");
        }
    }
    assert_eq!(shape(&Params::cluster(10_000, 100)).height, 5);
}

#[test]
fn latency_alone_costs_two_hops_per_level() {
    let l = 7e-6;
    for n in SIZES {
        for k in [2, 8] {
            let mut p = free(n, 1, k);
            p.net.lat_intra = l;
            let host = p.host_of();
            let h = (levels(n, k) - 1) as f64;
            let zero = vec![0.0; n];
            assert!(close(barrier(&p, &host, &zero).end(), 2.0 * h * l), "n={n}");
            let ag = allgather(&p, &host, &zero, &|r| r % 7);
            assert!(close(ag.end(), 2.0 * h * l), "n={n} k={k}");
        }
    }
}

#[test]
fn bandwidth_alone_serialises_each_ranks_children() {
    // A full tree: every rank of the last level below the root but one has
    // k children. Up, a rank reads its k children one after another; down,
    // it writes to them one after another: 2 * height * k frames.
    for (k, height) in [(2usize, 5u32), (3, 4), (8, 3)] {
        let n = (k.pow(height + 1) - 1) / (k - 1);
        let mut p = free(n, 1, k);
        p.net.bw_intra = 1e6;
        let host = p.host_of();
        let t = barrier(&p, &host, &vec![0.0; n]).end();
        let frame = 13.0 / 1e6;
        assert!(
            close(t, 2.0 * (height as usize * k) as f64 * frame),
            "k={k}"
        );
    }
}

#[test]
fn the_launcher_handles_one_connection_and_one_hello_at_a_time() {
    // All hellos at once: the accept thread and the event loop form a
    // pipeline whose slower stage sets the pace.
    for n in [1, 64, 1000] {
        for (accept, hello) in [(1e-5, 3e-5), (3e-5, 1e-5)] {
            let mut p = free(n, 1, 8);
            p.launch.per_accept = accept;
            p.launch.per_hello = hello;
            let s = simulate(&p);
            let want = if hello >= accept {
                accept + n as f64 * hello
            } else {
                n as f64 * accept + hello
            };
            assert!(close(s.launcher_done, want), "n={n}: {s:?}");
            // Every later step costs nothing here.
            assert!(close(s.segment, s.launcher_done), "n={n}");
        }
    }
    // A parent that says hello after its child holds the child's welcome:
    // the ranks of host 1 start first and wait for host 0's.
    let mut p = free(200, 2, 8);
    p.launch.ssh_gap = -1.0;
    p.launch.ssh_start = 1.0;
    let s = simulate(&p);
    assert!(close(s.last_hello, 1.0) && close(s.wired, 1.0), "{s:?}");
}

#[test]
fn a_full_listen_queue_drops_syns_that_come_back_later() {
    // 40 connections at once, a queue of 9 (and one being accepted): 10
    // get in at t = 0, 1 s, 1 + 2 s and 1 + 2 + 4 s; the others are dropped
    // each time.
    let mut p = free(40, 1, 8);
    p.launch.backlog = 9;
    p.launch.per_accept = 1e-4;
    let s = simulate(&p);
    assert_eq!(s.dropped_syns, 30 + 20 + 10);
    assert!(close(s.launcher_done, 7.0 + 10.0 * 1e-4), "{s:?}");
}

#[test]
fn every_collective_moves_what_the_wire_format_says() {
    for (n, k, hosts) in [(1, 8, 1), (2, 8, 1), (21, 3, 2), (100, 8, 3), (1000, 8, 10)] {
        let p = free(n, hosts, k);
        let host = p.host_of();
        let zero = vec![0.0; n];
        let depth_sum: usize = (1..n)
            .map(|mut r| {
                let mut d = 0;
                while let Some(q) = bootstrap::tcp::tree_parent(r, k) {
                    (r, d) = (q, d + 1);
                }
                d
            })
            .sum();
        let b = 54;
        let ag = allgather(&p, &host, &zero, &|_| b);
        let frames: u64 = ag.frames.iter().sum();
        let bytes: u64 = ag.bytes.iter().sum();
        assert_eq!(frames, 2 * (n as u64 - 1), "n={n}");
        let up = (n - 1) * 13 + (8 + b) * depth_sum;
        let down = (n - 1) * (17 + n * (4 + b));
        assert_eq!(bytes, (up + down) as u64, "n={n}");
        let bar = barrier(&p, &host, &zero);
        assert_eq!(bar.bytes.iter().sum::<u64>(), 2 * 13 * (n as u64 - 1));
    }
    assert_eq!(child_hello_len(), 1 + 32 + 4);
}

#[test]
fn the_ten_thousand_rank_job() {
    let p = Params::cluster(10_000, 100);
    let s = simulate(&p);
    let sh = s.shape;
    assert_eq!((sh.height, sh.max_children), (5, 8));
    // Block placement puts 100 ranks on a host; the tree ignores hosts:
    // only the edges of ranks 1..=99 (parents 0..=12) stay on host 0.
    assert_eq!(sh.cross_host_edges, 9_999 - 99);
    // Starting the ranks (ssh, then the agents' forks) is most of it; the
    // launcher keeps up: no SYN dropped, and its step is under a tenth of
    // starting the ranks.
    let steps = s.steps();
    let rest: f64 = steps[1..].iter().map(|st| st.1).sum();
    assert!(steps[0].1 > 5.0 * rest, "{steps:?}");
    assert_eq!(s.dropped_syns, 0);
    assert!(steps[1].1 < steps[0].1 / 10.0, "{steps:?}");
    // With Rust's listen backlog of 128 it would not.
    let mut old = p;
    old.launch.backlog = 128;
    let o = simulate(&old);
    assert!(
        o.dropped_syns > 1000 && o.segment > s.segment + 0.5,
        "{o:?}"
    );
    assert_eq!(s.names_frame, 17 + 10_000 * 40);
    // Memory: what grows with N and is held is under 1 MiB in the conduit
    // and bootstrap, ~6 MiB in the provider's address vector.
    let items = memory::per_rank(&p);
    let conduit: f64 = items[..3].iter().map(|i| i.bytes).sum();
    assert!(conduit < 1048576.0 && items[3].bytes > 6e6, "{items:?}");
    // All-to-all connections pass every constant item at 10,000 ranks.
    let conns = memory::total(&items, Kind::PerConnection);
    assert!(memory::constant().iter().all(|c| conns > c.1));
}

#[test]
fn the_memory_model_follows_the_conduit() {
    // gex-bench's test: the address table of a 2-rank job is 80 bytes
    // (2 x 8 + 24 per rank).
    let items = memory::per_rank(&Params::cluster(2, 1));
    assert_eq!(items[0].bytes + items[1].bytes, 80.0);
    assert_eq!(Params::cluster(2, 1).names_blob(), 2 * (2 + 16));
}

#[test]
fn docs_hold_the_models_tables() {
    let doc = include_str!("../../../docs/launching.md");
    let jobs = doc_jobs();
    let mut stale = String::new();
    for (name, table) in [
        ("start-up", time_table(&jobs)),
        ("what-if", what_if_table(&jobs[2], &WHAT_IF)),
        ("memory", memory_table(&jobs)),
    ] {
        if !doc.contains(&table) {
            stale += &format!("\nthe {name} table, as the model makes it:\n{table}");
        }
    }
    assert!(
        stale.is_empty(),
        "docs/launching.md does not hold the model's tables; replace:{stale}"
    );
}

/// The variations of docs/launching.md's what-if table.
const WHAT_IF: [Variant; 7] = [
    ("listen backlog 128 (Rust's default, before)", |p| {
        p.launch.backlog = 128
    }),
    (
        "launcher twice as slow (60 us a connection, 60 us a hello)",
        slow,
    ),
    ("launcher twice as slow, backlog 128", |p| {
        slow(p);
        p.launch.backlog = 128;
    }),
    ("ranks start 0.27 s later (Debian's libfabric 1.17)", |p| {
        p.launch.rank_init += 0.27
    }),
    ("tree radix 16", |p| p.radix = 16),
    ("1 Gb/s between hosts", |p| p.net.bw_inter = 1.25e8),
    ("100 us one way between hosts", |p| p.net.lat_inter = 100e-6),
];

fn slow(p: &mut Params) {
    p.launch.per_accept *= 2.0;
    p.launch.per_hello *= 2.0;
}

/// The jobs of docs/launching.md's tables: 100 ranks per host.
fn doc_jobs() -> [Params; 3] {
    [
        Params::cluster(64, 1),
        Params::cluster(1000, 10),
        Params::cluster(10_000, 100),
    ]
}

#[test]
fn readable_units() {
    assert_eq!(table::time(24e-6), "0.02 ms");
    assert_eq!(table::time(0.0123), "12.3 ms");
    assert_eq!(table::time(1.5), "1.50 s");
    assert_eq!(table::bytes(96.0), "96 B");
    assert_eq!(table::bytes(1536.0), "1.5 KiB");
    assert_eq!(table::bytes(205e6), "195.5 MiB");
}
