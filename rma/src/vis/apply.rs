//! The target's side of a packed put: a received payload (an encoded
//! piece list, then the bytes the pieces' local offsets index) applied to
//! memory. Peer input: nothing is written unless every piece checks.

use super::{check_range, decode, Error, Item, Side};

/// `check_range`, and for a piece of no bytes its offset at most `bound`
/// (which `check_range` lets pass: plans never hold empty pieces, but a
/// peer's list may).
fn check_piece(i: usize, side: Side, offset: usize, len: usize, bound: usize) -> Result<(), Error> {
    if len == 0 && offset > bound {
        return Err(Error::OutOfBounds {
            item: Item::Piece(i),
            side,
            start: offset as i128,
            end: offset as i128,
            bound,
        });
    }
    check_range(Item::Piece(i), side, offset, len, bound)
}

/// Apply a received packed put.
///
/// `payload` holds `head` bytes of piece list (as [`encode`](super::encode)
/// or an aggregated batch makes it), then the data the pieces' local
/// offsets index. Every piece is checked first (its data inside the
/// payload's data, its remote range inside `bound` bytes; a piece of no
/// bytes must name offsets no further than the ends); only then is
/// `write(remote_offset, bytes)` called, once per non-empty piece, in
/// order. Gives the number of pieces applied. When a check fails nothing
/// was written; an error from `write` stops the writes after the ones
/// already made.
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
        check_piece(i, Side::Local, p.local, p.len, data.len())?;
        check_piece(i, Side::Remote, p.remote, p.len, bound)?;
    }
    for p in &pieces {
        // A piece of no bytes has nothing to write.
        if p.len > 0 {
            write(p.remote, &data[p.local..p.local + p.len])?;
        }
    }
    Ok(pieces.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vis::{encode, Piece};

    fn apply(pieces: &[Piece], data: &[u8], bound: usize) -> Result<usize, Error> {
        let mut payload = encode(pieces);
        let head = payload.len();
        payload.extend_from_slice(data);
        apply_packed(&payload, head, bound, |_, _| Ok::<(), Error>(()))
    }

    /// Empty pieces are accepted up to the ends, refused past them (as
    /// the target refused them before `apply_packed`).
    #[test]
    fn empty_pieces_name_offsets_up_to_the_ends() {
        let p = |local, remote| Piece {
            local,
            remote,
            len: 0,
        };
        assert_eq!(apply(&[p(4, 8)], &[0; 4], 8), Ok(1));
        assert!(matches!(
            apply(&[p(5, 8)], &[0; 4], 8),
            Err(Error::OutOfBounds {
                side: Side::Local,
                ..
            })
        ));
        assert!(matches!(
            apply(&[p(4, 9)], &[0; 4], 8),
            Err(Error::OutOfBounds {
                side: Side::Remote,
                ..
            })
        ));
    }

    #[test]
    fn a_list_longer_than_the_payload_is_refused() {
        assert!(matches!(
            apply_packed(&[0u8; 3], 4, 8, |_, _| Ok::<(), Error>(())),
            Err(Error::Decode { at: 3, .. })
        ));
    }
}
