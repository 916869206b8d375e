//! `gex-am lanes <rounds>`: every rank sends `rounds` Short requests to
//! every other rank without waiting for each (so some go through the
//! pair's lane and the rest through the rings), answered in turn by a Short
//! reply of 3 arguments, one of 16, a Medium reply (through the rings, the
//! lane then freed), or no reply; a Medium request goes with every third.
//! Then `rounds / 2` more, each round's replies awaited before the next
//! (most of those go through the lanes). Last, rank 1's handler for a
//! request from rank 0 panics (rank 1 catches it out of its poll): the
//! lane must be answered all the same, so that rank 0's next 20 requests,
//! each awaited, go through it.
//! Every request and reply is checked exactly once (per-sender sequence
//! bitmaps) with its arguments; the line reports how many went through a
//! lane (`AM_SHARED_LANE`), which the test compares with the path asked for.

use conduit::client::{Client, Handler};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tests::{fail, Fallible};

const H_REQ: u8 = 200;
const H_MED: u8 = 201;
const H_REP3: u8 = 202;
const H_REP16: u8 = 203;
const H_REPMED: u8 = 204;
const H_BOOM: u8 = 205;
const H_BOOM_SEEN: u8 = 206;
const H_PING: u8 = 207;
const H_PONG: u8 = 208;
const H_READY: u8 = 209;
/// Requests in flight per peer before the sender waits for replies.
const WINDOW: usize = 16;

/// What every rank records, by peer.
struct Seen {
    /// Sequence numbers of requests received, per source.
    requests: Vec<Vec<bool>>,
    /// Of replies received, per replying rank.
    replies: Vec<Vec<bool>>,
    errors: Vec<String>,
}

fn value(src: usize, seq: u32, i: usize) -> u32 {
    (src as u32)
        .wrapping_mul(0x9e37_79b9)
        .wrapping_add(seq.wrapping_mul(31))
        .wrapping_add(i as u32)
}

fn note(seen: &mut [Vec<bool>], errors: &mut Vec<String>, what: &str, from: usize, seq: u32) {
    match seen.get_mut(from).and_then(|v| v.get_mut(seq as usize)) {
        Some(b) if !*b => *b = true,
        Some(_) => errors.push(format!("{what} {seq} from rank {from} arrived twice")),
        None => errors.push(format!("{what} {seq} from rank {from}: no such message")),
    }
}

pub fn lanes(c: &Client, rounds: usize) -> Fallible<String> {
    let (me, n) = (c.rank(), c.size());
    if n < 2 {
        return Err(fail("gex-am lanes needs at least 2 ranks"));
    }
    // Medium requests take the seq numbers after the Shorts'.
    // Shorts of the flood, then of the awaited rounds, then the Mediums.
    let awaited = rounds / 2;
    let shorts = rounds + awaited;
    let per_peer = shorts + rounds.div_ceil(3);
    let seen = Arc::new(Mutex::new(Seen {
        requests: vec![vec![false; per_peer]; n],
        replies: vec![vec![false; per_peer]; n],
        errors: Vec::new(),
    }));
    let answered = Arc::new(AtomicUsize::new(0));
    let got = Arc::new(AtomicUsize::new(0));
    let s = seen.clone();
    let a = answered.clone();
    c.register(
        H_REQ,
        Handler::request_short(2, move |tok, args| {
            let (src, seq) = (tok.source(), args[0]);
            {
                let mut g = s.lock().unwrap();
                let Seen {
                    requests, errors, ..
                } = &mut *g;
                note(requests, errors, "request", src, seq);
                if args[1] != value(src, seq, 1) {
                    errors.push(format!(
                        "request {seq} from rank {src}: arg 1 {:#x}",
                        args[1]
                    ));
                }
            }
            a.fetch_add(1, Ordering::Relaxed);
            let r = match seq % 4 {
                0 => tok.reply_short(H_REP3, &[seq, value(src, seq, 7), 3]),
                1 => {
                    let w: Vec<u32> = (0..16)
                        .map(|i| if i == 0 { seq } else { value(src, seq, i) })
                        .collect();
                    tok.reply_short(H_REP16, &w)
                }
                2 => {
                    let p: Vec<u8> = (0..40).map(|i| (seq as u8).wrapping_add(i)).collect();
                    tok.reply_medium(H_REPMED, &[seq], &p)
                }
                _ => Ok(()),
            };
            if let Err(e) = r {
                s.lock()
                    .unwrap()
                    .errors
                    .push(format!("reply to {seq}: {e}"));
            }
        }),
    )?;
    let s = seen.clone();
    let a = answered.clone();
    c.register(
        H_MED,
        Handler::request_medium(1, move |tok, args, p| {
            let (src, seq) = (tok.source(), args[0]);
            let mut g = s.lock().unwrap();
            let Seen {
                requests, errors, ..
            } = &mut *g;
            note(requests, errors, "medium request", src, seq);
            if p.len() != 24 || p.iter().any(|&b| b != seq as u8) {
                errors.push(format!(
                    "medium request {seq} from rank {src}: payload differs"
                ));
            }
            a.fetch_add(1, Ordering::Relaxed);
            drop(g);
            if let Err(e) = tok.reply_short(H_REP3, &[seq, value(src, seq, 7), 3]) {
                s.lock()
                    .unwrap()
                    .errors
                    .push(format!("reply to {seq}: {e}"));
            }
        }),
    )?;
    for (h, nargs) in [(H_REP3, 3u8), (H_REP16, 16)] {
        let s = seen.clone();
        let g2 = got.clone();
        c.register(
            h,
            Handler::reply_short(nargs, move |tok, args| {
                let (from, seq) = (tok.source(), args[0]);
                let mut g = s.lock().unwrap();
                let Seen {
                    replies, errors, ..
                } = &mut *g;
                note(replies, errors, "reply", from, seq);
                let ok = if nargs == 3 {
                    args[1] == value(me, seq, 7) && args[2] == 3
                } else {
                    (1..16).all(|i| args[i] == value(me, seq, i))
                };
                if !ok {
                    errors.push(format!("reply {seq} from rank {from}: arguments differ"));
                }
                g2.fetch_add(1, Ordering::Relaxed);
            }),
        )?;
    }
    let s = seen.clone();
    let g2 = got.clone();
    c.register(
        H_REPMED,
        Handler::reply_medium(1, move |tok, args, p| {
            let (from, seq) = (tok.source(), args[0]);
            let mut g = s.lock().unwrap();
            let Seen {
                replies, errors, ..
            } = &mut *g;
            note(replies, errors, "medium reply", from, seq);
            if p.len() != 40 || (0..40).any(|i| p[i] != (seq as u8).wrapping_add(i as u8)) {
                errors.push(format!(
                    "medium reply {seq} from rank {from}: payload differs"
                ));
            }
            g2.fetch_add(1, Ordering::Relaxed);
        }),
    )?;
    c.barrier()?;
    let before = c.stats().shared_lane;
    let peers: Vec<usize> = (0..n).filter(|&p| p != me).collect();
    // Replies expected: every Short request but one in four, and every
    // Medium request.
    let replies_for = |shorts: usize, mediums: usize| shorts - shorts / 4 + mediums;
    let mut medium_seq = shorts as u32;
    let payload = |seq: u32| vec![seq as u8; 24];
    for seq in 0..rounds as u32 {
        for &p in &peers {
            c.request_short(p, H_REQ, &[seq, value(me, seq, 1)])?;
            if seq % 3 == 0 {
                c.request_medium(p, H_MED, &[medium_seq], &payload(medium_seq))?;
            }
        }
        if seq % 3 == 0 {
            medium_seq += 1;
        }
        let sent = seq as usize + 1;
        if sent % WINDOW == 0 {
            // Wait for at least the replies to the Shorts of all but the
            // last window.
            let want = peers.len() * replies_for(sent - WINDOW, 0);
            let g = got.clone();
            c.block_until(|| g.load(Ordering::Relaxed) >= want)?;
        }
    }
    // Each round's replies awaited (one in four requests has none).
    for seq in rounds as u32..shorts as u32 {
        let want = got.load(Ordering::Relaxed) + if seq % 4 == 3 { 0 } else { peers.len() };
        for &p in &peers {
            c.request_short(p, H_REQ, &[seq, value(me, seq, 1)])?;
        }
        let g = got.clone();
        c.block_until(|| g.load(Ordering::Relaxed) >= want)?;
    }
    let mediums = (medium_seq - shorts as u32) as usize;
    let want_replies = peers.len() * replies_for(shorts, mediums);
    let want_requests = peers.len() * (shorts + mediums);
    let (g, a) = (got.clone(), answered.clone());
    c.block_until(|| g.load(Ordering::Relaxed) >= want_replies)?;
    c.block_until(|| a.load(Ordering::Relaxed) >= want_requests)?;
    let lane = c.stats().shared_lane - before;
    c.barrier()?;
    let after_panic = panicking_handler(c)?;
    let g = seen.lock().unwrap();
    if let Some(e) = g.errors.first() {
        return Err(fail(format!("rank {me}: {e} ({} errors)", g.errors.len())));
    }
    for &p in &peers {
        let missing_req = g.requests[p].iter().filter(|&&b| !b).count();
        if missing_req != 0 {
            return Err(fail(format!(
                "rank {me}: {missing_req} requests from rank {p} never arrived"
            )));
        }
    }
    let (rg, ra) = (
        got.load(Ordering::Relaxed),
        answered.load(Ordering::Relaxed),
    );
    if rg != want_replies || ra != want_requests {
        return Err(fail(format!(
            "rank {me}: {rg} replies and {ra} requests, expected {want_replies} and {want_requests}"
        )));
    }
    Ok(format!(
        "ok: {} requests and {rg} replies per rank checked exactly once; AM_SHARED_LANE={lane} on rank {me}; {after_panic}",
        want_requests
    ))
}

/// Rank 1's handler panics on a request from rank 0; rank 1 catches the
/// panic out of its poll and tells rank 0, which then sends 20 requests,
/// each awaited: with the lanes on, the panicking request's lane was
/// answered, so all 20 go through it.
fn panicking_handler(c: &Client) -> Fallible<String> {
    use std::sync::atomic::AtomicBool;
    let boomed = Arc::new(AtomicBool::new(false));
    let told = Arc::new(AtomicBool::new(false));
    let pongs = Arc::new(AtomicUsize::new(0));
    let b = boomed.clone();
    c.register(
        H_BOOM,
        Handler::request_short(0, move |_tok, _| {
            b.store(true, Ordering::Relaxed);
            std::panic::panic_any("gex-am lanes: the handler's planned panic");
        }),
    )?;
    let t = told.clone();
    c.register(
        H_BOOM_SEEN,
        Handler::request_short(0, move |_tok, _| t.store(true, Ordering::Relaxed)),
    )?;
    // Rank 1 says when it polls inside its catch, so that the panic cannot
    // come while it waits in the barrier.
    let ready = Arc::new(AtomicBool::new(false));
    let r = ready.clone();
    c.register(
        H_READY,
        Handler::request_short(0, move |_tok, _| r.store(true, Ordering::Relaxed)),
    )?;
    c.register(
        H_PING,
        Handler::request_short(1, |tok, a| {
            let _ = tok.reply_short(H_PONG, a);
        }),
    )?;
    let p = pongs.clone();
    c.register(
        H_PONG,
        Handler::reply_short(1, move |_tok, _| {
            p.fetch_add(1, Ordering::Relaxed);
        }),
    )?;
    c.barrier()?;
    let mut line = String::new();
    match c.rank() {
        0 => {
            c.block_until(|| ready.load(Ordering::Relaxed))?;
            c.request_short(1, H_BOOM, &[])?;
            c.block_until(|| told.load(Ordering::Relaxed))?;
            let before = c.stats().shared_lane;
            for i in 0..20 {
                c.request_short(1, H_PING, &[i])?;
                let p = pongs.clone();
                c.block_until(|| p.load(Ordering::Relaxed) > i as usize)?;
            }
            let lane = c.stats().shared_lane - before;
            line = format!("after a panicking handler, {lane} of 20 requests through the lane");
        }
        1 => {
            let hook = std::panic::take_hook();
            std::panic::set_hook(Box::new(|_| {}));
            let mut caught = 0;
            c.request_short(0, H_READY, &[])?;
            while !boomed.load(Ordering::Relaxed) {
                match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.poll())) {
                    Ok(r) => r?,
                    Err(_) => caught += 1,
                }
            }
            std::panic::set_hook(hook);
            if caught != 1 {
                return Err(fail(format!("rank 1 caught {caught} panics, expected 1")));
            }
            c.request_short(0, H_BOOM_SEEN, &[])?;
        }
        _ => {}
    }
    c.barrier()?;
    Ok(line)
}
