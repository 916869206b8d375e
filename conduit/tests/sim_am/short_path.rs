//! The one-pass path for the common message (a Short for a handler
//! registered with exactly its signature) against what the general path
//! gives a handler: the token's source, index, endpoint and direction, the
//! reply path (requests only), and the receive counters.

use super::sim::{Ended, Job};
use conduit::client::{AmStats, Error, Seq};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

const H_REQ: u8 = 210;
const H_REP: u8 = 211;
/// Registered as a Short request that also runs on replies (REQREP): its
/// messages take the general path.
const H_EITHER: u8 = 212;
const N: u32 = 25;

/// What the handlers saw, one line per message.
#[derive(Default)]
struct Saw {
    lines: Mutex<Vec<String>>,
    replies: AtomicU64,
    either: AtomicU64,
}

fn line(tok: &conduit::client::Token<'_, Saw>, args: &[u32], extra: &str) -> String {
    format!(
        "index {} from {} endpoint {} request {} args {args:?}{extra}",
        tok.handler_index(),
        tok.source(),
        tok.endpoint(),
        tok.is_request()
    )
}

#[test]
fn the_one_pass_path_gives_handlers_what_the_general_path_does() {
    let (_f, ended) = Job::new(2).run::<Seq, _, _, _>(
        |_| Saw::default(),
        |c| -> Result<(Vec<String>, AmStats), Error> {
            c.on_request_short(H_REQ, 3, |tok, a| {
                let l = line(tok, a, "");
                tok.state().lines.lock().unwrap().push(l);
                tok.reply_short(H_REP, &[a[0], a[2]]).unwrap();
            })?;
            c.on_reply_short(H_REP, 2, |tok, a| {
                // A reply handler has no reply path.
                let again = tok.reply_short(H_REP, &[0, 0]);
                let extra = format!(" reply from a reply: {again:?}");
                let l = line(tok, a, &extra);
                tok.state().lines.lock().unwrap().push(l);
                tok.state().replies.fetch_add(1, Ordering::Relaxed);
            })?;
            c.register(
                H_EITHER,
                conduit::client::Handler::request_short(1, |tok, a| {
                    let l = line(tok, a, " (either side)");
                    tok.state().lines.lock().unwrap().push(l);
                    if tok.is_request() {
                        tok.reply_short(H_EITHER, &[a[0] + 1]).unwrap();
                    } else {
                        tok.state().either.fetch_add(1, Ordering::Relaxed);
                    }
                })
                .widened(conduit::client::Widen {
                    either_side: true,
                    ..Default::default()
                }),
            )?;
            c.barrier()?;
            let st = c.state();
            if c.rank() == 0 {
                for i in 0..N {
                    c.request_short(1, H_REQ, &[i, 7, i * 3])?;
                }
                c.request_short(1, H_EITHER, &[40])?;
                c.block_until(|| {
                    st.replies.load(Ordering::Relaxed) == u64::from(N)
                        && st.either.load(Ordering::Relaxed) == 1
                })?;
            }
            c.barrier()?;
            let lines = std::mem::take(&mut *st.lines.lock().unwrap());
            Ok((lines, c.stats()))
        },
    );
    let mut ended = ended.into_iter();
    let (Some(Ended::Returned(Ok((l0, s0)))), Some(Ended::Returned(Ok((l1, s1))))) =
        (ended.next(), ended.next())
    else {
        panic!("a rank did not return what it saw");
    };
    let mut want0: Vec<String> = (0..N)
        .map(|i| {
            format!(
                "index {H_REP} from 1 endpoint 0 request false args [{i}, {}] reply from a reply: Err(ReplyFromReply)",
                i * 3
            )
        })
        .collect();
    want0.push(format!(
        "index {H_EITHER} from 1 endpoint 0 request false args [41] (either side)"
    ));
    assert_eq!(l0, want0, "rank 0's reply handlers");
    let mut want1: Vec<String> = (0..N)
        .map(|i| {
            format!(
                "index {H_REQ} from 0 endpoint 0 request true args [{i}, 7, {}]",
                i * 3
            )
        })
        .collect();
    want1.push(format!(
        "index {H_EITHER} from 0 endpoint 0 request true args [40] (either side)"
    ));
    assert_eq!(l1, want1, "rank 1's request handlers");
    // Shorts received, by direction (the barriers' own messages are not
    // counted).
    assert_eq!(s1.requests_received[0], u64::from(N) + 1);
    assert_eq!(s1.replies_received[0], 0);
    assert_eq!(s0.replies_received[0], u64::from(N) + 1);
    assert_eq!(s0.requests_received[0], 0);
}
