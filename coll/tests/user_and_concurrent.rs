//! A non-commutative user operator (2x2 u64 matrix product, wrapping),
//! a commutative user operator, several collectives in flight at once on
//! one team, and messages that arrive before their collective starts.

mod common;

use std::sync::Arc;

use coll::{CollOp, Config, DType, Op, Reduction, UserOp};
use common::{run, run_teams, seed, Rng, FANOUTS};

use coll::mat2::{self, mul as mat_mul, Mat};

#[test]
fn non_commutative_matches_serial_left_fold() {
    const COUNT: usize = 3;
    for n in 1..=9 {
        for &fanout in &FANOUTS {
            for root in 0..n {
                let s = seed(&[n, fanout, root, 32]);
                let mut rng = Rng::new(s);
                let xs: Vec<Vec<Mat>> = (0..n)
                    .map(|_| {
                        (0..COUNT)
                            .map(|_| std::array::from_fn(|_| rng.next_u64() % 5))
                            .collect()
                    })
                    .collect();
                let fold: Vec<Mat> = (0..COUNT)
                    .map(|e| (1..n).fold(xs[0][e], |acc, r| mat_mul(acc, xs[r][e])))
                    .collect();
                if n >= 2 {
                    let reversed: Vec<Mat> = (0..COUNT)
                        .map(|e| {
                            (0..n - 1)
                                .rev()
                                .fold(xs[n - 1][e], |acc, r| mat_mul(acc, xs[r][e]))
                        })
                        .collect();
                    assert_ne!(
                        fold, reversed,
                        "the order must matter for the test to mean much"
                    );
                }
                let want = mat2::to_bytes(&fold);
                let ops = xs
                    .iter()
                    .map(|x| {
                        let src = mat2::to_bytes(x);
                        vec![
                            CollOp::ReduceToOne {
                                root,
                                src: src.clone(),
                                reduction: mat2::product(),
                            },
                            CollOp::ReduceToAll {
                                src,
                                reduction: mat2::product(),
                            },
                        ]
                    })
                    .collect();
                // 8 rounds up to one matrix per chunk; 70 down to two;
                // 4096 holds the whole payload, so on a team that shares
                // memory the reduction to all takes the direct exchange.
                let (max_chunk, direct) = match fanout % 3 {
                    0 => (8, false),
                    1 => (70, false),
                    _ => (4096, true),
                };
                let o = run_teams(Config { fanout, max_chunk }, direct, ops, s);
                for (r, res) in o.results.iter().enumerate() {
                    let one = (r == root).then_some(&want);
                    assert_eq!(
                        res[0].as_ref(),
                        one,
                        "n={n} fanout={fanout} root={root} rank={r}"
                    );
                    assert_eq!(res[1].as_ref(), Some(&want), "n={n} root={root} rank={r}");
                }
            }
        }
    }
}

#[test]
fn commutative_user_op_uses_the_tree() {
    let xor = Reduction::User {
        op: UserOp {
            f: Arc::new(|acc: &mut [u8], o: &[u8]| {
                acc.iter_mut().zip(o).for_each(|(a, b)| *a ^= b)
            }),
            commutative: true,
        },
        elem_size: 3,
    };
    for n in 1..=9 {
        for root in 0..n {
            let xs: Vec<Vec<u8>> = (0..n)
                .map(|r| (0..9).map(|i| (r * 31 + i * 7) as u8).collect())
                .collect();
            let want: Vec<u8> = (0..9).map(|i| xs.iter().fold(0, |a, x| a ^ x[i])).collect();
            let ops = xs
                .iter()
                .map(|x| {
                    vec![CollOp::ReduceToOne {
                        root,
                        src: x.clone(),
                        reduction: xor.clone(),
                    }]
                })
                .collect();
            let o = run(
                Config {
                    fanout: 3,
                    max_chunk: 4,
                },
                ops,
                seed(&[n, root, 3]),
            );
            assert_eq!(o.results[root][0].as_ref(), Some(&want));
        }
    }
}

/// Four collectives per rank, started at random moments and all in flight
/// together; messages of different sequences interleave, and many arrive
/// before the receiver has started their collective.
#[test]
fn concurrent_collectives_and_early_messages() {
    let mut early = 0;
    for n in 1..=9 {
        for &fanout in &FANOUTS {
            for trial in 0..4 {
                let s = seed(&[n, fanout, trial, 99]);
                let mut rng = Rng::new(s);
                let (ra, rb) = (rng.below(n), rng.below(n));
                let data: Vec<u8> = (0..37).map(|_| rng.next_u64() as u8).collect();
                let vals: Vec<u64> = (0..n as u64).map(|r| r * 1000 + 1).collect();
                let sum: u64 = vals.iter().sum();
                let red = Reduction::Builtin(Op::Sum, DType::U64);
                let ops = (0..n)
                    .map(|r| {
                        let src = [vals[r], vals[r] * 2]
                            .iter()
                            .flat_map(|v| v.to_ne_bytes())
                            .collect::<Vec<u8>>();
                        vec![
                            CollOp::Broadcast {
                                root: ra,
                                len: data.len(),
                                src: (r == ra).then(|| data.clone()),
                            },
                            CollOp::ReduceToAll {
                                src: src.clone(),
                                reduction: red.clone(),
                            },
                            CollOp::ReduceToOne {
                                root: rb,
                                src,
                                reduction: red.clone(),
                            },
                            CollOp::Broadcast {
                                root: rb,
                                len: 0,
                                src: (r == rb).then(Vec::new),
                            },
                        ]
                    })
                    .collect();
                // The last trial as on a team that shares memory: the
                // reduction to all by direct exchange.
                let (max_chunk, direct) = if trial == 3 { (64, true) } else { (8, false) };
                let o = run_teams(Config { fanout, max_chunk }, direct, ops, s);
                early += o.early;
                let want: Vec<u8> = [sum, sum * 2]
                    .iter()
                    .flat_map(|v| v.to_ne_bytes())
                    .collect();
                for (r, res) in o.results.iter().enumerate() {
                    assert_eq!(res[0].as_ref(), Some(&data), "n={n} rank={r}");
                    assert_eq!(res[1].as_ref(), Some(&want), "n={n} rank={r}");
                    assert_eq!(
                        res[2].as_ref(),
                        (r == rb).then_some(&want),
                        "n={n} rank={r}"
                    );
                    assert_eq!(res[3].as_deref(), Some(&[][..]), "n={n} rank={r}");
                }
            }
        }
    }
    assert!(early > 100, "only {early} early messages");
}
