//! Raw receives (`TagScope::irecv_raw`): into the local segment through its
//! raw view, and a window of receives that share one buffer.

#![allow(unsafe_code)]

use super::checks::{check, pattern, World};
use conduit::client::Client;
use tests::{fail, Fallible};

/// The segment the step attaches (when the program has none yet).
const SEG: usize = 1 << 20;
/// Where in it the receive lands, and its length.
const AT: usize = 4096;
const LEN: usize = 100_003;
/// Receives of the shared window, and their length.
const WINDOW: usize = 16;
const PIECE: usize = 1000;

/// Each rank receives from the previous one (a ring): one message into
/// its segment at `AT` (the bytes around it must stay as they were), then
/// `WINDOW` equal messages into one buffer (every status complete, and the
/// buffer holding the message).
pub fn raw(c: &Client, w: &World) -> Fallible<()> {
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    if c.segment().is_err() {
        c.attach_segment(SEG)?;
    }
    let seg = c.segment()?;
    let guard = [0xeeu8; 64];
    seg.write(AT - guard.len(), &guard)?;
    seg.write(AT + LEN, &guard)?;
    let out = pattern(400 + me, LEN);
    w.barrier()?;
    let at = seg.as_ptr().wrapping_add(AT);
    let st = w.scope(|s| {
        // SAFETY: AT..AT+LEN is inside the attached segment, which no
        // other rank writes in this step, and this rank does not touch
        // it until the scope has ended.
        let r = unsafe { s.irecv_raw(w, at, LEN, Some(prev), Some(401))? };
        let snd = s.isend(w, &out, next, 401)?;
        s.wait(snd)?;
        s.wait(r)
    })?;
    check(st.len == LEN && st.source == prev, || {
        format!("raw receive into the segment: status {st:?}")
    })?;
    let mut got = vec![0u8; LEN];
    seg.read(AT, &mut got)?;
    check(got == pattern(400 + prev, LEN), || {
        "raw receive into the segment: data differ".into()
    })?;
    let mut around = [0u8; 64];
    for (off, what) in [(AT - around.len(), "before"), (AT + LEN, "after")] {
        seg.read(off, &mut around)?;
        check(around == guard, || {
            format!("raw receive into the segment wrote {what} its range")
        })?;
    }

    let piece = pattern(500 + me, PIECE);
    let mut shared = vec![0u8; PIECE];
    let base = shared.as_mut_ptr();
    let sts = w.scope(|s| {
        let mut reqs = Vec::with_capacity(2 * WINDOW);
        for _ in 0..WINDOW {
            // SAFETY: `shared` is borrowed mutably for the closure and not
            // touched in it; the receives, which share it, are over when
            // the scope returns.
            reqs.push(unsafe { s.irecv_raw(w, base, PIECE, Some(prev), Some(402))? });
        }
        for _ in 0..WINDOW {
            reqs.push(s.isend(w, &piece, next, 402)?);
        }
        Ok::<_, conduit::client::Error>(s.wait_all(reqs))
    })?;
    for (i, st) in sts.into_iter().enumerate() {
        let st = st?;
        if i < WINDOW {
            check(st.len == PIECE && st.tag == 402, || {
                format!("shared window receive {i}: status {st:?}")
            })?;
        }
    }
    if shared != pattern(500 + prev, PIECE) {
        return Err(fail("shared window: the buffer does not hold the message"));
    }
    w.barrier()?;
    Ok(())
}
