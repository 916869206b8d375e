//! Property tests: planned pieces against the naive references, invalid
//! descriptors refused without panicking, and decoding of garbage.

use super::reference::{apply_get, apply_put, naive_strided, naive_vector};
use super::*;
use proptest::prelude::*;

/// A small deterministic generator, so one seed builds a whole descriptor
/// whose parts depend on each other (equal totals, in-bounds offsets).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.next() % one_in == 0
    }
}

fn fill(n: usize, rng: &mut Rng) -> Vec<u8> {
    (0..n).map(|_| rng.next() as u8).collect()
}

/// A list of entries inside `bound`, with the odd zero-length entry at a
/// garbage offset; `total` bytes if given.
fn vec_list(rng: &mut Rng, bound: usize, total: Option<usize>) -> Vec<(usize, usize)> {
    let mut list = Vec::new();
    let mut left = total.unwrap_or(usize::MAX);
    let entries = rng.range(0, 6);
    while if total.is_some() {
        left > 0
    } else {
        list.len() < entries
    } {
        if rng.chance(5) {
            list.push((rng.next() as usize, 0));
            continue;
        }
        let len = rng.range(0, bound.min(left));
        let off = rng.range(0, bound - len);
        list.push((off, len));
        left -= len;
    }
    list
}

fn check_vector(seed: u64) {
    let rng = &mut Rng(seed | 1);
    let (llen, slen) = (rng.range(0, 40), rng.range(1, 40));
    let local_list = vec_list(rng, llen, None);
    let total = local_list.iter().map(|e| e.1).sum();
    let remote_list = vec_list(rng, slen, Some(total));
    let plan = plan_vector(&local_list, llen, &remote_list, slen).unwrap();
    assert_eq!(plan.total_bytes(), total);
    let w = rng.range(1, 4);
    windows_match(
        walk_vector(&local_list, llen, &remote_list, slen).unwrap(),
        &plan,
        w,
    );
    assert!(plan.pieces().iter().all(|p| p.len > 0));
    let (local, seg) = (fill(llen, rng), fill(slen, rng));
    // Put: local (source) -> remote (destination).
    let (mut got, mut want) = (seg.clone(), seg.clone());
    apply_put(&plan, &local, &mut got);
    naive_vector(&mut want, &remote_list, &local, &local_list);
    assert_eq!(got, want);
    // Get: remote (source) -> local (destination).
    let (mut got, mut want) = (local.clone(), local.clone());
    apply_get(&plan, &mut got, &seg);
    naive_vector(&mut want, &local_list, &seg, &remote_list);
    assert_eq!(got, want);
}

fn check_indexed(seed: u64) {
    let rng = &mut Rng(seed | 1);
    let (unit, a, b, m) = (
        rng.range(0, 3),
        rng.range(1, 3),
        rng.range(1, 3),
        rng.range(0, 4),
    );
    let (ll, rl) = (unit * a, unit * b);
    let (llen, slen) = (ll + rng.range(0, 30), rl + rng.range(0, 30));
    let offs = |rng: &mut Rng, n: usize, len: usize, bound: usize| -> Vec<usize> {
        (0..n).map(|_| rng.range(0, bound - len)).collect()
    };
    let lo = offs(rng, b * m, ll, llen);
    let ro = offs(rng, a * m, rl, slen);
    let (l, r) = (
        Indexed {
            offsets: &lo,
            len: ll,
        },
        Indexed {
            offsets: &ro,
            len: rl,
        },
    );
    let plan = plan_indexed(l, llen, r, slen).unwrap();
    let w = rng.range(1, 4);
    windows_match(walk_indexed(l, llen, r, slen).unwrap(), &plan, w);
    let as_list = |o: &[usize], len| o.iter().map(|&o| (o, len)).collect::<Vec<_>>();
    let (local_list, remote_list) = (as_list(&lo, ll), as_list(&ro, rl));
    let (local, seg) = (fill(llen, rng), fill(slen, rng));
    let (mut got, mut want) = (seg.clone(), seg.clone());
    apply_put(&plan, &local, &mut got);
    naive_vector(&mut want, &remote_list, &local, &local_list);
    assert_eq!(got, want);
    let (mut got, mut want) = (local.clone(), local.clone());
    apply_get(&plan, &mut got, &seg);
    naive_vector(&mut want, &local_list, &seg, &remote_list);
    assert_eq!(got, want);
}

/// Strides for one side, sometimes those of a contiguous block; the offset
/// and buffer size that just hold the region (plus some slack), and the
/// region's lowest byte.
fn strided_side(
    rng: &mut Rng,
    elemsz: usize,
    count: &[usize],
) -> (Vec<isize>, usize, usize, usize) {
    let contiguous = rng.chance(3);
    let mut run = elemsz as isize;
    let mut strides = Vec::new();
    let (mut lo, mut hi) = (0isize, elemsz as isize);
    for &c in count {
        let s = if contiguous {
            run
        } else {
            rng.range(0, 40) as isize - 20
        };
        run *= c.max(1) as isize;
        strides.push(s);
        let span = s * (c.max(1) as isize - 1);
        if span < 0 {
            lo += span
        } else {
            hi += span
        }
    }
    let first = rng.range(0, 4);
    let offset = (-lo) as usize + first;
    let len = offset + hi as usize + rng.range(0, 4);
    (strides, offset, len, first)
}

fn check_strided(seed: u64) {
    let rng = &mut Rng(seed | 1);
    let elemsz = rng.range(0, 5);
    let count: Vec<usize> = (0..rng.range(0, 4))
        .map(|_| {
            let lo = usize::from(!rng.chance(12));
            rng.range(lo, 4)
        })
        .collect();
    let (ls, loff, llen, _) = strided_side(rng, elemsz, &count);
    let (rs, roff, slen, _) = strided_side(rng, elemsz, &count);
    let walk = walk_strided(
        Strided {
            offset: loff,
            strides: &ls,
        },
        llen,
        Strided {
            offset: roff,
            strides: &rs,
        },
        slen,
        elemsz,
        &count,
    );
    // What plan_strided returns.
    let res = walk.clone().map(Walk::into_plan);
    let total = elemsz * count.iter().product::<usize>();
    if total > llen.max(slen) {
        assert!(
            matches!(res, Err(Error::DestinationOverlaps { .. })),
            "{res:?}"
        );
        return;
    }
    let plan = res.unwrap();
    assert_eq!(plan.total_bytes(), total);
    let w = rng.range(1, 4);
    windows_match(walk.unwrap(), &plan, w);
    let (local, seg) = (fill(llen, rng), fill(slen, rng));
    let (mut got, mut want) = (seg.clone(), seg.clone());
    apply_put(&plan, &local, &mut got);
    naive_strided(&mut want, roff, &rs, &local, loff, &ls, elemsz, &count);
    assert_eq!(got, want);
    let (mut got, mut want) = (local.clone(), local.clone());
    apply_get(&plan, &mut got, &seg);
    naive_strided(&mut want, loff, &ls, &seg, roff, &rs, elemsz, &count);
    assert_eq!(got, want);
    // Packing the plan moves the same bytes.
    let packed = pack(&local, plan.pieces(), Side::Local).unwrap();
    let pieces = decode(&encode(plan.pieces())).unwrap();
    let mut via = seg.clone();
    unpack(&packed, &pieces, Side::Remote, &mut via).unwrap();
    let mut direct = seg.clone();
    apply_put(&plan, &local, &mut direct);
    assert_eq!(via, direct);
}

/// A walk taken `w` pieces at a time gives windows of at most `w` pieces
/// whose concatenation is the whole plan, and totals that add up.
fn windows_match(mut walk: Walk<'_>, plan: &Plan, w: usize) {
    assert_eq!(walk.total_bytes(), plan.total_bytes());
    let (mut pieces, mut bytes) = (Vec::new(), 0);
    while let Some(win) = walk.next_window(w) {
        assert!(!win.is_empty() && win.piece_count() <= w, "{win:?}");
        assert_eq!(win.total_bytes(), win.pieces().iter().map(|p| p.len).sum());
        bytes += win.total_bytes();
        pieces.extend_from_slice(win.pieces());
    }
    assert_eq!(pieces, plan.pieces());
    assert_eq!(bytes, plan.total_bytes());
    assert!(walk.next_window(w).is_none());
}

/// A successful plan only names bytes inside both buffers.
fn in_bounds(plan: &Plan, llen: usize, slen: usize) {
    for p in plan.pieces() {
        assert!(
            p.len > 0 && p.local + p.len <= llen && p.remote + p.len <= slen,
            "{p:?}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn vector_matches_reference(seed in any::<u64>()) { check_vector(seed) }

    #[test]
    fn indexed_matches_reference(seed in any::<u64>()) { check_indexed(seed) }

    #[test]
    fn strided_matches_reference(seed in any::<u64>()) { check_strided(seed) }

    /// One entry pushed past the end of its buffer (or to the top of the
    /// address space) is always refused.
    #[test]
    fn vector_out_of_bounds_errors(seed in any::<u64>(), past in 1usize..1000, huge in any::<bool>()) {
        let rng = &mut Rng(seed | 1);
        let llen = rng.range(1, 40);
        let mut local = vec_list(rng, llen, None);
        local.push((0, rng.range(1, llen)));
        let total = local.iter().map(|e| e.1).sum();
        let remote = vec![(0, total)];
        let i = loop {
            let i = rng.range(0, local.len() - 1);
            if local[i].1 > 0 { break i }
        };
        local[i].0 = if huge { usize::MAX - rng.range(0, local[i].1 - 1) } else { llen - local[i].1 + past };
        let e = plan_vector(&local, llen, &remote, total).unwrap_err();
        let is_item = |item| item == Item::Piece(i);
        prop_assert!(match &e {
            Error::OutOfBounds { item, side: Side::Local, .. } => is_item(*item),
            Error::Overflow { item, .. } => is_item(*item),
            _ => false,
        }, "{e}");
    }

    /// An indexed offset past the end is refused.
    #[test]
    fn indexed_out_of_bounds_errors(offsets in prop::collection::vec(0usize..64, 1..8), len in 1usize..8, bad in 0usize..8, shift in 1usize..usize::MAX) {
        let bad = bad % offsets.len();
        let mut offs: Vec<usize> = offsets.iter().map(|o| o % (64 - len + 1)).collect();
        offs[bad] = (64 - len).saturating_add(shift);
        let l = Indexed { offsets: &offs, len };
        let r = Indexed { offsets: &[0], len: len * offs.len() };
        let e = plan_indexed(r, 64, l, 64).unwrap_err();
        prop_assert!(matches!(e, Error::OutOfBounds { item: Item::Index(i), side: Side::Remote, .. } | Error::Overflow { item: Item::Index(i), .. } if i == bad), "{e}");
    }

    /// A strided region moved past either end is refused.
    #[test]
    fn strided_out_of_bounds_errors(seed in any::<u64>(), shift in 1usize..usize::MAX / 2, down in any::<bool>()) {
        let rng = &mut Rng(seed | 1);
        let elemsz = rng.range(1, 5);
        let count: Vec<usize> = (0..rng.range(0, 4)).map(|_| rng.range(1, 4)).collect();
        let (ls, loff, llen, _) = strided_side(rng, elemsz, &count);
        let (rs, roff, slen, first) = strided_side(rng, elemsz, &count);
        // Move the remote region's lowest byte to -shift (or, wrapping, to
        // 2^64 - shift >= 2^63), or past the segment's end.
        let roff = if down {
            roff.wrapping_sub(first).wrapping_sub(shift)
        } else {
            roff.saturating_add(slen).saturating_add(shift)
        };
        let res = plan_strided(Strided { offset: loff, strides: &ls }, llen, Strided { offset: roff, strides: &rs }, slen, elemsz, &count);
        prop_assert!(matches!(res, Err(Error::OutOfBounds { side: Side::Remote, .. } | Error::Overflow { .. })), "{res:?}");
    }

    /// Arbitrary (mostly huge) descriptors never panic, and whatever they
    /// plan is inside both buffers.
    #[test]
    fn garbage_never_panics(
        llen in 0usize..4096, slen in 0usize..4096,
        loff in any::<usize>(), roff in any::<usize>(),
        ls in prop::collection::vec(any::<isize>(), 0..4),
        rs in prop::collection::vec(any::<isize>(), 0..4),
        count in prop::collection::vec(prop_oneof![0usize..4, any::<usize>()], 0..4),
        elemsz in prop_oneof![0usize..8, any::<usize>()],
        vl in prop::collection::vec((any::<usize>(), prop_oneof![0usize..8, any::<usize>()]), 0..4),
        vr in prop::collection::vec((any::<usize>(), prop_oneof![0usize..8, any::<usize>()]), 0..4),
    ) {
        if let Ok(p) = plan_strided(Strided { offset: loff, strides: &ls }, llen, Strided { offset: roff, strides: &rs }, slen, elemsz, &count) {
            in_bounds(&p, llen, slen);
        }
        if let Ok(p) = plan_vector(&vl, llen, &vr, slen) {
            in_bounds(&p, llen, slen);
        }
        let (lo, ro): (Vec<usize>, Vec<usize>) = (vl.iter().map(|e| e.0).collect(), vr.iter().map(|e| e.0).collect());
        if let Ok(p) = plan_indexed(Indexed { offsets: &lo, len: elemsz }, llen, Indexed { offsets: &ro, len: elemsz }, slen) {
            in_bounds(&p, llen, slen);
        }
    }

    #[test]
    fn decode_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
        if let Ok(pieces) = decode(&bytes) {
            let mut seg = vec![0u8; 32];
            let _ = pack(&seg, &pieces, Side::Remote);
            let _ = unpack(&bytes, &pieces, Side::Remote, &mut seg);
        }
    }

    #[test]
    fn wire_form_round_trips(pieces in prop::collection::vec((any::<usize>(), any::<usize>(), any::<usize>()), 0..8)) {
        let pieces: Vec<Piece> = pieces.into_iter().map(|(l, r, n)| {
            let len = n % (usize::MAX - l.max(r)).saturating_add(1).max(1);
            Piece { local: l, remote: r, len: len.min(usize::MAX - l.max(r)) }
        }).collect();
        prop_assert_eq!(decode(&encode(&pieces)).unwrap(), pieces);
    }

    #[test]
    fn encoder_cost_is_exact(pieces in prop::collection::vec((0usize..1 << 40, 0usize..1 << 40, 1usize..1 << 20), 0..300)) {
        let pieces: Vec<Piece> = pieces.into_iter().map(|(local, remote, len)| Piece { local, remote, len }).collect();
        let mut e = Encoder::default();
        for p in &pieces {
            let (before, cost) = (e.len(), e.cost(p));
            // One byte short of its cost: refused, the encoder unchanged.
            let kept = e.clone();
            prop_assert!(!e.try_push(p, cost - 1));
            prop_assert_eq!(&e, &kept);
            prop_assert!(e.try_push(p, cost));
            prop_assert_eq!(e.len(), before + cost);
        }
        prop_assert_eq!(e.pieces(), pieces.len());
        let wire = e.finish();
        prop_assert_eq!(wire.len(), encode(&pieces).len());
        prop_assert_eq!(decode(&wire).unwrap(), pieces);
    }
}
