//! `gex-coll user`: user operators, one whose result depends on the order.

use super::*;

use conduit::client::mat2::{self, mul as mat_mul, Mat};

fn mat_of(r: usize, k: usize) -> Mat {
    let r = r as u64 + 2 + k as u64;
    [r, 1, 3, r * r + 1]
}

pub(super) use mat2::{from_bytes as mats, product as product_op};

/// A commutative user operator that adds the native-endian `u64`s of
/// elements of `elem_size` bytes (a multiple of 8) lane by lane.
pub(super) fn u64_sum(elem_size: usize) -> Reduction {
    Reduction::User {
        op: UserOp {
            f: Arc::new(|acc: &mut [u8], other: &[u8]| {
                for (a, o) in acc.chunks_exact_mut(8).zip(other.chunks_exact(8)) {
                    let s = u64::from_ne_bytes(a.try_into().unwrap())
                        + u64::from_ne_bytes(o.try_into().unwrap());
                    a.copy_from_slice(&s.to_ne_bytes());
                }
            }),
            commutative: true,
        },
        elem_size,
    }
}

/// This rank's `count` matrices.
pub(super) fn my_matrices(me: usize, count: usize) -> Vec<u8> {
    mat2::to_bytes(&(0..count).map(|k| mat_of(me, k)).collect::<Vec<_>>())
}

/// The `count` products in rank order, computed locally.
pub(super) fn rank_order_product(n: usize, count: usize) -> Vec<Mat> {
    (0..count)
        .map(|k| (1..n).fold(mat_of(0, k), |acc, r| mat_mul(acc, mat_of(r, k))))
        .collect()
}

/// An allreduce of the product of every rank's `count` matrices.
fn ordered_product(w: &T, count: usize) -> Fallible<Vec<Mat>> {
    let all = w
        .allreduce_nb(product_op(), my_matrices(w.rank(), count))?
        .wait()?
        .unwrap_or_default();
    Ok(mats(&all))
}

pub(super) fn user(c: &Client) -> Fallible<String> {
    let w = c.world()?;
    let (me, n) = (w.rank(), w.size());
    let count = 600;
    let want = rank_order_product(n, count);
    let reverse: Vec<Mat> = (0..count)
        .map(|k| {
            (0..n - 1)
                .rev()
                .fold(mat_of(n - 1, k), |acc, r| mat_mul(acc, mat_of(r, k)))
        })
        .collect();
    if n > 1 && want == reverse {
        return Err(fail(
            "the test's matrices commute: the order would not show",
        ));
    }
    // 4 matrices (one small exchange) and 600 (several chunks).
    for count in [4, count] {
        if ordered_product(&w, count)? != rank_order_product(n, count) {
            return Err(fail(format!(
                "non-commutative allreduce of {count} matrices: not the product in rank order"
            )));
        }
    }
    let mine = my_matrices(me, count);
    let root = n - 1;
    let got = w.reduce_nb(root, product_op(), mine)?.wait()?;
    if me == root && got.as_deref().map(mats) != Some(want) {
        return Err(fail(
            "non-commutative reduce: not the product in rank order",
        ));
    }
    let sum = u64_sum(8);
    let s = w
        .allreduce_nb(sum, (me as u64 + 1).to_ne_bytes().to_vec())?
        .wait()?
        .unwrap_or_default();
    let want = (n * (n + 1) / 2) as u64;
    if s != want.to_ne_bytes() {
        return Err(fail(format!(
            "commutative user sum: got {s:?}, expected {want}"
        )));
    }
    Ok(format!(
        "ok: non-commutative user reduction of {count} 2x2 matrices equals the product in rank order (not the reverse); commutative user sum {want}"
    ))
}
