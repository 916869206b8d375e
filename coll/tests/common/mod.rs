//! A deterministic in-memory network for the collectives: N `TeamColl`s,
//! messages in flight delivered in a seeded random order, and collectives
//! started at seeded random moments (so messages often arrive before their
//! collective has started).

#![allow(dead_code)]

use std::collections::VecDeque;

use coll::{CollOp, Config, TeamColl};

/// SplitMix64: small, seeded, good enough to shuffle.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// A message in flight.
struct Flight {
    seq: u32,
    from: usize,
    to: usize,
    phase: u8,
    chunk: u32,
    data: Vec<u8>,
}

/// What a run observed.
pub struct Outcome {
    /// `results[rank][i]`: the result of the `i`-th collective on `rank`.
    pub results: Vec<Vec<Option<Vec<u8>>>>,
    /// Messages delivered before the receiver started their collective.
    pub early: usize,
    /// Messages delivered.
    pub delivered: usize,
}

/// Run `ops[rank]` (each rank's collectives, in its start order) on a team
/// of `ops.len()` ranks, starting and delivering in an order drawn from
/// `seed`. Panics on any error or on a collective left incomplete.
pub fn run(cfg: Config, ops: Vec<Vec<CollOp>>, seed: u64) -> Outcome {
    run_teams(cfg, false, ops, seed)
}

/// [`run`], with small reductions to all by direct exchange when `direct`
/// (as on a team whose members share memory).
pub fn run_teams(cfg: Config, direct: bool, ops: Vec<Vec<CollOp>>, seed: u64) -> Outcome {
    let n = ops.len();
    let mut rng = Rng::new(seed);
    let mut ranks: Vec<TeamColl> = (0..n)
        .map(|r| {
            let mut t = TeamColl::new(n, r, cfg).unwrap();
            t.set_direct_exchange(direct);
            t
        })
        .collect();
    let mut todo: Vec<VecDeque<CollOp>> = ops.into_iter().map(VecDeque::from).collect();
    let mut started: Vec<Vec<u32>> = vec![Vec::new(); n];
    let mut flight: Vec<Flight> = Vec::new();
    let (mut early, mut delivered) = (0, 0);
    loop {
        let starters: Vec<usize> = (0..n).filter(|&r| !todo[r].is_empty()).collect();
        let choices = starters.len() + flight.len();
        if choices == 0 {
            break;
        }
        let pick = rng.below(choices);
        let (me, seq, out) = if pick < starters.len() {
            let me = starters[pick];
            let op = todo[me].pop_front().unwrap();
            let (seq, out) = ranks[me].start(op).unwrap();
            started[me].push(seq);
            (me, seq, out)
        } else {
            let f = flight.swap_remove(pick - starters.len());
            let t = &mut ranks[f.to];
            if f.seq.wrapping_sub(t.next_seq()) < 1 << 31 {
                early += 1;
            }
            delivered += 1;
            let out = t
                .on_msg(f.seq, f.from, f.phase, f.chunk, &f.data)
                .unwrap_or_else(|e| panic!("rank {} seq {}: {e}", f.to, f.seq));
            (f.to, f.seq, out)
        };
        for m in out {
            assert!(m.to < n && m.to != me, "rank {me} sends to {}", m.to);
            flight.push(Flight {
                seq,
                from: me,
                to: m.to,
                phase: m.phase,
                chunk: m.chunk,
                data: m.data,
            });
        }
    }
    let results = (0..n)
        .map(|r| {
            let out = started[r]
                .iter()
                .map(|&s| {
                    assert!(ranks[r].is_done(s), "rank {r} seq {s} incomplete");
                    ranks[r].take_result(s).unwrap()
                })
                .collect();
            assert_eq!(ranks[r].in_progress(), 0);
            out
        })
        .collect();
    Outcome {
        results,
        early,
        delivered,
    }
}

/// A seed from the parameters of a case, so every case differs.
pub fn seed(parts: &[usize]) -> u64 {
    parts.iter().fold(0xC011_u64, |h, &p| {
        (h ^ p as u64).wrapping_mul(0x100_0000_01B3)
    })
}

/// The fan-outs every test runs with.
pub const FANOUTS: [usize; 4] = [1, 2, 3, 7];
