//! Target `vis_packed`: a received packed put (an aggregated batch of small
//! puts, or a VIS transfer sent packed) as the target applies it
//! (`rma::vis::apply_packed`, which `conduit`'s `on_vis_put` calls with
//! the rank's segment).
//!
//! Input: 2 bytes of piece-list length (`head`, little-endian), 1 byte
//! choosing the segment size (0, 64 or 4096 bytes), then the payload.
//!
//! Checked besides "no panic":
//! * on an error nothing was written; on success one write per non-empty
//!   piece, in order, each inside the segment and carrying exactly the
//!   payload bytes the piece names;
//! * the decoded pieces re-encode (`encode`, and `Encoder` one piece at a
//!   time with `cost` and `try_push`) to a list no longer than the input's
//!   (which may use longer varints than needed) that decodes to the same
//!   pieces.

use rma::aggregate::Aggregator;
use rma::vis::{apply_packed, decode, encode, Encoder, Error, Piece};

/// Segment sizes the third input byte picks from.
pub const SEGMENTS: [usize; 3] = [0, 64, 4096];

/// One fuzz input.
pub fn run(data: &[u8]) {
    if data.len() < 3 {
        return;
    }
    let head = usize::from(u16::from_le_bytes([data[0], data[1]]));
    let bound = SEGMENTS[usize::from(data[2]) % SEGMENTS.len()];
    let payload = &data[3..];
    let mut seg = vec![0u8; bound];
    let mut writes: Vec<(usize, Vec<u8>)> = Vec::new();
    let got = apply_packed(payload, head, bound, |at, b| {
        assert!(
            at + b.len() <= bound,
            "write of {}..{} past {bound}",
            at,
            at + b.len()
        );
        seg[at..at + b.len()].copy_from_slice(b);
        writes.push((at, b.to_vec()));
        Ok::<(), Error>(())
    });
    match got {
        Err(e) => {
            assert!(
                writes.is_empty(),
                "refused ({e}) after {} writes",
                writes.len()
            );
            assert!(
                refusable(payload, head, bound),
                "refused a valid payload: {e}"
            );
        }
        Ok(n) => {
            let (code, bytes) = payload.split_at(head);
            let pieces = decode(code).expect("applied pieces decode");
            assert_eq!(n, pieces.len());
            let written: Vec<&Piece> = pieces.iter().filter(|p| p.len > 0).collect();
            assert_eq!(written.len(), writes.len(), "one write per non-empty piece");
            for (p, (at, b)) in written.iter().zip(&writes) {
                assert_eq!(*at, p.remote);
                assert_eq!(&b[..], &bytes[p.local..p.local + p.len]);
            }
            check_reencode(code, &pieces);
        }
    }
}

/// Whether the payload has a fault, found independently of
/// `apply_packed`: a piece list longer than the payload or malformed, or a
/// piece outside the data or the segment (an empty one past either end).
fn refusable(payload: &[u8], head: usize, bound: usize) -> bool {
    let Some((code, data)) = payload.split_at_checked(head) else {
        return true;
    };
    let Ok(pieces) = decode(code) else {
        return true;
    };
    let outside = |off: usize, len: usize, end: usize| off.checked_add(len).is_none_or(|e| e > end);
    pieces
        .iter()
        .any(|p| outside(p.local, p.len, data.len()) || outside(p.remote, p.len, bound))
}

fn check_reencode(code: &[u8], pieces: &[Piece]) {
    let wire = encode(pieces);
    assert!(wire.len() <= code.len(), "re-encoding grew");
    assert_eq!(decode(&wire).expect("re-encoded list decodes"), pieces);
    let mut e = Encoder::default();
    for p in pieces {
        let cost = e.cost(p);
        assert!(
            !e.try_push(p, cost - 1),
            "pushed one byte short of its cost"
        );
        assert!(e.try_push(p, cost));
    }
    assert_eq!(e.finish(), wire);
}

/// The input for a payload of `head` bytes of piece list, on segment
/// `seg` (an index into [`SEGMENTS`]).
fn input(head: usize, seg: u8, payload: &[u8]) -> Vec<u8> {
    let mut v = (head as u16).to_le_bytes().to_vec();
    v.push(seg);
    v.extend_from_slice(payload);
    v
}

fn packed(pieces: &[Piece], data: &[u8]) -> (usize, Vec<u8>) {
    let mut p = encode(pieces);
    let head = p.len();
    p.extend_from_slice(data);
    (head, p)
}

/// Valid payloads and a few refused ones.
pub fn seeds() -> crate::Seeds {
    let mut out = Vec::new();
    // An aggregated batch of small puts, as an initiator sends it.
    let mut agg = Aggregator::new(1, 64, 8192).expect("an aggregator");
    for (i, off) in [0usize, 8, 16, 4000, 24].into_iter().enumerate() {
        assert!(agg.add(0, off, &[i as u8 + 1; 8]).is_none());
    }
    for (_, b) in agg.take_open() {
        let (payload, head) = b.into_payload();
        out.push(("batch-5".to_string(), input(head, 2, &payload)));
        out.push(("batch-small-segment".to_string(), input(head, 1, &payload)));
    }
    let (head, p) = packed(&[], &[]);
    out.push(("empty".to_string(), input(head, 0, &p)));
    let wide = [Piece {
        local: 0,
        remote: 1000,
        len: 200,
    }];
    let (head, p) = packed(&wide, &[7; 200]);
    out.push(("wide-varints".to_string(), input(head, 2, &p)));
    out.push(("head-past-payload".to_string(), input(p.len() + 1, 2, &p)));
    out.push(("data-short".to_string(), input(head, 2, &p[..p.len() - 1])));
    out.push((
        "truncated-list".to_string(),
        input(head - 1, 2, &p[..head - 1]),
    ));
    let strided: Vec<Piece> = (0..4)
        .map(|i| Piece {
            local: 4 * i,
            remote: 64 * i,
            len: 4,
        })
        .collect();
    let (head, p) = packed(&strided, &[9; 16]);
    out.push(("strided-4".to_string(), input(head, 2, &p)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The seeds reach both outcomes: the valid payloads apply, the
    /// refused ones are refused (so the harness's checks of each run).
    #[test]
    fn seeds_apply_or_are_refused_as_named() {
        for (name, bytes) in seeds() {
            let head = usize::from(u16::from_le_bytes([bytes[0], bytes[1]]));
            let bound = SEGMENTS[usize::from(bytes[2]) % SEGMENTS.len()];
            let got = apply_packed(&bytes[3..], head, bound, |_, _| Ok::<(), Error>(()));
            let refused = matches!(
                name.as_str(),
                "batch-small-segment" | "head-past-payload" | "data-short" | "truncated-list"
            );
            assert_eq!(got.is_err(), refused, "{name}: {got:?}");
        }
    }
}
