//! Naive references the unit and property tests check plans against.

use super::Plan;

/// Apply a plan as a put: each piece copies `local -> remote`.
pub(super) fn apply_put(plan: &Plan, local: &[u8], seg: &mut [u8]) {
    for p in plan.pieces() {
        seg[p.remote..p.remote + p.len].copy_from_slice(&local[p.local..p.local + p.len]);
    }
}

/// Apply a plan as a get: each piece copies `remote -> local`.
pub(super) fn apply_get(plan: &Plan, local: &mut [u8], seg: &[u8]) {
    for p in plan.pieces() {
        local[p.local..p.local + p.len].copy_from_slice(&seg[p.remote..p.remote + p.len]);
    }
}

/// GASNet's Vector semantics byte by byte: the concatenation of the source
/// entries written into the concatenation of the destination entries.
pub(super) fn naive_vector(
    dst: &mut [u8],
    dst_list: &[(usize, usize)],
    src: &[u8],
    src_list: &[(usize, usize)],
) {
    let stream: Vec<u8> = src_list
        .iter()
        .filter(|e| e.1 > 0) // a zero-length entry's address is ignored
        .flat_map(|&(o, l)| src[o..o + l].iter().copied())
        .collect();
    let mut k = 0;
    for &(o, l) in dst_list.iter().filter(|e| e.1 > 0) {
        for b in &mut dst[o..o + l] {
            *b = stream[k];
            k += 1;
        }
    }
    assert_eq!(k, stream.len());
}

/// GASNet-EX's Strided semantics element by element, level 0 fastest: the
/// element at index `(i0, i1, ..)` of the source goes to the same index of
/// the destination.
#[allow(clippy::too_many_arguments)]
pub(super) fn naive_strided(
    dst: &mut [u8],
    dst_off: usize,
    dst_strides: &[isize],
    src: &[u8],
    src_off: usize,
    src_strides: &[isize],
    elemsz: usize,
    count: &[usize],
) {
    if elemsz == 0 || count.contains(&0) {
        return;
    }
    let mut idx = vec![0usize; count.len()];
    loop {
        let at = |base: usize, strides: &[isize]| {
            let mut a = base as i128;
            for (i, &s) in idx.iter().zip(strides) {
                a += *i as i128 * s as i128;
            }
            a as usize
        };
        let (d, s) = (at(dst_off, dst_strides), at(src_off, src_strides));
        dst[d..d + elemsz].copy_from_slice(&src[s..s + elemsz]);
        let mut k = 0;
        loop {
            if k == count.len() {
                return;
            }
            idx[k] += 1;
            if idx[k] < count[k] {
                break;
            }
            idx[k] = 0;
            k += 1;
        }
    }
}

pub(super) fn bytes(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}
