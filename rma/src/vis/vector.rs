//! Vector and Indexed descriptions (`gex_VIS_Vector*`, `gex_VIS_Indexed*`).

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
    let local_total = check_list(local, Side::Local, local_len)?;
    let remote_total = check_list(remote, Side::Remote, segment_len)?;
    if local_total != remote_total {
        return Err(Error::VectorSizeMismatch {
            local: local_total,
            remote: remote_total,
        });
    }
    Ok(zip(local.iter().copied(), remote.iter().copied()))
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
    let l = local.offsets.iter().map(|&o| (o, local.len));
    let r = remote.offsets.iter().map(|&o| (o, remote.len));
    Ok(zip(l, r))
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

/// Walk two checked lists of equal totals together, emitting a piece for
/// every stretch that is contiguous on both sides.
fn zip(
    local: impl Iterator<Item = (usize, usize)>,
    remote: impl Iterator<Item = (usize, usize)>,
) -> Plan {
    let mut plan = Plan::default();
    let mut local = local.filter(|&(_, len)| len > 0);
    let mut remote = remote.filter(|&(_, len)| len > 0);
    let mut l = local.next();
    let mut r = remote.next();
    while let (Some((lo, ll)), Some((ro, rl))) = (l, r) {
        let n = ll.min(rl);
        plan.push(lo, ro, n);
        l = if n == ll {
            local.next()
        } else {
            Some((lo + n, ll - n))
        };
        r = if n == rl {
            remote.next()
        } else {
            Some((ro + n, rl - n))
        };
    }
    plan
}
