//! The target's side of a packed put: a received payload (an encoded
//! piece list, then the bytes the pieces' local offsets index) applied to
//! memory. Peer input: nothing is written unless every piece checks.

use super::{check_range, decode, Error, Item, Side};

/// Apply a received packed put.
///
/// `payload` holds `head` bytes of piece list (as [`encode`](super::encode)
/// or an aggregated batch makes it), then the data the pieces' local
/// offsets index. Every piece is checked first (its data inside the
/// payload's data, its remote range inside `bound` bytes); only then is
/// `write(remote_offset, bytes)` called, once per non-empty piece, in
/// order. Gives the number of pieces applied; on an error `write` was not
/// called.
///
/// ```
/// use rma::vis::{apply_packed, encode, Error, Piece};
///
/// let mut payload = encode(&[Piece { local: 0, remote: 4, len: 2 }]);
/// let head = payload.len();
/// payload.extend_from_slice(b"hi");
/// let mut seg = [0u8; 8];
/// let n = apply_packed(&payload, head, seg.len(), |at, b| {
///     seg[at..at + b.len()].copy_from_slice(b);
///     Ok::<(), Error>(())
/// })
/// .unwrap();
/// assert_eq!((n, &seg[4..6]), (1, &b"hi"[..]));
/// // A segment of 5 bytes: refused, nothing written.
/// assert!(apply_packed(&payload, head, 5, |_, _| -> Result<(), Error> { unreachable!() }).is_err());
/// ```
pub fn apply_packed<E: From<Error>>(
    payload: &[u8],
    head: usize,
    bound: usize,
    mut write: impl FnMut(usize, &[u8]) -> Result<(), E>,
) -> Result<usize, E> {
    let Some((code, data)) = payload.split_at_checked(head) else {
        return Err(Error::Decode {
            at: payload.len(),
            what: "piece list longer than the payload",
        }
        .into());
    };
    let pieces = decode(code)?;
    for (i, p) in pieces.iter().enumerate() {
        check_range(Item::Piece(i), Side::Local, p.local, p.len, data.len())?;
        check_range(Item::Piece(i), Side::Remote, p.remote, p.len, bound)?;
    }
    for p in &pieces {
        // A piece of no bytes may name any offset (check_range accepts
        // it): nothing to slice or write.
        if p.len > 0 {
            write(p.remote, &data[p.local..p.local + p.len])?;
        }
    }
    Ok(pieces.len())
}
