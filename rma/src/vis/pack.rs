//! Packing the pieces' bytes into one payload, and the wire form of a
//! piece list, for transfers of many small pieces sent in one message.
//!
//! A packed put: the initiator sends `encode(plan.pieces())` and
//! `pack(local_buf, plan.pieces(), Side::Local)`; the target runs
//! `decode`, then `unpack(payload, &pieces, Side::Remote, segment)`. A
//! packed get is the mirror image: the target packs with `Side::Remote`,
//! the initiator unpacks with `Side::Local`. Both check every piece against
//! the buffer before copying a byte, so pieces from a peer cannot make them
//! write out of bounds or panic.

use super::{check_range, Error, Item, Piece, Side};

/// Check each piece's `side` range against `bound` and give their total.
fn check_pieces(pieces: &[Piece], side: Side, bound: usize) -> Result<usize, Error> {
    let mut total = 0usize;
    for (i, p) in pieces.iter().enumerate() {
        check_range(Item::Piece(i), side, side.offset(p), p.len, bound)?;
        total = total.checked_add(p.len).ok_or_else(|| Error::Overflow {
            item: Item::Piece(i),
            what: format!("piece total {total} + length {}", p.len),
        })?;
    }
    Ok(total)
}

/// The bytes of `pieces` on `side` of `buf`, concatenated in order.
///
/// Fails (having read nothing) if a piece lies outside `buf`.
pub fn pack(buf: &[u8], pieces: &[Piece], side: Side) -> Result<Vec<u8>, Error> {
    let total = check_pieces(pieces, side, buf.len())?;
    let mut out = Vec::with_capacity(total);
    for p in pieces {
        let at = side.offset(p);
        out.extend_from_slice(&buf[at..at + p.len]);
    }
    Ok(out)
}

/// Scatter `packed` (as made by [`pack`]) into the `side` ranges of
/// `pieces` in `buf`.
///
/// Fails, having written nothing, if a piece lies outside `buf` or
/// `packed` is not exactly the pieces' total length.
pub fn unpack(packed: &[u8], pieces: &[Piece], side: Side, buf: &mut [u8]) -> Result<(), Error> {
    let total = check_pieces(pieces, side, buf.len())?;
    if total != packed.len() {
        return Err(Error::PackedLength {
            got: packed.len(),
            expected: total,
        });
    }
    let mut from = 0;
    for p in pieces {
        let at = side.offset(p);
        buf[at..at + p.len].copy_from_slice(&packed[from..from + p.len]);
        from += p.len;
    }
    Ok(())
}

/// The wire form of a piece list.
///
/// LEB128 varints: the number of pieces, then for each piece its local and
/// its remote offset as zigzag-coded differences from the end of the
/// previous piece on that side (0 before the first), and its length.
/// Regular plans therefore take about 3 bytes a piece. [`decode`] inverts
/// it for any pieces whose ends (`offset + len`) fit in `usize`, as every
/// planned piece's do.
pub fn encode(pieces: &[Piece]) -> Vec<u8> {
    let mut e = Encoder::default();
    for p in pieces {
        e.push(p);
    }
    e.finish()
}

/// [`encode`] one piece at a time, with the encoded length known after
/// each (for filling a message of bounded size).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Encoder {
    body: Vec<u8>,
    n: usize,
    /// End of the previous piece on each side (wrapping: a piece whose
    /// end overflows is refused by `decode` whatever follows it).
    local_end: usize,
    remote_end: usize,
}

/// Varints of one piece, encoded (at most three of [`MAX_VARINT`] bytes).
struct Coded {
    buf: [u8; 3 * MAX_VARINT],
    len: usize,
}

impl Default for Coded {
    fn default() -> Self {
        Coded {
            buf: [0; 3 * MAX_VARINT],
            len: 0,
        }
    }
}

impl Coded {
    fn put(&mut self, mut v: u128) {
        while v >= 0x80 {
            self.buf[self.len] = (v as u8) | 0x80;
            self.len += 1;
            v >>= 7;
        }
        self.buf[self.len] = v as u8;
        self.len += 1;
    }
}

impl Encoder {
    /// The three varints of `p` after the pieces pushed so far.
    #[inline]
    fn codes(&self, p: &Piece) -> [u128; 3] {
        [
            zigzag(p.local as i128 - self.local_end as i128),
            zigzag(p.remote as i128 - self.remote_end as i128),
            p.len as u128,
        ]
    }

    /// Bytes the piece count's varint grows by with one more piece.
    #[inline]
    fn count_growth(&self) -> usize {
        count_growth(self.n as u64)
    }

    /// Bytes the encoding grows by when `p` is pushed.
    pub fn cost(&self, p: &Piece) -> usize {
        let mut c = Coded::default();
        self.codes(p).into_iter().for_each(|v| c.put(v));
        self.count_growth() + c.len
    }

    /// Append `p`.
    pub fn push(&mut self, p: &Piece) {
        let pushed = self.try_push(p, usize::MAX);
        debug_assert!(pushed);
    }

    /// Append `p` if the encoding grows by at most `room` bytes (its
    /// [`cost`](Self::cost)); whether it was. The piece is encoded once
    /// for both; a piece whose three varints take a byte each (the usual
    /// small put near the previous one) is a single 3-byte append.
    /// Always inlined: it is the aggregated put's per-put cost, and as a
    /// call its register saves were a large part of it (PERFORMANCE.md).
    #[inline(always)]
    pub fn try_push(&mut self, p: &Piece, room: usize) -> bool {
        let growth = self.count_growth();
        let small = (
            small_zigzag(p.local, self.local_end),
            small_zigzag(p.remote, self.remote_end),
        );
        if let (Some(l), Some(r), true) = (small.0, small.1, p.len < 0x80) {
            if growth + 3 > room {
                return false;
            }
            self.body.extend_from_slice(&[l, r, p.len as u8]);
        } else if !self.try_push_wide(p, room.saturating_sub(growth)) {
            return false;
        }
        self.n += 1;
        self.local_end = p.local.wrapping_add(p.len);
        self.remote_end = p.remote.wrapping_add(p.len);
        true
    }

    /// [`try_push`](Self::try_push)'s bytes when a varint takes more
    /// than one (`room` left after the count's growth).
    #[inline(never)]
    fn try_push_wide(&mut self, p: &Piece, room: usize) -> bool {
        let mut c = Coded::default();
        self.codes(p).into_iter().for_each(|v| c.put(v));
        if c.len > room {
            return false;
        }
        self.body.extend_from_slice(&c.buf[..c.len]);
        true
    }

    /// Pieces pushed.
    pub fn pieces(&self) -> usize {
        self.n
    }

    /// Length of the encoding so far.
    pub fn len(&self) -> usize {
        varint_len(self.n as u64) + self.body.len()
    }

    /// Whether no piece was pushed.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The encoding, as [`encode`] gives it for the pieces pushed.
    pub fn finish(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.finish_into(&mut out);
        out
    }

    /// [`finish`](Self::finish), appended to `out` (which the caller may
    /// have sized for what follows the encoding too).
    pub fn finish_into(self, out: &mut Vec<u8>) {
        put_varint(out, self.n as u128);
        out.extend_from_slice(&self.body);
    }

    /// Room for `bytes` of encoding without growing (a batch that opens).
    pub fn reserve(&mut self, bytes: usize) {
        self.body.reserve(bytes);
    }
}

/// Bytes the varint of a count `n` grows by when it becomes `n + 1`: one
/// when `n + 1` is a power of 128 above 1, else none (a power-of-two test,
/// where `varint_len(n + 1) - varint_len(n)` takes two bit scans).
#[inline]
fn count_growth(n: u64) -> usize {
    let m = n.wrapping_add(1);
    usize::from(m > 1 && m.is_power_of_two() && m.trailing_zeros() % 7 == 0)
}

/// Bytes of `v`'s varint (the piece count's: the pieces' own are measured
/// by encoding them).
#[inline]
fn varint_len(v: u64) -> usize {
    (64 - (v | 1).leading_zeros() as usize).div_ceil(7)
}

/// Parse a piece list made by [`encode`], rejecting (never panicking on)
/// truncated input, trailing bytes, over-long varints, a piece count larger
/// than the input could hold, and offsets or ends outside `usize`.
///
/// The pieces are not checked against any buffer: [`pack`] and [`unpack`]
/// do that.
pub fn decode(bytes: &[u8]) -> Result<Vec<Piece>, Error> {
    let mut r = Reader { bytes, at: 0 };
    let n = r.usize("piece count larger than usize")?;
    // Every piece takes at least 3 bytes: refuse a count the input cannot
    // hold before allocating for it.
    if n > (bytes.len() - r.at) / 3 {
        return Err(Error::Decode {
            at: 0,
            what: "piece count larger than the input holds",
        });
    }
    let mut pieces = Vec::with_capacity(n);
    let (mut local_end, mut remote_end) = (0usize, 0usize);
    for _ in 0..n {
        let local = r.offset(local_end, "local offset outside usize")?;
        let remote = r.offset(remote_end, "remote offset outside usize")?;
        let at = r.at;
        let len = r.usize("length larger than usize")?;
        let end = |o: usize| {
            let Some(e) = o.checked_add(len) else {
                return Err(Error::Decode {
                    at,
                    what: "piece end outside usize",
                });
            };
            Ok(e)
        };
        local_end = end(local)?;
        remote_end = end(remote)?;
        pieces.push(Piece { local, remote, len });
    }
    if r.at != bytes.len() {
        return Err(Error::Decode {
            at: r.at,
            what: "trailing bytes after the last piece",
        });
    }
    Ok(pieces)
}

/// The largest varint: 10 groups of 7 bits hold a zigzag-coded difference
/// of two `usize`s (66 bits).
const MAX_VARINT: usize = 10;

fn put_varint(out: &mut Vec<u8>, mut v: u128) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The zigzag code of `a - b` when |a - b| < 64, without 128-bit
/// arithmetic (-64, also one byte, is left to the general code).
#[inline]
fn small_zigzag(a: usize, b: usize) -> Option<u8> {
    if a.abs_diff(b) >= 0x40 {
        return None;
    }
    let d = a.wrapping_sub(b) as isize;
    Some(((d << 1) ^ (d >> (isize::BITS - 1))) as u8)
}

fn zigzag(v: i128) -> u128 {
    ((v << 1) ^ (v >> 127)) as u128
}

fn unzigzag(v: u128) -> i128 {
    ((v >> 1) as i128) ^ -((v & 1) as i128)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    /// The next byte if it is a whole varint (below 0x80), not consumed.
    #[inline(always)]
    fn one_byte(&self) -> Option<u8> {
        self.bytes.get(self.at).copied().filter(|b| *b < 0x80)
    }

    #[inline(always)]
    fn varint(&mut self) -> Result<u128, Error> {
        if let Some(b) = self.one_byte() {
            self.at += 1;
            return Ok(u128::from(b));
        }
        self.varint_wide()
    }

    /// [`varint`](Self::varint) of more than one byte, or an error.
    #[inline(never)]
    fn varint_wide(&mut self) -> Result<u128, Error> {
        let start = self.at;
        let mut v = 0u128;
        for i in 0..MAX_VARINT {
            let Some(&b) = self.bytes.get(self.at) else {
                return Err(Error::Decode {
                    at: self.at,
                    what: "input ends inside a piece",
                });
            };
            self.at += 1;
            v |= u128::from(b & 0x7f) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(Error::Decode {
            at: start,
            what: "varint longer than 10 bytes",
        })
    }

    fn usize(&mut self, what: &'static str) -> Result<usize, Error> {
        let at = self.at;
        usize::try_from(self.varint()?).map_err(|_| Error::Decode { at, what })
    }

    /// A zigzag difference from `prev_end`, as an offset. One byte (the
    /// usual piece near the previous one) is decoded without 128-bit
    /// arithmetic; anything else, and every error, by the general code.
    #[inline(always)]
    fn offset(&mut self, prev_end: usize, what: &'static str) -> Result<usize, Error> {
        if let Some(b) = self.one_byte() {
            let d = (b >> 1) as isize ^ -((b & 1) as isize);
            if let Some(o) = prev_end.checked_add_signed(d) {
                self.at += 1;
                return Ok(o);
            }
        }
        let at = self.at;
        let v = unzigzag(self.varint()?) + prev_end as i128;
        usize::try_from(v).map_err(|_| Error::Decode { at, what })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn count_growth_agrees_with_varint_len() {
        let near = |x: u64| x.saturating_sub(3)..=x.saturating_add(3);
        let edges = (0..10).flat_map(|k| near(1u64 << (7 * k)));
        for n in (0..70_000).chain(edges).chain(near(u64::MAX - 3)) {
            let want = varint_len(n.saturating_add(1)) - varint_len(n);
            assert_eq!(count_growth(n), want, "n = {n}");
        }
    }

    /// A one-byte difference that would go below 0 is refused by the
    /// general code, at the byte that holds it.
    #[test]
    fn one_byte_offset_below_zero_is_refused_where_it_is() {
        // One piece: local -1 (zigzag 1), remote 0, length 1.
        assert_eq!(
            decode(&[1, 1, 0, 1]),
            Err(Error::Decode {
                at: 1,
                what: "local offset outside usize"
            })
        );
        // Second piece: remote end 5, then -6 (zigzag 11).
        assert_eq!(
            decode(&[2, 0, 0, 5, 0, 11, 1]),
            Err(Error::Decode {
                at: 5,
                what: "remote offset outside usize"
            })
        );
        assert_eq!(
            decode(&[2, 0, 0, 5, 0, 9, 1]).unwrap()[1],
            Piece {
                local: 5,
                remote: 0,
                len: 1
            }
        );
    }

    /// The one-byte shortcut gives `zigzag`'s code exactly where it
    /// applies, and declines everywhere else (both ends of `usize`).
    #[test]
    fn small_zigzag_agrees_with_zigzag() {
        let bases = [
            0usize,
            1,
            63,
            64,
            1000,
            usize::MAX / 2,
            usize::MAX - 64,
            usize::MAX,
        ];
        for &b in &bases {
            for d in -130i128..=130 {
                let a = b as i128 + d;
                let Ok(a) = usize::try_from(a) else { continue };
                let full = zigzag(a as i128 - b as i128);
                match small_zigzag(a, b) {
                    Some(z) => assert_eq!(u128::from(z), full, "{a} - {b}"),
                    None => assert!(full >= 0x7f, "{a} - {b} declined with code {full}"),
                }
            }
        }
    }
}
