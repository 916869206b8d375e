//! Target `am_wire`: the bytes of one received Active Message.
//!
//! The input is the message exactly as a receive buffer holds it. It goes to
//! `am::wire::decode` and then, as the conduit's progress engine does, to
//! `am::dispatch::classify` against a handler table with handlers
//! registered, on both endpoints (request and reply) and with several
//! segment sizes (none, 0, 64 KiB, `usize::MAX`).
//!
//! Checked besides "no panic":
//! * a decoded message is 8-byte aligned, has at most `MAX_ARGS` arguments,
//!   is exactly `message_len` bytes, and re-encodes to bytes that decode to
//!   the same message;
//! * `classify` fails exactly when `decode` fails (with the same error);
//!   internal deliveries have an index below 128; a client delivery carries
//!   the registered handler and signature, arrived on the endpoint of its
//!   direction, has the message's arguments, and a Long's payload lies
//!   inside the segment;
//! * `classify_short`, the conduit's one-pass path for the common Short,
//!   takes exactly the Shorts `classify` delivers to a handler registered
//!   with their exact signature, with the same handler and arguments.

use am::dispatch::{classify, classify_short, Delivery};
use am::handlers::{Category, HandlerTable, Signature, CLIENT_BASE};
use am::wire::{self, Header, Kind, Message, ALIGN};
use am::MAX_ARGS;
use std::sync::OnceLock;

/// Client indices `CLIENT_BASE..=LAST_REGISTERED` have a handler; the ones
/// above stay empty, so "no handler registered" is reachable too.
pub const LAST_REGISTERED: u8 = 247;

/// Segment sizes every input is classified with (`None`: no segment).
pub const SEGMENTS: [Option<usize>; 4] = [None, Some(0), Some(64 << 10), Some(usize::MAX)];

/// The signature registered at client index `index`: the indices cycle
/// through the three categories, both directions and 0..=16 arguments.
pub fn signature_for(index: u8) -> Signature {
    let i = usize::from(index - CLIENT_BASE);
    Signature {
        category: [Category::Short, Category::Medium, Category::Long][i % 3],
        is_request: (i / 3) % 2 == 0,
        nargs: ((i / 6) % (MAX_ARGS + 1)) as u8,
    }
}

/// The handler table (built once): handler `i` at index `i`.
pub fn table() -> &'static HandlerTable<u8> {
    static TABLE: OnceLock<HandlerTable<u8>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let t = HandlerTable::new();
        for i in CLIENT_BASE..=LAST_REGISTERED {
            t.register(i, signature_for(i), i)
                .expect("registering a free client index");
        }
        t
    })
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    let decoded = wire::decode(data);
    match &decoded {
        Ok(m) => check_decoded(data, m),
        Err(e) => {
            // The conduit reports the error text.
            let _ = e.to_string();
        }
    }
    let table = table();
    for on_request_endpoint in [true, false] {
        for segment in SEGMENTS {
            let got = classify(table, data, on_request_endpoint, segment);
            check_classified(table, &decoded, got, on_request_endpoint, segment);
        }
        check_short_path(table, data, on_request_endpoint);
    }
}

/// `classify_short` (the one-pass path the conduit tries first) takes a
/// message exactly when `classify` delivers a Short to a client handler
/// registered with exactly its signature, and then gives the same handler,
/// source and arguments.
fn check_short_path(table: &HandlerTable<u8>, data: &[u8], on_request_endpoint: bool) {
    let fast = classify_short(table, data, on_request_endpoint);
    let general = classify(table, data, on_request_endpoint, None);
    let exact = match &general {
        Ok(Delivery::Client(c)) => {
            c.msg.header.kind == Kind::Short
                && table.signature(c.msg.header.handler) == Some(c.signature)
        }
        _ => false,
    };
    match (fast, general) {
        (Some(f), Ok(Delivery::Client(c))) => {
            assert!(
                exact,
                "the short path took a message classify delivers otherwise"
            );
            assert!(
                std::ptr::eq(f.handler, c.handler),
                "short path: wrong handler"
            );
            assert_eq!(f.index, c.msg.header.handler);
            assert_eq!(f.src, c.msg.header.src);
            let (mut a, mut b) = ([0u32; MAX_ARGS], [0u32; MAX_ARGS]);
            assert_eq!(f.args_into(&mut a), c.msg.args_into(&mut b));
            assert_eq!(a, b, "short path: different arguments");
        }
        (Some(_), _) => panic!("the short path took a message classify refuses"),
        (None, _) => assert!(!exact, "the short path left a Short it should take"),
    }
}

fn check_decoded(data: &[u8], m: &Message<'_>) {
    let h = m.header;
    assert_eq!(data.len() % ALIGN, 0, "decoded message of unaligned length");
    assert!(
        usize::from(h.nargs) <= MAX_ARGS,
        "decoded {} arguments",
        h.nargs
    );
    assert_eq!(
        data.len(),
        wire::message_len(h.kind, h.nargs.into(), m.payload.len()),
        "decoded message length differs from message_len"
    );
    match h.kind {
        Kind::Short => assert!(m.dest_offset.is_none() && m.payload.is_empty()),
        Kind::Medium => {
            assert!(m.dest_offset.is_none());
            assert_eq!(m.payload.len(), m.payload_len);
        }
        Kind::Long => assert!(m.dest_offset.is_some() && m.payload.is_empty()),
        Kind::LongInline => {
            assert!(m.dest_offset.is_some());
            assert_eq!(m.payload.len(), m.payload_len);
        }
    }
    let args = m.args();
    assert_eq!(args.len(), usize::from(h.nargs));
    let mut again = Vec::new();
    wire::encode(
        &mut again,
        &h,
        &args,
        m.dest_offset,
        m.payload_len,
        m.payload,
    );
    assert_eq!(again.len(), data.len(), "re-encoded length differs");
    assert_eq!(
        wire::decode(&again).as_ref(),
        Ok(m),
        "re-encoded message decodes differently"
    );
}

fn check_classified(
    table: &HandlerTable<u8>,
    decoded: &Result<Message<'_>, am::Error>,
    got: Result<Delivery<'_, u8>, am::Error>,
    on_request_endpoint: bool,
    segment: Option<usize>,
) {
    let m = match (decoded, got) {
        (Err(e), Err(e2)) => {
            assert_eq!(*e, e2, "classify and decode fail differently");
            return;
        }
        (Err(e), Ok(_)) => panic!("classify accepted a message decode refuses ({e})"),
        (Ok(_), Err(e)) => {
            let _ = e.to_string();
            return;
        }
        (Ok(m), Ok(d)) => (m, d),
    };
    let (m, delivery) = m;
    let h = m.header;
    match delivery {
        Delivery::Internal(m2) => {
            assert!(
                h.handler < CLIENT_BASE,
                "client index {} delivered as internal",
                h.handler
            );
            assert_eq!(m2, *m);
        }
        Delivery::Client(c) => {
            assert!(
                h.handler >= CLIENT_BASE,
                "internal index {} delivered to a client",
                h.handler
            );
            assert_eq!(*c.handler, h.handler, "wrong handler");
            assert_eq!(Some(c.signature), table.signature(h.handler));
            assert_eq!(c.signature.is_request, on_request_endpoint);
            assert_eq!(c.signature.nargs, h.nargs);
            assert_eq!(c.msg, *m);
            assert_eq!(am::dispatch::Args::of(&c.msg).as_slice(), &m.args()[..]);
            match (h.kind, c.long) {
                (Kind::Long | Kind::LongInline, Some((off, len))) => {
                    let seg = segment.expect("a Long accepted without a segment");
                    assert!(
                        (off as u128) + (len as u128) <= seg as u128,
                        "Long payload {off}+{len} outside a {seg}-byte segment"
                    );
                    assert_eq!(len, m.payload_len);
                    assert_eq!(Some(off as u64), m.dest_offset);
                }
                (Kind::Short | Kind::Medium, None) => {}
                (k, long) => panic!("{k:?} delivered with long = {long:?}"),
            }
        }
    }
}

fn message(
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
    let args: Vec<u32> = (0..u32::from(nargs))
        .map(|i| i.wrapping_mul(0x9e37_79b9))
        .collect();
    let payload: Vec<u8> = match kind {
        Kind::Short | Kind::Long => Vec::new(),
        Kind::Medium | Kind::LongInline => (0..plen).map(|i| i as u8).collect(),
    };
    let mut out = Vec::new();
    wire::encode(&mut out, &h, &args, dest, plen, &payload);
    out
}

/// Valid messages for a spread of registered handlers, internal messages,
/// and a few near misses.
pub fn seeds() -> crate::Seeds {
    let mut v = Vec::new();
    // One message per (category, direction) for the first handlers, and a
    // few with many arguments.
    for index in (CLIENT_BASE..CLIENT_BASE + 6).chain([200, 230, 247]) {
        let s = signature_for(index);
        let n = s.nargs;
        match s.category {
            Category::Short => {
                v.push((
                    format!("short-{index}"),
                    message(Kind::Short, s.is_request, index, n, None, 0),
                ));
            }
            Category::Medium => {
                v.push((
                    format!("medium-{index}"),
                    message(Kind::Medium, s.is_request, index, n, None, 13),
                ));
            }
            Category::Long => {
                v.push((
                    format!("long-{index}"),
                    message(Kind::Long, s.is_request, index, n, Some(4096), 1024),
                ));
                v.push((
                    format!("long-inline-{index}"),
                    message(Kind::LongInline, s.is_request, index, n, Some(100), 24),
                ));
            }
        }
    }
    // Conduit-internal (barrier, exit) and unregistered indices.
    v.push((
        "internal-short".into(),
        message(Kind::Short, true, 1, 4, None, 0),
    ));
    v.push((
        "internal-medium".into(),
        message(Kind::Medium, false, 2, 1, None, 8),
    ));
    v.push((
        "unregistered".into(),
        message(Kind::Short, true, 255, 0, None, 0),
    ));
    // A Long that does not fit the 64 KiB segment.
    v.push((
        "long-outside-segment".into(),
        message(Kind::Long, true, 130, 0, Some(65_000), 1000),
    ));
    // Truncated: a Medium missing its last 8 bytes.
    let mut t = message(Kind::Medium, true, 129, 0, None, 100);
    t.truncate(t.len() - 8);
    v.push(("medium-truncated".into(), t));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn client_seeds_reach_their_handlers() {
        // The seeds named after a category are deliverable, so the fuzzer
        // starts from inputs that get past every check of `classify`.
        let mut delivered = 0;
        for (name, bytes) in seeds() {
            // short-<index>, medium-<index>, long-<index>, long-inline-<index>.
            let deliverable = name
                .rsplit('-')
                .next()
                .is_some_and(|i| i.parse::<u8>().is_ok());
            if !deliverable {
                continue;
            }
            let index = bytes[1];
            let on_request = signature_for(index).is_request;
            match classify(table(), &bytes, on_request, Some(64 << 10)) {
                Ok(Delivery::Client(c)) => assert_eq!(*c.handler, index),
                other => panic!("{name}: {other:?}"),
            }
            delivered += 1;
        }
        assert!(delivered >= 10);
    }
}
