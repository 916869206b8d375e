//! Reduction to one and to all over N in 1..=9 ranks, every root, fan-outs
//! 1, 2, 3 and 7, for every valid built-in operator and type, with results
//! computed independently by a left fold in team-rank order.

mod common;

use coll::op::validity;
use coll::{CollOp, Config, DType, Op, Reduction};
use common::{run, seed, Rng, FANOUTS};

/// A built-in element type, with the operators written out again here.
trait Elem: Copy {
    const DT: DType;
    fn gen(rng: &mut Rng) -> Self;
    fn bytes(self) -> Vec<u8>;
    fn apply(op: Op, a: Self, b: Self) -> Self;
}

macro_rules! int_elem {
    ($t:ty, $dt:expr) => {
        impl Elem for $t {
            const DT: DType = $dt;
            fn gen(rng: &mut Rng) -> Self {
                // Zeros and ones for the logical operators, and full-range
                // values so that sums and products wrap.
                match rng.below(4) {
                    0 => 0,
                    1 => 1,
                    _ => rng.next_u64() as $t,
                }
            }
            fn bytes(self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
            fn apply(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Sum => a.wrapping_add(b),
                    Op::Prod => a.wrapping_mul(b),
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                    Op::Band => a & b,
                    Op::Bor => a | b,
                    Op::Bxor => a ^ b,
                    Op::Land => (a != 0 && b != 0) as $t,
                    Op::Lor => (a != 0 || b != 0) as $t,
                }
            }
        }
    };
}

macro_rules! float_elem {
    ($t:ty, $dt:expr) => {
        impl Elem for $t {
            const DT: DType = $dt;
            fn gen(rng: &mut Rng) -> Self {
                // Small integers: sums and products of nine are exact, so
                // any order of combination gives the same bits.
                rng.below(7) as $t - 3.0
            }
            fn bytes(self) -> Vec<u8> {
                self.to_ne_bytes().to_vec()
            }
            fn apply(op: Op, a: Self, b: Self) -> Self {
                match op {
                    Op::Sum => a + b,
                    Op::Prod => a * b,
                    Op::Min => a.min(b),
                    Op::Max => a.max(b),
                    _ => unreachable!("not valid for floats"),
                }
            }
        }
    };
}

int_elem!(i32, DType::I32);
int_elem!(u32, DType::U32);
int_elem!(i64, DType::I64);
int_elem!(u64, DType::U64);
float_elem!(f32, DType::F32);
float_elem!(f64, DType::F64);

const COUNT: usize = 5;

/// Reduce to each root and to all, concurrently, for one operator.
fn check_op<T: Elem>(op: Op) {
    for n in 1..=9 {
        for &fanout in &FANOUTS {
            for root in 0..n {
                let s = seed(&[n, fanout, root, op as usize, T::DT as usize]);
                let mut rng = Rng::new(s);
                let xs: Vec<Vec<T>> = (0..n)
                    .map(|_| (0..COUNT).map(|_| T::gen(&mut rng)).collect())
                    .collect();
                let want: Vec<u8> = (0..COUNT)
                    .flat_map(|e| {
                        let v = (1..n).fold(xs[0][e], |acc, r| T::apply(op, acc, xs[r][e]));
                        v.bytes()
                    })
                    .collect();
                let red = Reduction::Builtin(op, T::DT);
                let ops = xs
                    .iter()
                    .map(|x| {
                        let src: Vec<u8> = x.iter().flat_map(|v| v.bytes()).collect();
                        vec![
                            CollOp::ReduceToOne {
                                root,
                                src: src.clone(),
                                reduction: red.clone(),
                            },
                            CollOp::ReduceToAll {
                                src,
                                reduction: red.clone(),
                            },
                        ]
                    })
                    .collect();
                // Two elements per chunk for 4-byte types, one for 8-byte.
                let cfg = Config {
                    fanout,
                    max_chunk: 8 + (fanout % 3),
                };
                let o = run(cfg, ops, s);
                let ctx = format!("{op:?} {:?} n={n} fanout={fanout} root={root}", T::DT);
                for (r, res) in o.results.iter().enumerate() {
                    let one = (r == root).then_some(&want);
                    assert_eq!(res[0].as_ref(), one, "reduce {ctx} rank={r}");
                    assert_eq!(res[1].as_ref(), Some(&want), "allreduce {ctx} rank={r}");
                }
            }
        }
    }
}

fn check_type<T: Elem>() {
    for op in Op::ALL {
        if validity(op, T::DT).is_ok() {
            check_op::<T>(op);
        }
    }
}

#[test]
fn i32_ops() {
    check_type::<i32>();
}

#[test]
fn u32_ops() {
    check_type::<u32>();
}

#[test]
fn i64_ops() {
    check_type::<i64>();
}

#[test]
fn u64_ops() {
    check_type::<u64>();
}

#[test]
fn f32_ops() {
    check_type::<f32>();
}

#[test]
fn f64_ops() {
    check_type::<f64>();
}

#[test]
fn invalid_pairs_are_refused_at_start() {
    let mut t = coll::TeamColl::new(1, 0, Config::default()).unwrap();
    let e = t
        .start(CollOp::ReduceToAll {
            src: vec![0; 4],
            reduction: Reduction::Builtin(Op::Bor, DType::F32),
        })
        .unwrap_err();
    assert!(e.to_string().contains("Bor") && e.to_string().contains("F32"));
    assert_eq!(t.next_seq(), 0, "a refused collective takes no sequence");
}
