//! `gex-coll reduce`: every built-in operator x type, checked exactly.

use super::*;

/// Rank r's element i for a reduction with `op`.
fn value(op: CollOp, dt: DType, r: usize, i: usize) -> f64 {
    let x = ((r * 7 + i * 3) % 11) as f64;
    match op {
        // 1 or 2: a float product of powers of two is exact in any
        // order (3s lose bits past 2^24 and make the tree's order show
        // at a few dozen ranks).
        CollOp::Prod => 1.0 + ((r + i) % 2) as f64,
        CollOp::Land | CollOp::Lor => ((r + i) % 3 == 0) as u8 as f64,
        CollOp::Min | CollOp::Max if !matches!(dt, DType::U32 | DType::U64) => x - 5.0,
        _ => x,
    }
}

fn fold<V: CollValue + std::fmt::Debug + PartialEq>(
    op: CollOp,
    n: usize,
    len: usize,
    make: impl Fn(usize, usize) -> V,
    comb: impl Fn(CollOp, V, V) -> V,
) -> Vec<V> {
    (0..len)
        .map(|i| (1..n).fold(make(0, i), |acc, r| comb(op, acc, make(r, i))))
        .collect()
}

macro_rules! int_comb {
    ($t:ty) => {
        |op: CollOp, a: $t, b: $t| -> $t {
            match op {
                CollOp::Sum => a.wrapping_add(b),
                CollOp::Prod => a.wrapping_mul(b),
                CollOp::Min => a.min(b),
                CollOp::Max => a.max(b),
                CollOp::Band => a & b,
                CollOp::Bor => a | b,
                CollOp::Bxor => a ^ b,
                CollOp::Land => ((a != 0) && (b != 0)) as $t,
                CollOp::Lor => ((a != 0) || (b != 0)) as $t,
            }
        }
    };
}

macro_rules! float_comb {
    ($t:ty) => {
        |op: CollOp, a: $t, b: $t| -> $t {
            match op {
                CollOp::Sum => a + b,
                CollOp::Prod => a * b,
                CollOp::Min => {
                    if b < a {
                        b
                    } else {
                        a
                    }
                }
                _ => {
                    if b > a {
                        b
                    } else {
                        a
                    }
                }
            }
        }
    };
}

const INT_OPS: [CollOp; 9] = [
    CollOp::Sum,
    CollOp::Prod,
    CollOp::Min,
    CollOp::Max,
    CollOp::Band,
    CollOp::Bor,
    CollOp::Bxor,
    CollOp::Land,
    CollOp::Lor,
];
const FLOAT_OPS: [CollOp; 4] = [CollOp::Sum, CollOp::Prod, CollOp::Min, CollOp::Max];

fn check_op<V: CollValue + std::fmt::Debug + PartialEq>(
    w: &T<'_>,
    op: CollOp,
    from: impl Fn(f64) -> V + Copy,
    comb: impl Fn(CollOp, V, V) -> V + Copy,
) -> Fallible<usize> {
    let (me, n) = (w.rank(), w.size());
    let mut checks = 0;
    for len in [3usize, 5000] {
        let make = |r: usize, i: usize| from(value(op, V::DTYPE, r, i));
        let mine: Vec<V> = (0..len).map(|i| make(me, i)).collect();
        let want = fold(op, n, len, make, comb);
        let all = w.allreduce(op, &mine)?;
        if all != want {
            return Err(fail(format!(
                "allreduce {op:?} on {:?} x{len}: got {:?}.., expected {:?}..",
                V::DTYPE,
                &all[..3.min(len)],
                &want[..3.min(len)]
            )));
        }
        let root = (len + op as usize) % n;
        let got = w.reduce(root, op, &mine)?;
        match got {
            Some(v) if me == root && v == want => {}
            None if me != root => {}
            other => {
                return Err(fail(format!(
                    "reduce {op:?} on {:?} x{len} to {root}: got {:?}",
                    V::DTYPE,
                    other.map(|v| v.len())
                )))
            }
        }
        checks += 1;
    }
    Ok(checks)
}

pub(super) fn reduce(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let mut n = 0;
    for op in INT_OPS {
        n += check_op::<i32>(&w, op, |x| x as i32, int_comb!(i32))?;
        n += check_op::<u32>(&w, op, |x| x as u32, int_comb!(u32))?;
        n += check_op::<i64>(&w, op, |x| x as i64, int_comb!(i64))?;
        n += check_op::<u64>(&w, op, |x| x as u64, int_comb!(u64))?;
    }
    for op in FLOAT_OPS {
        n += check_op::<f32>(&w, op, |x| x as f32, float_comb!(f32))?;
        n += check_op::<f64>(&w, op, |x| x, float_comb!(f64))?;
    }
    Ok(format!(
        "ok: {n} reduce-to-one + reduce-to-all checks over 44 operator x type pairs exact"
    ))
}
