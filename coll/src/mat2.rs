//! A non-commutative user operator: the product of 2x2 matrices of `u64`
//! (wrapping arithmetic), 32-byte elements in native byte order. Its
//! result depends on the order of the operands, so it shows whether a
//! reduction combines in canonical rank order (GASNet-EX's and MPI's rule
//! for non-commutative operators); the conformance programs and the
//! machines' tests use it for that.
//!
//! ```
//! use coll::mat2;
//! let (a, b) = ([1, 2, 3, 4], [0, 1, 1, 0]);
//! assert_ne!(mat2::mul(a, b), mat2::mul(b, a));
//! let mut acc = mat2::to_bytes(&[a]);
//! mat2::product().combine(&mut acc, &mat2::to_bytes(&[b])).unwrap();
//! assert_eq!(mat2::from_bytes(&acc), [mat2::mul(a, b)]);
//! ```

use crate::op::{Reduction, UserOp};
use std::sync::Arc;

/// A 2x2 matrix, row-major: `[a00, a01, a10, a11]`.
pub type Mat = [u64; 4];

/// Bytes of one [`Mat`] element.
pub const ELEM_SIZE: usize = 32;

/// `a * b`, with wrapping arithmetic.
pub fn mul(a: Mat, b: Mat) -> Mat {
    let m = |x: u64, y: u64| x.wrapping_mul(y);
    [
        m(a[0], b[0]).wrapping_add(m(a[1], b[2])),
        m(a[0], b[1]).wrapping_add(m(a[1], b[3])),
        m(a[2], b[0]).wrapping_add(m(a[3], b[2])),
        m(a[2], b[1]).wrapping_add(m(a[3], b[3])),
    ]
}

/// The matrices' bytes, one 32-byte element each.
pub fn to_bytes(ms: &[Mat]) -> Vec<u8> {
    ms.iter().flatten().flat_map(|v| v.to_ne_bytes()).collect()
}

/// The matrices in `b` (whole 32-byte elements; a shorter tail is
/// ignored).
pub fn from_bytes(b: &[u8]) -> Vec<Mat> {
    b.chunks_exact(ELEM_SIZE)
        .map(|c| {
            std::array::from_fn(|i| {
                let mut w = [0u8; 8];
                w.copy_from_slice(&c[i * 8..i * 8 + 8]);
                u64::from_ne_bytes(w)
            })
        })
        .collect()
}

/// The reduction `acc = acc * other`, element by element: not
/// commutative.
pub fn product() -> Reduction {
    Reduction::User {
        op: UserOp {
            f: Arc::new(|acc: &mut [u8], other: &[u8]| {
                for (a, b) in acc
                    .chunks_exact_mut(ELEM_SIZE)
                    .zip(other.chunks_exact(ELEM_SIZE))
                {
                    let p = mul(from_bytes(a)[0], from_bytes(b)[0]);
                    a.copy_from_slice(&to_bytes(&[p]));
                }
            }),
            commutative: false,
        },
        elem_size: ELEM_SIZE,
    }
}
