//! A property test: random sequences of AMs and RMA on every rank, under
//! random faults, checked against a model of what every segment and every
//! rank's received messages must hold.
//!
//! Each rank owns a slice of every rank's segment (only it writes there),
//! so the model of a slice is exact at any time: a put updates it once the
//! operation is complete; a get must return the model's bytes. Every AM
//! carries (source, sequence) and a checksummed payload; at the end every
//! rank must have received exactly the messages the others' sequences
//! addressed to it.

mod sim;

use conduit::client::{Client, NbiSync, Seq};
use conduit::transport::sim::{Faults, SimTransport};
use proptest::prelude::*;
use sim::Job;
use std::sync::Mutex;

const RANKS: usize = 3;
const SLICE: usize = 64 * 1024;
const SEG: usize = RANKS * SLICE;
/// Most operations per rank (each Long lands in a place of its own).
const MAX_OPS: usize = 40;
const LONG_SLOT: usize = 20_480;

#[derive(Debug, Clone)]
enum Op {
    Short {
        dest: usize,
    },
    Medium {
        dest: usize,
        len: usize,
    },
    Long {
        dest: usize,
        len: usize,
        at: usize,
    },
    Put {
        dest: usize,
        at: usize,
        len: usize,
        how: u8,
    },
    Get {
        dest: usize,
        at: usize,
        len: usize,
        how: u8,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let dest = 0..RANKS;
    prop_oneof![
        dest.clone().prop_map(|dest| Op::Short { dest }),
        (dest.clone(), 0..=8192usize).prop_map(|(dest, len)| Op::Medium { dest, len }),
        (dest.clone(), 0..20_000usize, 0..7usize).prop_map(|(dest, len, at)| Op::Long {
            dest,
            len,
            at
        }),
        (dest.clone(), 0..SLICE, 1..12_000usize, 0..4u8).prop_map(|(dest, at, len, how)| Op::Put {
            dest,
            at,
            len: len.min(SLICE - at),
            how
        }),
        (dest, 0..SLICE, 1..12_000usize, 0..3u8).prop_map(|(dest, at, len, how)| Op::Get {
            dest,
            at,
            len: len.min(SLICE - at),
            how
        }),
    ]
}

fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

fn checksum(b: &[u8]) -> u32 {
    b.iter()
        .fold(0u32, |a, &x| a.wrapping_mul(31).wrapping_add(x as u32))
}

/// What a rank received: (source, sequence, kind) with payload checks.
#[derive(Default)]
struct Inbox {
    got: Mutex<Vec<(u32, u32, u8)>>,
    bad: Mutex<Vec<String>>,
}

type C = Client<Inbox, SimTransport>;

fn setup(c: &C) {
    c.on_request_short(200, 2, |tok, a| {
        tok.state().got.lock().unwrap().push((a[0], a[1], 0));
    })
    .unwrap();
    c.on_request_medium(201, 3, |tok, a, p| {
        let st = tok.state();
        if checksum(p) != a[2] {
            st.bad.lock().unwrap().push(format!("medium {a:?}"));
        }
        st.got.lock().unwrap().push((a[0], a[1], 1));
    })
    .unwrap();
    c.on_request_long(202, 3, |tok, a, p| {
        let st = tok.state();
        if checksum(&p.to_vec()) != a[2] {
            st.bad.lock().unwrap().push(format!("long {a:?}"));
        }
        st.got.lock().unwrap().push((a[0], a[1], 2));
    })
    .unwrap();
    c.attach_segment(SEG + RANKS * MAX_OPS * LONG_SLOT).unwrap();
}

/// Rank `me` runs its sequence; returns the problems it saw.
fn run_rank(c: &C, plan: &[Vec<Op>]) -> Vec<String> {
    setup(c);
    c.barrier().unwrap();
    let me = c.rank();
    let mut problems = Vec::new();
    // The model of my slice in every rank's segment.
    let mut model: Vec<Vec<u8>> = vec![vec![0u8; SLICE]; RANKS];
    for (i, o) in plan[me].iter().enumerate() {
        let seed = ((me as u64) << 32) | i as u64;
        let seq = i as u32;
        let base = |dest: usize| -> usize {
            let _ = dest;
            me * SLICE
        };
        match *o {
            Op::Short { dest } => c.request_short(dest, 200, &[me as u32, seq]).unwrap(),
            Op::Medium { dest, len } => {
                let p = bytes(seed, len);
                c.request_medium(dest, 201, &[me as u32, seq, checksum(&p)], &p)
                    .unwrap()
            }
            Op::Long { dest, len, at } => {
                let p = bytes(seed, len);
                // A place of its own after the RMA slices (a later Long must
                // not overwrite one whose handler has not run), at an odd
                // alignment.
                let off = SEG + (me * MAX_OPS + i) * LONG_SLOT + at;
                c.request_long(dest, 202, &[me as u32, seq, checksum(&p)], &p, off)
                    .unwrap()
            }
            Op::Put { dest, at, len, how } => {
                let p = bytes(seed, len);
                let off = base(dest) + at;
                match how {
                    0 => c.put(dest, off, &p).unwrap(),
                    1 => c
                        .rma_scope(|s| {
                            let e = s.put_nb(dest, off, &p)?;
                            s.wait(e)
                        })
                        .unwrap(),
                    2 => c
                        .rma_scope(|s| {
                            s.put_nbi_deferred(dest, off, &p)?;
                            s.sync_nbi(NbiSync::Puts)
                        })
                        .unwrap(),
                    _ => c.rma_scope(|s| s.put_nbi(dest, off, &p)).unwrap(),
                }
                model[dest][at..at + len].copy_from_slice(&p);
            }
            Op::Get { dest, at, len, how } => {
                let mut b = vec![0u8; len];
                let off = base(dest) + at;
                match how {
                    0 => c.get(dest, off, &mut b).unwrap(),
                    1 => c
                        .rma_scope(|s| {
                            let e = s.get_nb(dest, off, &mut b)?;
                            s.wait(e)
                        })
                        .unwrap(),
                    _ => c.rma_scope(|s| s.get_nbi(dest, off, &mut b)).unwrap(),
                }
                if b != model[dest][at..at + len] {
                    problems.push(format!("rank {me} op {i}: get of {len} at {off} from {dest} differs from the model"));
                }
            }
        }
    }
    // Everything addressed to me must arrive, exactly once.
    let mut want: Vec<(u32, u32, u8)> = Vec::new();
    for (src, ops) in plan.iter().enumerate() {
        for (i, o) in ops.iter().enumerate() {
            let k = match o {
                Op::Short { dest } if *dest == me => 0,
                Op::Medium { dest, .. } if *dest == me => 1,
                Op::Long { dest, .. } if *dest == me => 2,
                _ => continue,
            };
            want.push((src as u32, i as u32, k));
        }
    }
    let st = c.state();
    c.block_until(|| st.got.lock().unwrap().len() >= want.len())
        .unwrap();
    let mut got = st.got.lock().unwrap().clone();
    got.sort();
    want.sort();
    if got != want {
        problems.push(format!(
            "rank {me}: received {} messages, expected {}",
            got.len(),
            want.len()
        ));
    }
    problems.extend(st.bad.lock().unwrap().iter().cloned());
    // The final state of my slices, read back.
    for (dest, m) in model.iter().enumerate() {
        let mut b = vec![0u8; SLICE];
        c.get(dest, me * SLICE, &mut b).unwrap();
        if b != *m {
            problems.push(format!(
                "rank {me}: my slice at rank {dest} differs from the model"
            ));
        }
    }
    problems
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_am_and_rma_sequences_match_the_model(
        plan in prop::collection::vec(prop::collection::vec(op(), 0..MAX_OPS), RANKS),
        eagain in prop_oneof![Just(0u32), 2u32..9],
        max_delay in 0u32..4,
        reorder: bool,
        early_release: bool,
        tx_on_reply: bool,
        max_msg in prop_oneof![Just(1usize << 16), Just(4096usize), Just(1000usize)],
        small_buffers: bool,
    ) {
        let vars: &[(&str, &str)] = if small_buffers {
            &[("GASNET_OFI_NUM_RECEIVE_BUFFS", "2"), ("GASNET_OFI_RECEIVE_BUFF_SIZE", "32K")]
        } else {
            &[]
        };
        let (_f, ended) = Job::new(RANKS)
            .faults(Faults { eagain_one_in: eagain, max_delay, reorder, early_release, tx_on_reply, ..Faults::default() })
            .vars(vars)
            .max_msg(max_msg)
            .run::<Seq, _, _, _>(|_| Inbox::default(), |c: &C| run_rank(c, &plan));
        if std::env::var("SIM_MODEL_TRACE").is_ok() {
            eprintln!("case: {} ops, eagain {eagain} delay {max_delay} reorder {reorder} early {early_release} tx_on_reply {tx_on_reply} max_msg {max_msg}", plan.iter().map(|v| v.len()).sum::<usize>());
        }
        for e in ended {
            let problems = e.value();
            prop_assert!(problems.is_empty(), "{:?}", problems);
        }
    }
}
