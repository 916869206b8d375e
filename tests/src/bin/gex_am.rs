//! Active Message conformance program (modelled on GASNet's testcore and
//! testam), run under `gasnetrun-ofi`. Usage: `gex-am <mode> [args]`:
//!
//! * `core`: every kind x request/reply x argument count 0..16 with the
//!   argument values checked; Medium sizes 0..max with the payload checked;
//!   Long sizes 0..beyond the inline threshold landing at odd offsets; a
//!   reply from every request kind.
//! * `flood <shorts> <mediums>`: every rank sends that many AM Shorts and
//!   max-size Mediums to rank 0; rank 0 checks every message arrived exactly
//!   once (per-sender sequence bitmaps and checksums).
//! * `longs <count>`: every rank sends `count` Long requests to every
//!   other rank without waiting; each is checked in place and answered by
//!   a Long reply that is checked too (credits of Longs in one message).
//! * `lanes <rounds>`: Short requests (some through the pairs' lanes on
//!   the shared-memory path) answered by Short replies of 3 and 16
//!   arguments, Medium replies or none, beside Medium requests; every
//!   message checked exactly once (`gex_am/lanes.rs`).
//! * `exit <how> <code>`: `rank0`, `rank1`, `handler` (rank 0's handler
//!   exits), `after-barrier` (every rank exits), `return` (every rank drops
//!   the client after a barrier), `malformed` (rank 0 sends rank 1 an AM
//!   its handler's registration refuses, then exits; rank 1 polls after
//!   the exit arrived: the error is printed and rank 1 exits with 1).
//! * `bad`: bad input on the sender side (Medium over the maximum, 17
//!   arguments, rank out of range, Long outside the segment).
//! * `unregistered`: rank 1 sends to a handler index rank 0 never
//!   registered; rank 0 reports it and ends the job.
//! * `barrier`: named, anonymous and mismatched barriers.
//!
//! Rank 0 prints one summary line; errors print `gex-am: rank R: ...` and
//! end the job with code 1.

#![forbid(unsafe_code)]

use conduit::client::{Client, Handler};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use tests::program::count_arg;
use tests::{fail, report, Fallible};

#[path = "gex_am/exit_threads.rs"]
mod exit_threads;
#[path = "gex_am/lanes.rs"]
mod lanes;
#[path = "gex_am/longs.rs"]
mod longs;
#[path = "gex_am/modes.rs"]
mod modes;
use modes::{bad, barrier, exit_mode, unregistered};

type Errors = Arc<Mutex<Vec<String>>>;

const SEG: usize = 4 << 20;
/// Where request payloads of Long land at the target.
const LONG_REQ_AT: usize = 0;
/// Where Long replies land at the requester.
const LONG_REP_AT: usize = 2 << 20;

fn arg_value(src: usize, kind: usize, nargs: usize, i: usize) -> u32 {
    (0x9e37_79b9u32)
        .wrapping_mul(src as u32 + 1)
        .wrapping_add((kind as u32) << 24 | (nargs as u32) << 16 | i as u32)
}

fn byte(seed: usize, j: usize) -> u8 {
    (j.wrapping_mul(131) ^ seed.wrapping_mul(29) ^ (j >> 8)) as u8
}

fn req_index(kind: usize, nargs: usize) -> u8 {
    (128 + kind * 17 + nargs) as u8
}
fn rep_index(kind: usize, nargs: usize) -> u8 {
    (179 + kind * 17 + nargs) as u8
}

fn check_args(
    errs: &Errors,
    what: &str,
    src: usize,
    kind: usize,
    args: &[u32],
    nargs: usize,
    bump: u32,
) {
    if args.len() != nargs {
        errs.lock()
            .unwrap()
            .push(format!("{what}: {} args, expected {nargs}", args.len()));
        return;
    }
    for (i, a) in args.iter().enumerate() {
        let want = arg_value(src, kind, nargs, i).wrapping_add(bump);
        if *a != want {
            errs.lock()
                .unwrap()
                .push(format!("{what}: arg {i} = {a:#x}, expected {want:#x}"));
        }
    }
}

fn check_payload(errs: &Errors, what: &str, seed: usize, p: &[u8], len: usize) {
    if p.len() != len {
        errs.lock().unwrap().push(format!(
            "{what}: payload of {} bytes, expected {len}",
            p.len()
        ));
        return;
    }
    if let Some(j) = (0..len).find(|&j| p[j] != byte(seed, j)) {
        errs.lock()
            .unwrap()
            .push(format!("{what}: payload byte {j} differs"));
    }
}

/// testcore: every kind, argument count and a range of payload sizes.
fn core(c: &Client) -> Fallible<String> {
    let errs: Errors = Arc::new(Mutex::new(Vec::new()));
    let replies = Arc::new(AtomicUsize::new(0));
    // Requests whose handler ran (from the predecessor, which sends as many
    // as this rank does): the errors they record are read only after all.
    let requests = Arc::new(AtomicUsize::new(0));
    let me = c.rank();
    // Long replies land from `rep_at` on, above the longest Long sent (the
    // inline threshold follows GASNET_OFI_MAX_MEDIUM, so it can be large).
    let longest = (c.long_inline_threshold() + 4096).max((1 << 20) + 5);
    let rep_at = (longest + 8).next_multiple_of(1 << 20).max(LONG_REP_AT);
    let seg = 2 * rep_at;
    // Payload lengths are passed out of band: the request carries the seed in
    // the payload pattern; the handlers know `len` from the slice.
    for kind in 0..3 {
        for nargs in 0..=16usize {
            let e = errs.clone();
            let q = requests.clone();
            let h = match kind {
                0 => Handler::request_short(nargs as u8, move |tok, args| {
                    check_args(&e, "short request", tok.source(), 0, args, nargs, 0);
                    let reply: Vec<u32> = args.iter().map(|a| a.wrapping_add(1)).collect();
                    if let Err(x) = tok.reply_short(rep_index(0, nargs), &reply) {
                        e.lock().unwrap().push(format!("reply_short: {x}"));
                    }
                    if tok.reply_short(rep_index(0, nargs), &reply).is_ok() {
                        e.lock().unwrap().push("a second reply was accepted".into());
                    }
                    q.fetch_add(1, Ordering::Release);
                }),
                1 => Handler::request_medium(nargs as u8, move |tok, args, p| {
                    check_args(&e, "medium request", tok.source(), 1, args, nargs, 0);
                    check_payload(&e, "medium request", tok.source() + p.len(), p, p.len());
                    let reply: Vec<u32> = args.iter().map(|a| a.wrapping_add(1)).collect();
                    let back: Vec<u8> = (0..p.len()).map(|j| byte(p.len() + 7, j)).collect();
                    if let Err(x) = tok.reply_medium(rep_index(1, nargs), &reply, &back) {
                        e.lock().unwrap().push(format!("reply_medium: {x}"));
                    }
                    q.fetch_add(1, Ordering::Release);
                }),
                _ => Handler::request_long(nargs as u8, move |tok, args, p| {
                    check_args(&e, "long request", tok.source(), 2, args, nargs, 0);
                    check_payload(
                        &e,
                        "long request",
                        tok.source() + p.len(),
                        &p.to_vec(),
                        p.len(),
                    );
                    let reply: Vec<u32> = args.iter().map(|a| a.wrapping_add(1)).collect();
                    let back: Vec<u8> = (0..p.len()).map(|j| byte(p.len() + 7, j)).collect();
                    let odd = 1 + (p.len() % 7);
                    if let Err(x) = tok.reply_long(rep_index(2, nargs), &reply, &back, rep_at + odd)
                    {
                        e.lock().unwrap().push(format!("reply_long: {x}"));
                    }
                    q.fetch_add(1, Ordering::Release);
                }),
            };
            c.register(req_index(kind, nargs), h)?;
            let e = errs.clone();
            let n = replies.clone();
            let h = match kind {
                0 => Handler::reply_short(nargs as u8, move |tok, args| {
                    check_args(&e, "short reply", me, 0, args, nargs, 1);
                    if tok.reply_short(rep_index(0, nargs), &[]).is_ok() {
                        e.lock().unwrap().push("a reply handler could reply".into());
                    }
                    n.fetch_add(1, Ordering::Relaxed);
                }),
                1 => Handler::reply_medium(nargs as u8, move |_tok, args, p| {
                    check_args(&e, "medium reply", me, 1, args, nargs, 1);
                    check_payload(&e, "medium reply", p.len() + 7, p, p.len());
                    n.fetch_add(1, Ordering::Relaxed);
                }),
                _ => Handler::reply_long(nargs as u8, move |tok, args, p| {
                    check_args(&e, "long reply", me, 2, args, nargs, 1);
                    check_payload(&e, "long reply", p.len() + 7, &p.to_vec(), p.len());
                    if tok.long_offset() != Some(rep_at + 1 + (p.len() % 7)) {
                        e.lock()
                            .unwrap()
                            .push(format!("long reply at {:?}", tok.long_offset()));
                    }
                    n.fetch_add(1, Ordering::Relaxed);
                }),
            };
            c.register(rep_index(kind, nargs), h)?;
        }
    }
    c.attach_segment(seg)?;
    c.barrier()?;
    let peer = (me + 1) % c.size();
    let mut expected = 0usize;
    let mut one = |c: &Client, kind: usize, nargs: usize, len: usize| -> Fallible<()> {
        let args: Vec<u32> = (0..nargs).map(|i| arg_value(me, kind, nargs, i)).collect();
        let payload: Vec<u8> = (0..len).map(|j| byte(me + len, j)).collect();
        match kind {
            0 => c.request_short(peer, req_index(0, nargs), &args)?,
            1 => c.request_medium(peer, req_index(1, nargs), &args, &payload)?,
            _ => c.request_long(
                peer,
                req_index(2, nargs),
                &args,
                &payload,
                LONG_REQ_AT + 3 + me % 5,
            )?,
        }
        expected += 1;
        let r = replies.clone();
        Ok(c.block_until(|| r.load(Ordering::Relaxed) == expected)?)
    };
    // Every kind x argument count.
    for kind in 0..3 {
        for nargs in 0..=16 {
            one(c, kind, nargs, if kind == 0 { 0 } else { 33 })?;
        }
    }
    // Medium sizes 0..max.
    let max = c.max_medium();
    let mut sizes: Vec<usize> = vec![0, 1, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 511, 512, 513];
    sizes.extend([max / 2 - 1, max / 2, max - 9, max - 8, max - 1, max]);
    for &len in &sizes {
        for nargs in [0, 1, 16] {
            one(c, 1, nargs, len)?;
        }
    }
    // Long sizes 0..beyond the inline threshold, odd offsets.
    let t = c.long_inline_threshold();
    let mut lsizes = vec![0usize, 1, 7, 8, 100, 4095, 4096, 4097];
    lsizes.extend([
        t.saturating_sub(200),
        t.saturating_sub(100),
        t,
        t + 1,
        t + 4096,
        65_536 + 3,
        (1 << 20) + 5,
    ]);
    for &len in &lsizes {
        for nargs in [0, 5, 16] {
            one(c, 2, nargs, len)?;
        }
    }
    // The predecessor's requests may still be arriving after this rank's
    // own replies are in.
    c.block_until(|| requests.load(Ordering::Acquire) == expected)?;
    let e = errs.lock().unwrap();
    if !e.is_empty() {
        return Err(fail(format!(
            "{} check(s) failed, first: {}",
            e.len(),
            e[0]
        )));
    }
    let s = c.stats();
    // long_rma: payloads moved by RMA, put-then-send or in one message
    // (long_landed of them).
    Ok(format!(
        "ok: {expected} request/reply pairs checked (medium max {max}, long inline threshold {t}); long_inline={} long_rma={} long_landed={} injected={} buffered={} shared={}",
        s.long_inline, s.long_rma + s.long_landed, s.long_landed, s.injected, s.sent_from_buffer, s.shared_sent
    ))
}

/// testam-style flood to rank 0.
fn flood(c: &Client, shorts: u64, mediums: u64) -> Fallible<String> {
    let size = c.size();
    let max = c.max_medium();
    let seen_s: Arc<Mutex<Vec<Vec<u64>>>> =
        Arc::new(Mutex::new(vec![
            vec![0u64; (shorts as usize).div_ceil(64)];
            size
        ]));
    let seen_m: Arc<Mutex<Vec<Vec<u64>>>> =
        Arc::new(Mutex::new(vec![
            vec![0u64; (mediums as usize).div_ceil(64)];
            size
        ]));
    let dups = Arc::new(AtomicU64::new(0));
    let bad = Arc::new(AtomicU64::new(0));
    let sum = Arc::new(AtomicU64::new(0));
    let (s2, d2, b2, sum2) = (seen_s.clone(), dups.clone(), bad.clone(), sum.clone());
    c.register(
        200,
        Handler::request_short(2, move |tok, a| {
            let (src, seq) = (tok.source(), a[0] as usize);
            if a[1] != (seq as u32).wrapping_mul(2654435761) ^ src as u32 {
                b2.fetch_add(1, Ordering::Relaxed);
            }
            let mut s = s2.lock().unwrap();
            let w = &mut s[src][seq / 64];
            if *w & (1 << (seq % 64)) != 0 {
                d2.fetch_add(1, Ordering::Relaxed);
            }
            *w |= 1 << (seq % 64);
            sum2.fetch_add(seq as u64 + 1, Ordering::Relaxed);
        }),
    )?;
    let (m2, d3, b3, sum3) = (seen_m.clone(), dups.clone(), bad.clone(), sum.clone());
    c.register(
        201,
        Handler::request_medium(1, move |tok, a, p| {
            let (src, seq) = (tok.source(), a[0] as usize);
            if p.len() != max || p[0] != seq as u8 || p[max - 1] != (seq as u8 ^ src as u8) {
                b3.fetch_add(1, Ordering::Relaxed);
            }
            let mut s = m2.lock().unwrap();
            let w = &mut s[src][seq / 64];
            if *w & (1 << (seq % 64)) != 0 {
                d3.fetch_add(1, Ordering::Relaxed);
            }
            *w |= 1 << (seq % 64);
            sum3.fetch_add(seq as u64 + 1, Ordering::Relaxed);
        }),
    )?;
    c.barrier()?;
    let me = c.rank();
    let mut payload = vec![0u8; max];
    let (mut ns, mut nm) = (0u64, 0u64);
    while ns < shorts || nm < mediums {
        // Interleave: ten shorts per medium.
        for _ in 0..10 {
            if ns < shorts {
                let seq = ns as u32;
                c.request_short(0, 200, &[seq, seq.wrapping_mul(2654435761) ^ me as u32])?;
                ns += 1;
            }
        }
        if nm < mediums {
            payload[0] = nm as u8;
            payload[max - 1] = nm as u8 ^ me as u8;
            c.request_medium(0, 201, &[nm as u32], &payload)?;
            nm += 1;
        }
    }
    if me != 0 {
        c.barrier()?;
        return Ok(String::new());
    }
    // AMs are not ordered with the barrier: rank 0 waits until every
    // message has arrived (or reports what is missing after 120 s).
    let count = |v: &Vec<Vec<u64>>| -> Vec<u64> {
        v.iter()
            .map(|w| w.iter().map(|x| x.count_ones() as u64).sum())
            .collect()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let (ss, sm) = (seen_s.clone(), seen_m.clone());
    let total = |v: &Arc<Mutex<Vec<Vec<u64>>>>| -> u64 { count(&v.lock().unwrap()).iter().sum() };
    c.block_until(|| {
        (total(&ss) == shorts * size as u64 && total(&sm) == mediums * size as u64)
            || std::time::Instant::now() > deadline
    })?;
    c.barrier()?;
    let cs = count(&seen_s.lock().unwrap());
    let cm = count(&seen_m.lock().unwrap());
    let want_sum = size as u64 * (shorts * (shorts + 1) / 2 + mediums * (mediums + 1) / 2);
    let problems = [
        (
            cs.iter().any(|&n| n != shorts),
            format!("shorts per sender {cs:?}, expected {shorts}"),
        ),
        (
            cm.iter().any(|&n| n != mediums),
            format!("mediums per sender {cm:?}, expected {mediums}"),
        ),
        (
            dups.load(Ordering::Relaxed) != 0,
            format!("{} duplicates", dups.load(Ordering::Relaxed)),
        ),
        (
            bad.load(Ordering::Relaxed) != 0,
            format!("{} corrupt messages", bad.load(Ordering::Relaxed)),
        ),
        (
            sum.load(Ordering::Relaxed) != want_sum,
            format!("checksum {} != {want_sum}", sum.load(Ordering::Relaxed)),
        ),
    ];
    if let Some((_, why)) = problems.iter().find(|(bad, _)| *bad) {
        return Err(fail(format!("flood check failed: {why}")));
    }
    let s = c.stats();
    Ok(format!(
        "ok: {} shorts and {} mediums of {max} bytes from {size} ranks arrived exactly once; request buffers {}, eagain retries {}, reposts {}",
        shorts * size as u64,
        mediums * size as u64,
        s.request_buffers,
        s.eagain_retries,
        s.reposts
    ))
}

/// An exit code from argument `i` (`default` if absent): a process exit
/// code, 0..=255.
fn exit_code(args: &[String], i: usize, default: usize) -> Fallible<i32> {
    let code = count_arg(args, i, default)?;
    if code > 255 {
        return Err(fail(format!(
            "argument {i} is '{code}'; expected an exit code, 0..=255"
        )));
    }
    Ok(code as i32)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    if mode == "exit-threads" {
        match exit_code(&args, 2, 5) {
            Ok(code) => exit_threads::main(code),
            Err(e) => {
                gex_env::eprintln_whole!("gex-am: {}", report(&*e));
                std::process::exit(1);
            }
        }
    }
    if mode == "threads" {
        tests::threads::main(
            "gex-am",
            &args,
            2000,
            tests::threads::AmSeen::new,
            tests::threads::am,
        );
    }
    let c = match Client::init() {
        Ok(c) => c,
        Err(e) => {
            gex_env::eprintln_whole!("gex-am: {}", e.report());
            std::process::exit(1);
        }
    };
    let num = |i: usize, d: usize| count_arg(&args, i, d);
    let r = match mode.as_str() {
        "core" => core(&c),
        "flood" => (|| flood(&c, num(2, 200_000)? as u64, num(3, 20_000)? as u64))(),
        "exit" => exit_code(&args, 3, 3).and_then(|code| {
            exit_mode(&c, args.get(2).map_or("rank0", |s| s.as_str()), code)
        }),
        "bad" => bad(&c),
        "unregistered" => unregistered(&c),
        "barrier" => barrier(&c),
        "longs" => num(2, 500).and_then(|n| longs::longs(&c, n)),
        "lanes" => num(2, 3000).and_then(|n| lanes::lanes(&c, n)),
        _ => Err(fail(format!(
            "usage: gex-am core|flood [shorts mediums]|longs [count]|lanes [rounds]|exit how code|exit-threads [code]|bad|unregistered|barrier|threads T shared|own [count] (got {mode:?})"
        ))),
    };
    match r {
        Ok(line) if line == "return" => {
            drop(c);
        }
        Ok(line) => {
            if c.rank() == 0 && !line.is_empty() {
                println!("gex-am {mode}: {line}");
            }
            if let Err(e) = c.barrier() {
                gex_env::eprintln_whole!("gex-am: rank {}: {}", c.rank(), e.report());
                c.exit(1);
            }
            c.exit(0);
        }
        Err(e) => {
            gex_env::eprintln_whole!("gex-am: rank {}: {}", c.rank(), report(&*e));
            c.exit(1);
        }
    }
}
