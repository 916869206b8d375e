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

#[cfg(test)]
mod tests {
    use super::*;
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
}
