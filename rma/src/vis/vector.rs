//! Vector and Indexed descriptions (`gex_VIS_Vector*`, `gex_VIS_Indexed*`).

use super::walk::{Cursor, List, Source, Walk};
use super::{check_range, Error, Item, Plan, Side};

/// Plan a Vector transfer (`gex_VIS_Vector{Put,Get}`).
///
/// `local` and `remote` are `(offset, len)` lists. The data moved is the
/// concatenation of one side's entries, in order, laid into the
/// concatenation of the other side's; entries need not have the same sizes
/// on the two sides, but both lists must total the same number of bytes.
/// Entries with `len == 0` are skipped and their offsets not checked.
///
/// A put passes its `srclist` as `local` and `dstlist` as `remote`; a get
/// its `dstlist` as `local` and `srclist` as `remote`.
pub fn plan_vector(
    local: &[(usize, usize)],
    local_len: usize,
    remote: &[(usize, usize)],
    segment_len: usize,
) -> Result<Plan, Error> {
    walk_vector(local, local_len, remote, segment_len).map(Walk::into_plan)
}

/// Check a Vector transfer as [`plan_vector`] does and return its pieces
/// as a [`Walk`], made a window at a time.
pub fn walk_vector<'a>(
    local: &'a [(usize, usize)],
    local_len: usize,
    remote: &'a [(usize, usize)],
    segment_len: usize,
) -> Result<Walk<'a>, Error> {
    let local_total = check_list(local, Side::Local, local_len)?;
    let remote_total = check_list(remote, Side::Remote, segment_len)?;
    if local_total != remote_total {
        return Err(Error::VectorSizeMismatch {
            local: local_total,
            remote: remote_total,
        });
    }
    Ok(zip(List::Vector(local), List::Vector(remote), local_total))
}

/// Check every non-empty entry against `bound` and give the list's total.
fn check_list(list: &[(usize, usize)], side: Side, bound: usize) -> Result<usize, Error> {
    let mut total = 0usize;
    for (i, &(offset, len)) in list.iter().enumerate() {
        check_range(Item::Piece(i), side, offset, len, bound)?;
        total = total.checked_add(len).ok_or_else(|| Error::Overflow {
            item: Item::Piece(i),
            what: format!("{side} list total {total} + length {len}"),
        })?;
    }
    Ok(total)
}

/// An Indexed description of one side: `offsets.len()` pieces of `len`
/// bytes each, at `offsets`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Indexed<'a> {
    /// Where each piece starts.
    pub offsets: &'a [usize],
    /// The length of every piece.
    pub len: usize,
}

/// Plan an Indexed transfer (`gex_VIS_Indexed{Put,Get}`).
///
/// Each side is `offsets.len()` pieces of `len` bytes; as for
/// [`plan_vector`] the data is the concatenation of one side's pieces laid
/// into the concatenation of the other's, and the totals
/// `count * len` must agree. When a side's `len` is 0 its offsets are not
/// checked (GASNet bounds-checks an address list only when its length is
/// non-zero).
///
/// A put passes its `src*` arguments as `local` and `dst*` as `remote`; a
/// get its `dst*` as `local` and `src*` as `remote`.
pub fn plan_indexed(
    local: Indexed<'_>,
    local_len: usize,
    remote: Indexed<'_>,
    segment_len: usize,
) -> Result<Plan, Error> {
    walk_indexed(local, local_len, remote, segment_len).map(Walk::into_plan)
}

/// Check an Indexed transfer as [`plan_indexed`] does and return its
/// pieces as a [`Walk`], made a window at a time.
pub fn walk_indexed<'a>(
    local: Indexed<'a>,
    local_len: usize,
    remote: Indexed<'a>,
    segment_len: usize,
) -> Result<Walk<'a>, Error> {
    let local_total = check_indexed(local, Side::Local, local_len)?;
    let remote_total = check_indexed(remote, Side::Remote, segment_len)?;
    if local_total != remote_total {
        return Err(Error::IndexedSizeMismatch {
            local_count: local.offsets.len(),
            local_len: local.len,
            local_total,
            remote_count: remote.offsets.len(),
            remote_len: remote.len,
            remote_total,
        });
    }
    Ok(zip(
        List::Indexed(local),
        List::Indexed(remote),
        local_total,
    ))
}

fn check_indexed(d: Indexed<'_>, side: Side, bound: usize) -> Result<usize, Error> {
    for (i, &offset) in d.offsets.iter().enumerate() {
        check_range(Item::Index(i), side, offset, d.len, bound)?;
    }
    d.offsets
        .len()
        .checked_mul(d.len)
        .ok_or_else(|| Error::Overflow {
            item: Item::Whole,
            what: format!("{side} count {} x length {}", d.offsets.len(), d.len),
        })
}

/// Walk two checked lists of equal totals together, a piece for every
/// stretch that is contiguous on both sides.
fn zip<'a>(local: List<'a>, remote: List<'a>, total: usize) -> Walk<'a> {
    Walk::new(
        Source::Zip {
            local: Cursor::new(local),
            remote: Cursor::new(remote),
        },
        total,
    )
}
