//! Wire format of an Active Message.
//!
//! Every message starts with an 8-byte header:
//!
//! ```text
//! byte 0   kind:2 | nargs:5 | is_request:1   (kind: 0 Short, 1 Medium, 2 Long, 3 Long with inline payload)
//! byte 1   handler index
//! byte 2-3 reserved (zero)
//! byte 4-7 source rank (little endian)
//! ```
//!
//! followed by, for Medium and Long, the payload length (`u32`); then the
//! arguments (`u32` each, little endian), zero padding to 8 bytes; for Long
//! the destination offset in the receiver's segment (`u64`); then an inline
//! payload (Medium, inline Long) and zero padding to 8 bytes. Every message
//! length is a multiple of 8, so consecutive messages in a multi-recv buffer
//! stay aligned. Decoding checks every field against the received length:
//! a malformed or truncated message is an error naming the source and
//! handler, never undefined behaviour.

use crate::{Error, MAX_ARGS};

/// Message alignment inside receive buffers.
pub const ALIGN: usize = 8;
/// Header bytes.
pub const HEADER_LEN: usize = 8;

/// AM categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Arguments only.
    Short,
    /// Arguments and a payload delivered in a temporary buffer.
    Medium,
    /// Arguments and a payload already written to the receiver's segment.
    Long,
    /// A Long whose payload travels inside the message and is copied into
    /// place by the receiver.
    LongInline,
}

impl Kind {
    fn bits(self) -> u8 {
        match self {
            Kind::Short => 0,
            Kind::Medium => 1,
            Kind::Long => 2,
            Kind::LongInline => 3,
        }
    }
    fn from_bits(b: u8) -> Kind {
        match b & 3 {
            0 => Kind::Short,
            1 => Kind::Medium,
            2 => Kind::Long,
            _ => Kind::LongInline,
        }
    }
}

/// The fixed header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Category.
    pub kind: Kind,
    /// Number of arguments (0..=16).
    pub nargs: u8,
    /// Request (else reply).
    pub is_request: bool,
    /// Handler index.
    pub handler: u8,
    /// Sender's rank.
    pub src: u32,
}

/// A decoded message, borrowing from the receive buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Message<'a> {
    /// The header.
    pub header: Header,
    /// Arguments (raw little-endian words; see [`Message::arg`]).
    args: &'a [u8],
    /// Destination offset for Long kinds.
    pub dest_offset: Option<u64>,
    /// Payload length (Medium, Long, LongInline).
    pub payload_len: usize,
    /// Inline payload (Medium, LongInline), empty otherwise.
    pub payload: &'a [u8],
}

impl Message<'_> {
    /// Argument `i` (panics if `i >= nargs`, a caller bug, not peer input).
    #[inline]
    pub fn arg(&self, i: usize) -> u32 {
        let b = &self.args[4 * i..4 * i + 4];
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }

    /// Copy the arguments into `out`; returns how many there are.
    #[inline]
    pub fn args_into(&self, out: &mut [u32; crate::MAX_ARGS]) -> usize {
        words_into(self.args, out)
    }

    /// All arguments.
    pub fn args(&self) -> Vec<u32> {
        (0..self.header.nargs as usize)
            .map(|i| self.arg(i))
            .collect()
    }
}

/// Decode the little-endian argument words in `args` (4 bytes each, at
/// most [`MAX_ARGS`] of them) into `out`; returns how many there are.
#[inline(always)]
pub fn words_into(args: &[u8], out: &mut [u32; MAX_ARGS]) -> usize {
    let mut n = 0;
    for (w, b) in out.iter_mut().zip(args.chunks_exact(4)) {
        *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        n += 1;
    }
    n
}

/// Round up to [`ALIGN`].
#[inline]
pub const fn align_up(n: usize) -> usize {
    (n + ALIGN - 1) & !(ALIGN - 1)
}

/// Bytes before the payload for a message of `kind` with `nargs` arguments.
#[inline]
pub const fn overhead(kind: Kind, nargs: usize) -> usize {
    let len_word = match kind {
        Kind::Short => 0,
        _ => 4,
    };
    let dest = match kind {
        Kind::Long | Kind::LongInline => 8,
        _ => 0,
    };
    align_up(HEADER_LEN + len_word + 4 * nargs) + dest
}

/// Total message length.
#[inline]
pub const fn message_len(kind: Kind, nargs: usize, inline_payload: usize) -> usize {
    align_up(overhead(kind, nargs) + inline_payload)
}

/// Encode a message into `out` (resized to the message length).
/// `payload_len` is the Long payload's length when the payload is not
/// inline; for inline kinds it is `payload.len()`.
pub fn encode(
    out: &mut Vec<u8>,
    header: &Header,
    args: &[u32],
    dest_offset: Option<u64>,
    payload_len: usize,
    payload: &[u8],
) {
    out.clear();
    out.resize(message_len(header.kind, args.len(), payload.len()), 0);
    encode_into(out, header, args, dest_offset, payload_len, payload);
}

/// Encode a message into the front of `out`, which must hold at least
/// [`message_len`] bytes; returns that length. Padding bytes are zeroed.
///
/// On every send's path: stores of fixed size (the header as one word, the
/// arguments four bytes each, the padding as one word) rather than a
/// bounds-checked copy and a `memset` per field.
#[inline(always)]
pub fn encode_into(
    out: &mut [u8],
    header: &Header,
    args: &[u32],
    dest_offset: Option<u64>,
    payload_len: usize,
    payload: &[u8],
) -> usize {
    encode_into_with(
        out,
        header,
        args,
        dest_offset,
        payload_len,
        payload,
        <[u8]>::copy_from_slice,
    )
}

/// [`encode_into`] with the inline payload copied by `copy` (called once,
/// with a destination and a source of the same length): a caller with a
/// copy better suited to its buffers than `copy_from_slice` passes it (the
/// conduit's avoids a slow case of the C library's `memcpy` on some CPUs).
#[inline(always)]
pub fn encode_into_with(
    out: &mut [u8],
    header: &Header,
    args: &[u32],
    dest_offset: Option<u64>,
    payload_len: usize,
    payload: &[u8],
    copy: fn(&mut [u8], &[u8]),
) -> usize {
    if header.kind == Kind::Short {
        encode_short(out, header, args)
    } else {
        encode_other(out, header, args, dest_offset, payload_len, payload, copy)
    }
}

/// The header as the word it is on the wire.
#[inline(always)]
fn header_word(header: &Header) -> u64 {
    let b0 = header.kind.bits() | (header.nargs << 2) | ((header.is_request as u8) << 7);
    u64::from(b0) | (u64::from(header.handler) << 8) | (u64::from(header.src) << 32)
}

/// `encode_into` for a Short: the header word, the arguments, and a zero
/// word of padding after an odd count (inlined where messages are sent).
#[inline(always)]
fn encode_short(out: &mut [u8], header: &Header, args: &[u32]) -> usize {
    debug_assert_eq!(args.len(), header.nargs as usize);
    debug_assert!(args.len() <= MAX_ARGS);
    let n = args.len();
    let len = message_len(Kind::Short, n, 0);
    let out = &mut out[..len];
    out[..HEADER_LEN].copy_from_slice(&header_word(header).to_le_bytes());
    for (w, a) in out[HEADER_LEN..].chunks_exact_mut(4).zip(args) {
        w.copy_from_slice(&a.to_le_bytes());
    }
    if n % 2 == 1 {
        out[len - 4..].copy_from_slice(&[0u8; 4]);
    }
    len
}

/// `encode_into` for every kind but Short.
#[inline(never)]
fn encode_other(
    out: &mut [u8],
    header: &Header,
    args: &[u32],
    dest_offset: Option<u64>,
    payload_len: usize,
    payload: &[u8],
    copy: fn(&mut [u8], &[u8]),
) -> usize {
    debug_assert_eq!(args.len(), header.nargs as usize);
    debug_assert!(args.len() <= MAX_ARGS);
    let len = message_len(header.kind, args.len(), payload.len());
    let out = &mut out[..len];
    // The tail padding (under 8 bytes, after an inline payload) is zeroed
    // first; the fields below overwrite what they cover. len >= 8.
    out[len - ALIGN..].copy_from_slice(&[0u8; ALIGN]);
    out[..HEADER_LEN].copy_from_slice(&header_word(header).to_le_bytes());
    let mut at = HEADER_LEN;
    if header.kind != Kind::Short {
        out[at..at + 4].copy_from_slice(&(payload_len as u32).to_le_bytes());
        at += 4;
    }
    let words = &mut out[at..at + 4 * args.len()];
    for (w, a) in words.chunks_exact_mut(4).zip(args) {
        w.copy_from_slice(&a.to_le_bytes());
    }
    at += 4 * args.len();
    if at % ALIGN != 0 {
        // Fields are 4-byte multiples: the padding is one zero word.
        out[at..at + 4].copy_from_slice(&[0u8; 4]);
        at += 4;
    }
    if matches!(header.kind, Kind::Long | Kind::LongInline) {
        out[at..at + 8].copy_from_slice(&dest_offset.unwrap_or(0).to_le_bytes());
        at += 8;
    }
    if !payload.is_empty() {
        copy(&mut out[at..at + payload.len()], payload);
    }
    len
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

/// Decode the message in `buf` (exactly the bytes received).
#[inline]
pub fn decode(buf: &[u8]) -> Result<Message<'_>, Error> {
    if buf.len() < HEADER_LEN {
        return Err(Error::TruncatedHeader { len: buf.len() });
    }
    let b0 = buf[0];
    let header = Header {
        kind: Kind::from_bits(b0),
        nargs: (b0 >> 2) & 0x1f,
        is_request: b0 & 0x80 != 0,
        handler: buf[1],
        src: u32_at(buf, 4),
    };
    let bad = |why: String| Error::Malformed {
        src: header.src,
        handler: header.handler,
        why,
    };
    if header.nargs as usize > MAX_ARGS {
        return Err(Error::MalformedArgs {
            src: header.src,
            handler: header.handler,
            nargs: header.nargs,
        });
    }
    let nargs = header.nargs as usize;
    let over = overhead(header.kind, nargs);
    if buf.len() < over {
        return Err(bad(format!(
            "{} bytes received, but {:?} with {nargs} arguments needs at least {over}",
            buf.len(),
            header.kind
        )));
    }
    let (payload_len, args_at) = match header.kind {
        Kind::Short => (0, HEADER_LEN),
        _ => (u32_at(buf, HEADER_LEN) as usize, HEADER_LEN + 4),
    };
    let args = &buf[args_at..args_at + 4 * nargs];
    let dest_offset = match header.kind {
        Kind::Long | Kind::LongInline => {
            let at = over - 8;
            let mut w = [0u8; 8];
            w.copy_from_slice(&buf[at..at + 8]);
            Some(u64::from_le_bytes(w))
        }
        _ => None,
    };
    let payload: &[u8] = match header.kind {
        Kind::Medium | Kind::LongInline => {
            let end = over
                .checked_add(payload_len)
                .filter(|&e| e <= buf.len())
                .ok_or_else(|| {
                    bad(format!(
                        "payload of {payload_len} bytes does not fit in the {} bytes received",
                        buf.len()
                    ))
                })?;
            &buf[over..end]
        }
        _ => &[],
    };
    let want = message_len(header.kind, nargs, payload.len());
    if buf.len() != want {
        return Err(bad(format!(
            "{} bytes received for a message of {want} bytes",
            buf.len()
        )));
    }
    Ok(Message {
        header,
        args,
        dest_offset,
        payload_len,
        payload,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// encode_into writes every byte of the message: the same message
    /// encoded over garbage and over zeros is the same.
    #[test]
    fn every_byte_is_written() {
        for kind in [Kind::Short, Kind::Medium, Kind::Long, Kind::LongInline] {
            for nargs in 0..=MAX_ARGS as u8 {
                for plen in [0usize, 1, 3, 4, 7, 8, 9, 15, 16, 17, 100] {
                    let inline = matches!(kind, Kind::Medium | Kind::LongInline);
                    let payload: Vec<u8> = (0..if inline { plen } else { 0 })
                        .map(|i| i as u8 ^ 0x5c)
                        .collect();
                    let h = Header {
                        kind,
                        nargs,
                        is_request: nargs % 2 == 0,
                        handler: 200,
                        src: 0x0102_0304,
                    };
                    let args: Vec<u32> = (0..u32::from(nargs)).map(|i| i * 0x0101_0101).collect();
                    let dest = matches!(kind, Kind::Long | Kind::LongInline).then_some(77);
                    let mut a = vec![0xaau8; 512];
                    let mut b = vec![0u8; 512];
                    let n = encode_into(&mut a, &h, &args, dest, plen, &payload);
                    assert_eq!(encode_into(&mut b, &h, &args, dest, plen, &payload), n);
                    assert_eq!(a[..n], b[..n], "{kind:?} nargs {nargs} payload {plen}");
                    assert_eq!(n % ALIGN, 0);
                    let m = decode(&a[..n]).unwrap();
                    assert_eq!(m.header, h);
                    assert_eq!(m.args(), args);
                    assert_eq!(m.payload, &payload[..]);
                    assert_eq!(m.dest_offset, dest);
                }
            }
        }
    }

    fn roundtrip(kind: Kind, nargs: u8, payload: &[u8], dest: Option<u64>, plen: usize) {
        let h = Header {
            kind,
            nargs,
            is_request: nargs % 2 == 0,
            handler: 130 + nargs,
            src: 0xdead_0000 + nargs as u32,
        };
        let args: Vec<u32> = (0..nargs as u32)
            .map(|i| i.wrapping_mul(0x9e37_79b9))
            .collect();
        let mut buf = Vec::new();
        encode(&mut buf, &h, &args, dest, plen, payload);
        assert_eq!(buf.len() % ALIGN, 0);
        assert_eq!(buf.len(), message_len(kind, nargs as usize, payload.len()));
        let m = decode(&buf).unwrap();
        assert_eq!(m.header, h);
        assert_eq!(m.args(), args);
        assert_eq!(m.payload, payload);
        assert_eq!(m.dest_offset, dest);
        assert_eq!(m.payload_len, plen);
    }

    #[test]
    fn every_kind_and_argument_count_round_trips() {
        let payload: Vec<u8> = (0..1000u32).map(|i| (i * 31) as u8).collect();
        for n in 0..=16u8 {
            roundtrip(Kind::Short, n, &[], None, 0);
            for len in [0usize, 1, 7, 8, 9, 1000] {
                roundtrip(Kind::Medium, n, &payload[..len], None, len);
                roundtrip(
                    Kind::LongInline,
                    n,
                    &payload[..len],
                    Some(13 + len as u64),
                    len,
                );
            }
            roundtrip(Kind::Long, n, &[], Some(4096), 1 << 20);
        }
    }

    #[test]
    fn truncated_and_malformed_messages_name_source_and_handler() {
        assert_eq!(
            decode(&[1, 2, 3]).unwrap_err(),
            Error::TruncatedHeader { len: 3 }
        );
        let h = Header {
            kind: Kind::Medium,
            nargs: 2,
            is_request: true,
            handler: 140,
            src: 3,
        };
        let mut buf = Vec::new();
        encode(&mut buf, &h, &[1, 2], None, 100, &[7u8; 100]);
        let e = decode(&buf[..buf.len() - 8]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "malformed AM from rank 3 for handler 140: payload of 100 bytes does not fit in the 120 bytes received"
        );
        // 17 arguments is impossible to encode but can arrive corrupted.
        let mut bad = buf.clone();
        bad[0] = (bad[0] & 0x83) | (17 << 2);
        assert_eq!(
            decode(&bad).unwrap_err(),
            Error::MalformedArgs {
                src: 3,
                handler: 140,
                nargs: 17
            }
        );
        let mut extra = buf.clone();
        extra.extend_from_slice(&[0; 8]);
        assert!(decode(&extra)
            .unwrap_err()
            .to_string()
            .contains("bytes received for a message of"));
    }

    #[test]
    fn no_input_makes_decode_panic() {
        // A cheap exhaustive-ish sweep over small corrupt buffers.
        let mut seed = 0x1234_5678u32;
        for len in 0..80usize {
            for _ in 0..200 {
                let buf: Vec<u8> = (0..len)
                    .map(|_| {
                        seed ^= seed << 13;
                        seed ^= seed >> 17;
                        seed ^= seed << 5;
                        seed as u8
                    })
                    .collect();
                let _ = decode(&buf);
            }
        }
    }
}
