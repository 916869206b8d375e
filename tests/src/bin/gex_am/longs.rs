//! `gex-am longs <count>`: every rank sends `count` AM Long requests to
//! every other rank without waiting, each to its own place in the target's
//! segment; each handler checks the payload in place and answers with a
//! Long reply of the same bytes to its own place in the requester's
//! segment, whose handler checks them. Every request and reply must arrive
//! exactly once with its bytes. Meant to run with a small
//! `GASNET_OFI_LONG_AM_RMA_THRESH`, so that every Long goes by RMA (put-
//! then-send, or one message with `GASNET_OFI_LONG_AM_WRITEDATA`) and many
//! are in flight: landing-slot credits run out and come back many times.

use super::*;

/// The byte `j` of the payload of `src`'s Long `seq`.
fn pat(src: usize, seq: usize, j: usize) -> u8 {
    byte(src.wrapping_mul(1_000_003).wrapping_add(seq), j)
}

pub(crate) fn longs(c: &Client, count: usize) -> Fallible<String> {
    let (me, size) = (c.rank(), c.size());
    let len = c.long_inline_threshold() + 16;
    let stride = (len + 63) & !63;
    let need = size * count * stride;
    if need > LONG_REP_AT || need > SEG - LONG_REP_AT {
        return Err(fail(format!(
            "{size} ranks x {count} Longs of {len} bytes need {need} bytes per half \
             segment, more than {LONG_REP_AT}: lower the count or GASNET_OFI_LONG_AM_RMA_THRESH"
        )));
    }
    c.attach_segment(SEG)?;
    let seen = Arc::new(Mutex::new(vec![vec![false; count]; size]));
    let back = Arc::new(Mutex::new(vec![vec![false; count]; size]));
    let errs: Errors = Arc::new(Mutex::new(Vec::new()));
    let replies = Arc::new(AtomicUsize::new(0));
    // One arrival checked: its place (`base` + the sender's slot), its
    // bytes (the pattern of `owner`'s Long `seq`), and that it is the
    // first; the problem, if any.
    let arrived = move |seen: &Mutex<Vec<Vec<bool>>>,
                        off: Option<usize>,
                        p: &[u8],
                        (src, seq, owner, base): (usize, usize, usize, usize)|
          -> Option<&'static str> {
        let ok = seq < count
            && off == Some(base + (src * count + seq) * stride)
            && p.len() == len
            && p.iter().enumerate().all(|(j, &b)| b == pat(owner, seq, j));
        if !ok {
            return Some("wrong place or bytes");
        }
        std::mem::replace(&mut seen.lock().unwrap()[src][seq], true).then_some("arrived twice")
    };
    let (s2, e2) = (seen.clone(), errs.clone());
    c.register(
        220,
        Handler::request_long(1, move |tok, a, p| {
            let (src, seq) = (tok.source(), a[0] as usize);
            let p = p.to_vec();
            if let Some(why) = arrived(&s2, tok.long_offset(), &p, (src, seq, src, 0)) {
                e2.lock()
                    .unwrap()
                    .push(format!("request {seq} from rank {src}: {why}"));
                return;
            }
            let at = LONG_REP_AT + (me * count + seq) * stride;
            if let Err(e) = tok.reply_long(221, &[seq as u32], &p, at) {
                e2.lock()
                    .unwrap()
                    .push(format!("reply {seq} to rank {src}: {e}"));
            }
        }),
    )?;
    let (b2, e3, r2) = (back.clone(), errs.clone(), replies.clone());
    c.register(
        221,
        Handler::reply_long(1, move |tok, a, p| {
            let (src, seq) = (tok.source(), a[0] as usize);
            let p = p.to_vec();
            if let Some(why) = arrived(&b2, tok.long_offset(), &p, (src, seq, me, LONG_REP_AT)) {
                e3.lock()
                    .unwrap()
                    .push(format!("reply {seq} from rank {src}: {why}"));
            }
            r2.fetch_add(1, Ordering::Relaxed);
        }),
    )?;
    c.barrier()?;
    let mut payload = vec![0u8; len];
    for seq in 0..count {
        for k in 1..size {
            let dest = (me + k) % size;
            for (j, b) in payload.iter_mut().enumerate() {
                *b = pat(me, seq, j);
            }
            let at = (me * count + seq) * stride;
            c.request_long(dest, 220, &[seq as u32], &payload, at)?;
        }
    }
    let want = count * (size - 1);
    let t = std::time::Instant::now();
    c.block_until(|| {
        replies.load(Ordering::Relaxed) >= want
            || !errs.lock().unwrap().is_empty()
            || t.elapsed() > std::time::Duration::from_secs(120)
    })?;
    // Every rank's requests were answered: every request here was seen.
    c.barrier()?;
    let e = errs.lock().unwrap();
    if let Some(first) = e.first() {
        return Err(fail(format!("{} check(s) failed, first: {first}", e.len())));
    }
    let got = replies.load(Ordering::Relaxed);
    if got != want {
        return Err(fail(format!("{got} of {want} replies arrived in 120 s")));
    }
    let missing = seen
        .lock()
        .unwrap()
        .iter()
        .enumerate()
        .filter(|&(src, _)| src != me)
        .map(|(_, v)| v.iter().filter(|&&x| !x).count())
        .sum::<usize>();
    if missing > 0 {
        return Err(fail(format!("{missing} requests never arrived")));
    }
    drop(e);
    let immediate = immediate_long(c, len)?;
    let s = c.stats();
    Ok(format!(
        "ok: {want} Long requests of {len} bytes and their Long replies arrived exactly once per rank; \
         long_landed={} long_rma={} landing_waits={} landings_received={} credits_sent={}; \
         immediate={immediate}",
        s.long_landed, s.long_rma, s.long_landing_waits, s.landings_received, s.landing_credits_sent
    ))
}

/// Rank 0 tries one immediate-mode Long above the packing threshold to
/// rank 1 (at offset 0 of its segment): `sent` (and its handler answered
/// with the bytes checked) or `no-op`.
fn immediate_long(c: &Client, len: usize) -> Fallible<&'static str> {
    let answered = Arc::new(AtomicUsize::new(0));
    // The same bytes on every rank: rank 1 checks what rank 0 sent.
    let want: Vec<u8> = (0..len).map(|j| pat(usize::MAX, 7, j)).collect();
    let w2 = want.clone();
    c.register(
        222,
        Handler::request_long(1, move |tok, _a, p| {
            let _ = tok.reply_short(223, &[u32::from(p.equals(&w2))]);
        }),
    )?;
    let a2 = answered.clone();
    c.register(
        223,
        Handler::reply_short(1, move |_tok, a| {
            a2.fetch_add(1 + a[0] as usize, Ordering::Relaxed);
        }),
    )?;
    c.barrier()?;
    let mut what = "no-op";
    if c.rank() == 0 && c.try_request_long(1, 222, &[0], &want, 0)? {
        c.block_until(|| answered.load(Ordering::Relaxed) > 0)?;
        if answered.load(Ordering::Relaxed) != 2 {
            return Err(fail("the immediate Long's payload differs at rank 1"));
        }
        what = "sent";
    }
    c.barrier()?;
    Ok(what)
}
