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
    local_end: i128,
    remote_end: i128,
}

impl Encoder {
    /// The three varints of `p` after the pieces pushed so far.
    fn codes(&self, p: &Piece) -> [u128; 3] {
        [
            zigzag(p.local as i128 - self.local_end),
            zigzag(p.remote as i128 - self.remote_end),
            p.len as u128,
        ]
    }

    /// Bytes the encoding grows by when `p` is pushed.
    pub fn cost(&self, p: &Piece) -> usize {
        let grow = varint_len((self.n + 1) as u128) - varint_len(self.n as u128);
        grow + self.codes(p).iter().map(|&v| varint_len(v)).sum::<usize>()
    }

    /// Append `p`.
    pub fn push(&mut self, p: &Piece) {
        for v in self.codes(p) {
            put_varint(&mut self.body, v);
        }
        self.n += 1;
        self.local_end = p.local as i128 + p.len as i128;
        self.remote_end = p.remote as i128 + p.len as i128;
    }

    /// Pieces pushed.
    pub fn pieces(&self) -> usize {
        self.n
    }

    /// Length of the encoding so far.
    pub fn len(&self) -> usize {
        varint_len(self.n as u128) + self.body.len()
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

fn varint_len(v: u128) -> usize {
    (128 - v.leading_zeros() as usize).div_ceil(7).max(1)
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
            o.checked_add(len).ok_or(Error::Decode {
                at,
                what: "piece end outside usize",
            })
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
    fn varint(&mut self) -> Result<u128, Error> {
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

    /// A zigzag difference from `prev_end`, as an offset.
    fn offset(&mut self, prev_end: usize, what: &'static str) -> Result<usize, Error> {
        let at = self.at;
        let v = unzigzag(self.varint()?) + prev_end as i128;
        usize::try_from(v).map_err(|_| Error::Decode { at, what })
    }
}
