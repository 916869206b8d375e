//! Strided descriptions (`gex_VIS_Strided*`, GASNet-EX metadata format).

use super::walk::{Dim, Odometer, Source, Walk};
use super::{check_range, Error, Item, Plan, Side};

/// A Strided description of one side: the first element's offset and
/// `strides[i]`, the distance in bytes (any sign, zero included) between
/// consecutive items at level `i`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Strided<'a> {
    /// Offset of element `(0, .., 0)`.
    pub offset: usize,
    /// Byte distance between consecutive items at each level (GASNet's
    /// `ptrdiff_t` strides); only the first `count.len()` are used.
    pub strides: &'a [isize],
}

/// Plan a Strided transfer (`gex_VIS_Strided{Put,Get}`, GASNet-EX format).
///
/// The region of each side is the set of `elemsz`-byte contiguous elements
/// at `offset + i0*strides[0] + i1*strides[1] + .. ` for
/// `0 <= ik < count[k]`, `count.len()` being `stridelevels`; the element
/// with index `(i0, i1, ..)` on one side is copied to the element with the
/// same index on the other. Level 0 varies fastest. Strides may be negative
/// (reflection), zero, or in any order (transpose).
///
/// Degenerate cases, as the spec gives them:
/// * `elemsz == 0`: nothing moves and no other argument is looked at;
/// * `count.is_empty()` (`stridelevels == 0`): one contiguous copy of
///   `elemsz` bytes, the strides ignored;
/// * any `count[i] == 0`: nothing moves and the offsets are not checked
///   (the strides arrays must still be long enough).
///
/// A put passes its `src*` arguments as `local` and `dst*` as `remote`; a
/// get its `dst*` as `local` and `src*` as `remote`.
pub fn plan_strided(
    local: Strided<'_>,
    local_len: usize,
    remote: Strided<'_>,
    segment_len: usize,
    elemsz: usize,
    count: &[usize],
) -> Result<Plan, Error> {
    walk_strided(local, local_len, remote, segment_len, elemsz, count).map(Walk::into_plan)
}

/// Check a Strided transfer as [`plan_strided`] does and return its
/// pieces as a [`Walk`], made a window at a time (the walk holds the
/// normalised levels and an index, not the pieces).
pub fn walk_strided(
    local: Strided<'_>,
    local_len: usize,
    remote: Strided<'_>,
    segment_len: usize,
    elemsz: usize,
    count: &[usize],
) -> Result<Walk<'static>, Error> {
    let none = || Walk::new(Source::Done, 0);
    if elemsz == 0 {
        return Ok(none());
    }
    let levels = count.len();
    if levels == 0 {
        check_range(Item::Strided, Side::Local, local.offset, elemsz, local_len)?;
        check_range(
            Item::Strided,
            Side::Remote,
            remote.offset,
            elemsz,
            segment_len,
        )?;
        return Ok(Walk::new(
            Source::Strided(Odometer {
                elemsz,
                dims: Vec::new(),
                idx: Vec::new(),
                l: local.offset as i128,
                r: remote.offset as i128,
                done: false,
            }),
            elemsz,
        ));
    }
    for (side, d) in [(Side::Local, &local), (Side::Remote, &remote)] {
        if d.strides.len() < levels {
            return Err(Error::StridesLength {
                side,
                got: d.strides.len(),
                need: levels,
            });
        }
    }
    if count.contains(&0) {
        return Ok(none());
    }
    let mut total = elemsz;
    for (i, &c) in count.iter().enumerate() {
        total = total.checked_mul(c).ok_or_else(|| Error::Overflow {
            item: Item::Strided,
            what: format!("byte total: elemsz {elemsz} x count[0..={i}] ({count:?})"),
        })?;
    }
    check_box(local, Side::Local, local_len, elemsz, count)?;
    check_box(remote, Side::Remote, segment_len, elemsz, count)?;
    if total > local_len.max(segment_len) {
        return Err(Error::DestinationOverlaps {
            total,
            local_len,
            segment_len,
        });
    }

    // Every offset the walk makes lies in the checked bounding boxes, so
    // its i128 arithmetic cannot overflow and the casts back to usize are
    // exact.
    let (elemsz, dims) = normalise(elemsz, count, local.strides, remote.strides);
    Ok(Walk::new(
        Source::Strided(Odometer {
            elemsz,
            idx: vec![0; dims.len()],
            dims,
            l: local.offset as i128,
            r: remote.offset as i128,
            done: false,
        }),
        total,
    ))
}

/// Drop levels of one item, widen the element while level 0 is contiguous
/// on both sides, and fuse level `k` into level `k-1` when it continues it
/// on both sides. The element order (and so the plan) is unchanged; only
/// the work to enumerate it shrinks. Needs `elemsz * prod(count)` to fit.
fn normalise(
    mut elemsz: usize,
    count: &[usize],
    local: &[isize],
    remote: &[isize],
) -> (usize, Vec<Dim>) {
    let mut dims: Vec<Dim> = Vec::with_capacity(count.len());
    for (i, &c) in count.iter().enumerate() {
        if c == 1 {
            continue;
        }
        let d = Dim {
            count: c,
            local: local[i] as i128,
            remote: remote[i] as i128,
        };
        match dims.last_mut() {
            Some(p)
                if d.local == p.local * p.count as i128
                    && d.remote == p.remote * p.count as i128 =>
            {
                p.count *= c;
            }
            None if d.local == elemsz as i128 && d.remote == elemsz as i128 => {
                elemsz *= c;
            }
            _ => dims.push(d),
        }
    }
    (elemsz, dims)
}

/// Check one side's bounding box `[lo, hi)`: the lowest and the highest
/// element over all index tuples (as GASNet's `gasnete_strided_bounds`).
fn check_box(
    d: Strided<'_>,
    side: Side,
    bound: usize,
    elemsz: usize,
    count: &[usize],
) -> Result<(), Error> {
    let overflow = || Error::Overflow {
        item: Item::Strided,
        what: format!(
            "{side} extent of strides {:?} over count {count:?}",
            &d.strides[..count.len()]
        ),
    };
    let mut lo = d.offset as i128;
    let mut hi = lo + elemsz as i128;
    for (&s, &c) in d.strides.iter().zip(count) {
        // |s| <= 2^63 and c - 1 < 2^64: the product fits in an i128.
        let span = s as i128 * (c - 1) as i128;
        if span < 0 {
            lo = lo.checked_add(span).ok_or_else(overflow)?;
        } else {
            hi = hi.checked_add(span).ok_or_else(overflow)?;
        }
    }
    if lo < 0 || hi > bound as i128 {
        return Err(Error::OutOfBounds {
            item: Item::Strided,
            side,
            start: lo,
            end: hi,
            bound,
        });
    }
    Ok(())
}
