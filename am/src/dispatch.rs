//! What to do with a received message: decode it, tell the conduit's own
//! messages from the client's, and check a client message against the
//! handler registered at its index (kind, direction, argument count) and,
//! for a Long, its payload's place against this rank's segment.

use crate::handlers::{Category, HandlerTable, Signature, CLIENT_BASE};
use crate::wire::{self, Kind, Message};
use crate::{Error, MAX_ARGS};

/// A decoded message and where it goes.
#[derive(Debug)]
pub enum Delivery<'a, F> {
    /// For the conduit (barrier, exit): index below 128.
    Internal(Message<'a>),
    /// For a client handler.
    Client(ClientMessage<'a, F>),
}

/// A client message, checked.
#[derive(Debug)]
pub struct ClientMessage<'a, F> {
    /// The registered handler.
    pub handler: &'a F,
    /// The message.
    pub msg: Message<'a>,
    /// What it was checked against.
    pub signature: Signature,
    /// For Long: where the payload lies in this rank's segment
    /// (`offset`, `len`); an inline Long's payload must be copied there
    /// before the handler runs.
    pub long: Option<(usize, usize)>,
}

/// Up to [`MAX_ARGS`] arguments, without allocating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Args {
    words: [u32; MAX_ARGS],
    n: u8,
}

impl Args {
    /// Copy `msg`'s arguments out of the wire bytes (done right before the
    /// handler runs, so that the checked message moves without them).
    #[inline]
    pub fn of(msg: &Message<'_>) -> Args {
        let mut words = [0u32; MAX_ARGS];
        let n = msg.args_into(&mut words) as u8;
        Args { words, n }
    }

    /// The arguments.
    #[inline]
    pub fn as_slice(&self) -> &[u32] {
        &self.words[..self.n as usize]
    }
}

fn category(kind: Kind) -> Category {
    match kind {
        Kind::Short => Category::Short,
        Kind::Medium => Category::Medium,
        Kind::Long | Kind::LongInline => Category::Long,
    }
}

/// Decode `bytes`, which arrived on the request endpoint when
/// `on_request_endpoint`, and find their handler in `table`. For a Long,
/// `segment_len` is this rank's segment size (`None` without a segment).
///
/// Inlined into the caller, so that the checked message is built in place
/// (it is on every received message's path).
#[inline(always)]
pub fn classify<'a, F>(
    table: &'a HandlerTable<F>,
    bytes: &'a [u8],
    on_request_endpoint: bool,
    segment_len: Option<usize>,
) -> Result<Delivery<'a, F>, Error> {
    let msg = wire::decode(bytes)?;
    let h = msg.header;
    if h.handler < CLIENT_BASE {
        return Ok(Delivery::Internal(msg));
    }
    let got = Signature {
        category: category(h.kind),
        is_request: h.is_request,
        nargs: h.nargs,
    };
    // A request on the reply endpoint (or the reverse) cannot match the
    // table of this side: report it as what it claims to be.
    let want_side = Signature {
        is_request: on_request_endpoint,
        ..got
    };
    if want_side != got {
        return Err(Error::SignatureMismatch {
            src: h.src,
            index: h.handler,
            got,
            want: want_side,
        });
    }
    let handler = table.dispatch(h.handler, got, h.src)?;
    let long = match h.kind {
        Kind::Long | Kind::LongInline => {
            let seg = segment_len.ok_or_else(|| Error::Malformed {
                src: h.src,
                handler: h.handler,
                why: "Long payload arrived, but this rank has no segment attached".into(),
            })?;
            let off = msg.dest_offset.unwrap_or(0);
            // No bytes: nothing lands, and the offset is the handler's
            // as sent (see `send::Limits::plan`).
            let fits = msg.payload_len == 0
                || off
                    .checked_add(msg.payload_len as u64)
                    .is_some_and(|e| e <= seg as u64);
            if !fits {
                return Err(Error::Malformed {
                    src: h.src,
                    handler: h.handler,
                    why: format!(
                        "Long payload of {} bytes at offset {off} falls outside this rank's {seg}-byte segment",
                        msg.payload_len
                    ),
                });
            }
            Some((off as usize, msg.payload_len))
        }
        _ => None,
    };
    Ok(Delivery::Client(ClientMessage {
        handler,
        msg,
        signature: got,
        long,
    }))
}

/// A Short message for a client handler registered with exactly the
/// message's signature: the common message, checked in one pass over its
/// header word by [`classify_short`].
#[derive(Debug)]
pub struct ShortMessage<'a, F> {
    /// The registered handler.
    pub handler: &'a F,
    /// The handler index the message named.
    pub index: u8,
    /// The sender's rank.
    pub src: u32,
    /// The arguments' wire bytes (4 per argument).
    args: &'a [u8],
}

impl<F> ShortMessage<'_, F> {
    /// Copy the arguments into `out`; returns how many there are.
    #[inline(always)]
    pub fn args_into(&self, out: &mut [u32; MAX_ARGS]) -> usize {
        wire::words_into(self.args, out)
    }
}

/// The one-pass path for the common message: `Some` exactly when `bytes`
/// hold a well-formed Short whose side is the endpoint's, for a client
/// handler registered with exactly its signature (no widening), and then
/// the same handler and arguments [`classify`] gives. Everything else
/// (`None`) is for `classify`, which reports what is wrong with it.
///
/// On every received message's path: the header is read as one word and
/// the message is not built as a general [`Message`].
#[inline(always)]
pub fn classify_short<'a, F>(
    table: &'a HandlerTable<F>,
    bytes: &'a [u8],
    on_request_endpoint: bool,
) -> Option<ShortMessage<'a, F>> {
    let head: [u8; wire::HEADER_LEN] = bytes.get(..wire::HEADER_LEN)?.try_into().ok()?;
    let w = u64::from_le_bytes(head);
    let b0 = w as u8;
    // Kind bits 0 (Short), the direction bit the endpoint's.
    if b0 & 3 != 0 || (b0 & 0x80 != 0) != on_request_endpoint {
        return None;
    }
    let nargs = (b0 >> 2) & 0x1f;
    let index = (w >> 8) as u8;
    let n = nargs as usize;
    if index < CLIENT_BASE || n > MAX_ARGS || bytes.len() != wire::message_len(Kind::Short, n, 0) {
        return None;
    }
    let sig = Signature {
        category: Category::Short,
        is_request: on_request_endpoint,
        nargs,
    };
    let handler = table.exact(index, sig)?;
    Some(ShortMessage {
        handler,
        index,
        src: (w >> 32) as u32,
        args: &bytes[wire::HEADER_LEN..wire::HEADER_LEN + 4 * n],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::Widen;
    use crate::wire::{encode, Header};

    fn msg(
        kind: Kind,
        is_request: bool,
        handler: u8,
        nargs: u8,
        dest: Option<u64>,
        plen: usize,
    ) -> Vec<u8> {
        let h = Header {
            kind,
            nargs,
            is_request,
            handler,
            src: 3,
        };
        let args: Vec<u32> = (0..nargs as u32).collect();
        let payload = vec![9u8; if kind == Kind::Long { 0 } else { plen }];
        let mut b = Vec::new();
        encode(&mut b, &h, &args, dest, plen, &payload);
        b
    }

    #[test]
    fn client_and_internal_messages() {
        let t = HandlerTable::new();
        let s = Signature {
            category: Category::Short,
            is_request: true,
            nargs: 2,
        };
        t.register(200, s, "h").unwrap();
        let b = msg(Kind::Short, true, 200, 2, None, 0);
        match classify(&t, &b, true, None).unwrap() {
            Delivery::Client(c) => {
                assert_eq!(*c.handler, "h");
                assert_eq!(Args::of(&c.msg).as_slice(), &[0, 1]);
                assert_eq!(c.long, None);
            }
            Delivery::Internal(_) => panic!("client message taken as internal"),
        }
        let b = msg(Kind::Short, true, 1, 4, None, 0);
        assert!(matches!(
            classify(&t, &b, true, None).unwrap(),
            Delivery::Internal(_)
        ));
        // The same message on the reply endpoint.
        let b = msg(Kind::Short, true, 200, 2, None, 0);
        assert_eq!(
            classify(&t, &b, false, None).unwrap_err().to_string(),
            "received a short request with 2 arguments from rank 3 for handler index 200, which is registered as a short reply with 2 arguments"
        );
    }

    #[test]
    fn long_payload_is_checked_against_the_segment() {
        let t = HandlerTable::new();
        let s = Signature {
            category: Category::Long,
            is_request: true,
            nargs: 0,
        };
        t.register(130, s, ()).unwrap();
        let ok = msg(Kind::LongInline, true, 130, 0, Some(4000), 96);
        match classify(&t, &ok, true, Some(4096)).unwrap() {
            Delivery::Client(c) => assert_eq!(c.long, Some((4000, 96))),
            Delivery::Internal(_) => panic!(),
        }
        let over = msg(Kind::Long, true, 130, 0, Some(4000), 97);
        assert_eq!(
            classify(&t, &over, true, Some(4096)).unwrap_err().to_string(),
            "malformed AM from rank 3 for handler 130: Long payload of 97 bytes at offset 4000 falls outside this rank's 4096-byte segment"
        );
        assert!(classify(&t, &ok, true, None).is_err());
    }

    /// A table with Short handlers on both sides, widened ones, other
    /// categories and free indices; each entry is its own index.
    fn short_table() -> HandlerTable<u8> {
        let t = HandlerTable::new();
        let sig = |category, is_request, nargs| Signature {
            category,
            is_request,
            nargs,
        };
        t.register(200, sig(Category::Short, true, 2), 200).unwrap();
        t.register(201, sig(Category::Short, false, 0), 201)
            .unwrap();
        t.register(202, sig(Category::Short, true, 16), 202)
            .unwrap();
        t.register(203, sig(Category::Medium, true, 2), 203)
            .unwrap();
        let reqrep = Widen {
            either_side: true,
            ..Widen::default()
        };
        t.register_widened(204, sig(Category::Short, true, 1), reqrep, 204)
            .unwrap();
        let untyped = Widen {
            untyped: true,
            ..Widen::default()
        };
        t.register_widened(205, sig(Category::Short, true, 3), untyped, 205)
            .unwrap();
        t.register_internal(3, sig(Category::Short, true, 8), 3)
            .unwrap();
        t
    }

    /// What `classify_short` must agree with: the general path's handler,
    /// source and arguments, for a Short whose signature is exactly the
    /// registered one.
    fn check_short_agrees(t: &HandlerTable<u8>, b: &[u8], on_request: bool) {
        let fast = classify_short(t, b, on_request);
        let general = classify(t, b, on_request, Some(1 << 20));
        let exact = match &general {
            Ok(Delivery::Client(c)) => {
                c.msg.header.kind == Kind::Short
                    && t.signature(c.msg.header.handler) == Some(c.signature)
            }
            _ => false,
        };
        match (fast, general) {
            (Some(m), Ok(Delivery::Client(c))) => {
                assert!(exact, "{b:?}");
                assert!(std::ptr::eq(m.handler, c.handler));
                assert_eq!(m.index, c.msg.header.handler);
                assert_eq!(m.src, c.msg.header.src);
                let (mut x, mut y) = ([0u32; MAX_ARGS], [0u32; MAX_ARGS]);
                assert_eq!(m.args_into(&mut x), c.msg.args_into(&mut y));
                assert_eq!(x, y);
            }
            (Some(_), other) => panic!("fast path took {b:?}, classify gave {other:?}"),
            (None, _) => assert!(!exact, "fast path left an exact Short: {b:?}"),
        }
    }

    #[test]
    fn short_fast_path_agrees_with_classify_on_well_formed_messages() {
        let t = short_table();
        for handler in [3u8, 127, 128, 200, 201, 202, 203, 204, 205, 206, 255] {
            for nargs in 0..=17u8 {
                for is_request in [true, false] {
                    for kind in [Kind::Short, Kind::Medium] {
                        let n = nargs.min(16);
                        let plen = if kind == Kind::Short { 0 } else { 8 };
                        let mut b = msg(kind, is_request, handler, n, None, plen);
                        if nargs == 17 {
                            // nargs over the limit in the header.
                            b[0] = (b[0] & !0x7c) | (17 << 2);
                        }
                        for on_request in [true, false] {
                            check_short_agrees(&t, &b, on_request);
                            // Truncated and padded copies.
                            check_short_agrees(&t, &b[..b.len() - 4], on_request);
                            let mut longer = b.clone();
                            longer.extend_from_slice(&[0; 8]);
                            check_short_agrees(&t, &longer, on_request);
                        }
                    }
                }
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(8192))]
        /// Any header over any bytes (handlers around the registered ones,
        /// every kind and count): the fast path takes only what classify
        /// delivers to the same handler with the same arguments.
        #[test]
        fn short_fast_path_agrees_with_classify_on_any_bytes(
            kind in 0u8..4,
            nargs in 0u8..20,
            is_request in proptest::bool::ANY,
            handler in proptest::sample::select(vec![3u8, 127, 128, 199, 200, 201, 202, 203, 204, 205, 206, 255]),
            reserved in 0u16..3,
            src in proptest::num::u32::ANY,
            rest in proptest::collection::vec(proptest::num::u8::ANY, 0..80),
            on_request in proptest::bool::ANY,
        ) {
            let t = short_table();
            let b0 = kind | (nargs.min(31) << 2) | (u8::from(is_request) << 7);
            let head = u64::from(b0)
                | u64::from(handler) << 8
                | u64::from(reserved) << 16
                | u64::from(src) << 32;
            let mut b = head.to_le_bytes().to_vec();
            b.extend_from_slice(&rest);
            check_short_agrees(&t, &b, on_request);
            // The same header over a body of the length a Short of its
            // count takes.
            b.resize(wire::message_len(Kind::Short, usize::from(nargs.min(16)), 0), 0);
            check_short_agrees(&t, &b, on_request);
        }
    }
}
