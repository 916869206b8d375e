//! The multi-threaded conformance modes (`gex-am threads T shared|own`,
//! `gex-rma threads T shared|own`): T threads per rank talk to every rank
//! at once through a [`ParClient`], all sharing the client's endpoint
//! (`shared`) or each owning one (`own`).

use crate::{fail, Fallible};
use conduit::client::{NbiSync, Options, ParClient, Token};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// How the threads reach the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Endpoints {
    /// All through endpoint 0.
    Shared,
    /// Thread `t` through endpoint `t + 1`.
    Own,
}

impl Endpoints {
    /// `shared` or `own`.
    pub fn parse(s: &str) -> Option<Endpoints> {
        match s {
            "shared" => Some(Endpoints::Shared),
            "own" => Some(Endpoints::Own),
            _ => None,
        }
    }
}

/// Arguments of a threads mode: `T shared|own [count]`.
pub fn parse_args(
    prog: &str,
    args: &[String],
    default_count: u64,
) -> Fallible<(usize, Endpoints, u64)> {
    let usage = || {
        fail(format!(
            "usage: {prog} threads <threads 1..=64> shared|own [count]"
        ))
    };
    let t: usize = args.get(2).and_then(|s| s.parse().ok()).ok_or_else(usage)?;
    if !(1..=64).contains(&t) {
        return Err(usage());
    }
    let eps = args
        .get(3)
        .and_then(|s| Endpoints::parse(s))
        .ok_or_else(usage)?;
    let n = match args.get(4) {
        None => default_count,
        Some(s) => s.parse().map_err(|_| usage())?,
    };
    Ok((t, eps, n))
}

/// The `threads` mode of a conformance program: parse `T shared|own
/// [count]`, start the multi-threaded client with the state `state(T)`, run
/// `body`, print rank 0's line, end the job (exit 2 on bad arguments, 1 on
/// a failure).
pub fn main<S: Send + Sync>(
    prog: &str,
    args: &[String],
    default_count: u64,
    state: impl FnOnce(usize) -> S,
    body: impl FnOnce(&ParClient<S>, usize, Endpoints, u64) -> Fallible<String>,
) -> ! {
    let (t, eps, n) = match parse_args(prog, args, default_count) {
        Ok(x) => x,
        Err(e) => {
            gex_env::eprintln_whole!("{prog}: {e}");
            std::process::exit(2);
        }
    };
    let sets = match eps {
        Endpoints::Shared => 1,
        Endpoints::Own => t + 1,
    };
    run_par(&format!("{prog} threads"), sets, state(t), |c| {
        body(c, t, eps, n)
    })
}

/// Start the multi-threaded client with `sets` endpoint sets and run
/// `body`; rank 0 prints `{line_prefix}: {its line}`, and the job ends (exit
/// 1 on a failure, which names the rank).
pub fn run_par<S: Send + Sync>(
    line_prefix: &str,
    sets: usize,
    state: S,
    body: impl FnOnce(&ParClient<S>) -> Fallible<String>,
) -> ! {
    let prog = line_prefix.split(' ').next().unwrap_or(line_prefix);
    let c = match ParClient::init_with(Options::new(state).endpoints(sets)) {
        Ok(c) => c,
        Err(e) => {
            gex_env::eprintln_whole!("{prog}: {}", e.report());
            std::process::exit(1);
        }
    };
    match body(&c) {
        Ok(line) => {
            if c.rank() == 0 {
                println!("{line_prefix}: {line}");
            }
            if let Err(e) = c.barrier() {
                gex_env::eprintln_whole!("{prog}: rank {}: {}", c.rank(), e.report());
                c.exit(1);
            }
            c.exit(0)
        }
        Err(e) => {
            gex_env::eprintln_whole!("{prog}: rank {}: {}", c.rank(), crate::report(&*e));
            c.exit(1)
        }
    }
}

/// What a rank of the AM mode records.
pub struct AmSeen {
    /// Per (source rank, source thread): sequence numbers of Shorts.
    shorts: Mutex<Vec<Vec<u32>>>,
    /// Per (source rank, source thread): sequence numbers of Mediums.
    mediums: Mutex<Vec<Vec<u32>>>,
    /// Replies received, per local thread.
    replies: Vec<AtomicU64>,
    /// Messages received per endpoint.
    per_endpoint: Vec<AtomicU64>,
    bad: AtomicU64,
}

impl AmSeen {
    /// For `threads` threads per rank.
    pub fn new(threads: usize) -> AmSeen {
        AmSeen {
            shorts: Mutex::new(Vec::new()),
            mediums: Mutex::new(Vec::new()),
            replies: (0..threads).map(|_| AtomicU64::new(0)).collect(),
            per_endpoint: (0..=threads).map(|_| AtomicU64::new(0)).collect(),
            bad: AtomicU64::new(0),
        }
    }
}

/// The failures the threads recorded, as one error naming the first.
fn no_thread_failed(errors: Mutex<Vec<String>>) -> Fallible<()> {
    let errors = errors.into_inner().unwrap_or_else(|p| p.into_inner());
    match errors.first() {
        Some(e) => Err(fail(format!(
            "{} thread(s) failed, first: {e}",
            errors.len()
        ))),
        None => Ok(()),
    }
}

fn payload(src: u32, seq: u32, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u32 ^ src.wrapping_mul(97) ^ seq) as u8)
        .collect()
}

fn record(v: &Mutex<Vec<Vec<u32>>>, who: usize, seq: u32) {
    let mut v = v.lock().unwrap_or_else(|p| p.into_inner());
    if v.len() <= who {
        v.resize(who + 1, Vec::new());
    }
    v[who].push(seq);
}

/// `gex-am threads`: every thread sends `msgs` Shorts (each answered by a
/// reply to that thread) and `msgs / 8` Mediums to every rank.
pub fn am(c: &ParClient<AmSeen>, threads: usize, eps: Endpoints, msgs: u64) -> Fallible<String> {
    let t_count = threads;
    c.on_request_short(200, 2, move |tok: &mut Token<'_, AmSeen>, a| {
        let st = tok.state();
        record(&st.shorts, a[0] as usize, a[1]);
        st.per_endpoint[tok.endpoint()].fetch_add(1, Ordering::Relaxed);
        let _ = tok.reply_short(201, &[a[0] % t_count as u32]);
    })?;
    c.on_reply_short(201, 1, |tok, a| {
        tok.state().replies[a[0] as usize].fetch_add(1, Ordering::Relaxed);
    })?;
    c.on_request_medium(202, 2, |tok, a, p| {
        let st = tok.state();
        let want_len = (a[1] as usize * 61) % 4096;
        if p != payload(a[0], a[1], want_len).as_slice() {
            st.bad.fetch_add(1, Ordering::Relaxed);
        }
        record(&st.mediums, a[0] as usize, a[1]);
        st.per_endpoint[tok.endpoint()].fetch_add(1, Ordering::Relaxed);
    })?;
    c.barrier()?;
    let (me, n) = (c.rank(), c.size());
    let mediums = msgs / 8;
    let per_sender_thread = msgs + mediums;
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    std::thread::scope(|sc| {
        for t in 0..threads {
            let errors = &errors;
            sc.spawn(move || {
                let run = || -> Fallible<()> {
                    let who = (me * threads + t) as u32;
                    let own;
                    macro_rules! with_ep {
                        ($ep:expr) => {{
                            let ep = $ep;
                            for seq in 0..msgs as u32 {
                                for d in 0..n {
                                    ep.request_short(d, 200, &[who, seq])?;
                                    if (seq as u64) < mediums {
                                        let len = (seq as usize * 61) % 4096;
                                        ep.request_medium(d, 202, &[who, seq], &payload(who, seq, len))?;
                                    }
                                }
                            }
                            let want = msgs * n as u64;
                            let warn_at = std::time::Instant::now() + std::time::Duration::from_secs(20);
                            let mut warned = false;
                            ep.block_until(|| {
                                let got = c.state().replies[t].load(Ordering::Relaxed);
                                if !warned && std::time::Instant::now() > warn_at {
                                    warned = true;
                                    gex_env::eprintln_whole!("rank {me} thread {t}: {got} of {want} replies after 20 s\n{}", c.diagnostics());
                                }
                                got == want
                            })?;
                            if eps == Endpoints::Own {
                                // Serve this endpoint until every rank's
                                // thread t delivered here.
                                let want = per_sender_thread * n as u64;
                                ep.block_until(|| {
                                    c.state().per_endpoint[t + 1].load(Ordering::Relaxed) == want
                                })?;
                            }
                        }};
                    }
                    match eps {
                        Endpoints::Shared => with_ep!(c),
                        Endpoints::Own => {
                            own = c.endpoint(t + 1)?;
                            with_ep!(&own)
                        }
                    }
                    Ok(())
                };
                if let Err(e) = run() {
                    errors.lock().unwrap_or_else(|p| p.into_inner()).push(format!("thread {t}: {e}"));
                }
            });
        }
        // The main thread serves endpoint 0 until everything arrived.
        let want = per_sender_thread * (n * threads) as u64;
        let arrived = || {
            let s = c.state();
            s.shorts
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .iter()
                .map(|v| v.len() as u64)
                .sum::<u64>()
                + s.mediums
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .iter()
                    .map(|v| v.len() as u64)
                    .sum::<u64>()
        };
        if let Err(e) = c.block_until(|| arrived() == want) {
            errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!("main thread: {e}"));
        }
    });
    no_thread_failed(errors)?;
    let st = c.state();
    for (name, v, count) in [
        ("shorts", &st.shorts, msgs),
        ("mediums", &st.mediums, mediums),
    ] {
        let v = v.lock().unwrap_or_else(|p| p.into_inner());
        for k in 0..n * threads {
            let mut got = v.get(k).cloned().unwrap_or_default();
            got.sort_unstable();
            if got != (0..count as u32).collect::<Vec<_>>() {
                return Err(fail(format!(
                    "{name} from rank {} thread {}: {} arrived, {} distinct, expected each of 0..{count} once",
                    k / threads,
                    k % threads,
                    got.len(),
                    {
                        let mut d = got.clone();
                        d.dedup();
                        d.len()
                    }
                )));
            }
        }
    }
    if st.bad.load(Ordering::Relaxed) != 0 {
        return Err(fail(format!(
            "{} corrupt Medium payloads",
            st.bad.load(Ordering::Relaxed)
        )));
    }
    let on0 = st.per_endpoint[0].load(Ordering::Relaxed);
    Ok(format!(
        "ok: {threads} threads x {n} ranks, {} AMs each way per thread pair arrived exactly once ({msgs} Shorts with replies, {mediums} Mediums), endpoints {}, {on0} received on endpoint 0",
        per_sender_thread,
        match eps {
            Endpoints::Shared => "shared",
            Endpoints::Own => "one per thread",
        }
    ))
}

fn block(src: usize, t: usize, dest: usize, round: u64, len: usize) -> Vec<u8> {
    (0..len)
        .map(|i| (i ^ (src * 131 + t * 17 + dest * 7 + round as usize * 3) ^ (i >> 8)) as u8)
        .collect()
}

/// `gex-rma threads`: every thread writes its own block in every rank's
/// segment by blocking, NB and NBI puts (`rounds` times, sizes across the
/// inject, bounce and blocking paths), reads it back by blocking, NB and
/// NBI gets, and checks every byte.
pub fn rma(c: &ParClient<()>, threads: usize, eps: Endpoints, rounds: u64) -> Fallible<String> {
    const BLOCK: usize = 128 * 1024;
    let n = c.size();
    let page = conduit::config::host_page_size();
    c.attach_segment((n * threads * BLOCK).div_ceil(page) * page)?;
    c.barrier()?;
    let me = c.rank();
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let bytes_checked = AtomicU64::new(0);
    // With manual progress a target serves RMA only while someone polls its
    // endpoint: a thread that owns one keeps polling it after its own work,
    // until every rank's threads are done (the main threads' barrier).
    let finished = AtomicU64::new(0);
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|sc| {
        for t in 0..threads {
            let (errors, bytes_checked, finished, stop) =
                (&errors, &bytes_checked, &finished, &stop);
            sc.spawn(move || {
                let run = || -> Fallible<()> {
                    let own;
                    macro_rules! with_ep {
                        ($ep:expr) => {{
                            let ep = $ep;
                            let at = (me * threads + t) * BLOCK;
                            for round in 0..rounds {
                                let sizes = [8usize, 200, 5000, 40_000, BLOCK];
                                let len = sizes[round as usize % sizes.len()];
                                for d in 0..n {
                                    let b = block(me, t, d, round, len);
                                    match round % 3 {
                                        0 => ep.put(d, at, &b)?,
                                        1 => ep.rma_scope(|s| {
                                            let e = s.put_nb(d, at, &b)?;
                                            s.wait(e)
                                        })?,
                                        _ => ep.rma_scope(|s| {
                                            for (k, ch) in b.chunks(4096).enumerate() {
                                                s.put_nbi(d, at + k * 4096, ch)?;
                                            }
                                            s.sync_nbi(NbiSync::Puts)
                                        })?,
                                    }
                                    let mut back = vec![0u8; len];
                                    match round % 3 {
                                        0 => ep.rma_scope(|s| {
                                            let e = s.get_nb(d, at, &mut back)?;
                                            s.wait(e)
                                        })?,
                                        1 => ep.rma_scope(|s| {
                                            for (k, ch) in back.chunks_mut(8192).enumerate() {
                                                s.get_nbi(d, at + k * 8192, ch)?;
                                            }
                                            s.sync_nbi(NbiSync::Gets)
                                        })?,
                                        _ => ep.get(d, at, &mut back)?,
                                    }
                                    if back != b {
                                        let j = (0..len).find(|&j| back[j] != b[j]).unwrap_or(0);
                                        return Err(fail(format!(
                                            "round {round}: {len} bytes at rank {d}: byte {j} differs"
                                        )));
                                    }
                                    bytes_checked.fetch_add(len as u64, Ordering::Relaxed);
                                }
                            }
                        }};
                    }
                    match eps {
                        Endpoints::Shared => {
                            with_ep!(c);
                            finished.fetch_add(1, Ordering::Release);
                        }
                        Endpoints::Own => {
                            own = c.endpoint(t + 1)?;
                            let r: Fallible<()> = (|| {
                                with_ep!(&own);
                                Ok(())
                            })();
                            finished.fetch_add(1, Ordering::Release);
                            own.block_until(|| stop.load(Ordering::Acquire))?;
                            r?;
                        }
                    }
                    Ok(())
                };
                if let Err(e) = run() {
                    finished.fetch_add(1, Ordering::Release);
                    errors.lock().unwrap_or_else(|p| p.into_inner()).push(format!("thread {t}: {e}"));
                }
            });
        }
        // The main thread serves endpoint 0 meanwhile, then meets the other
        // ranks once its threads are done.
        let r = c
            .block_until(|| finished.load(Ordering::Acquire) >= threads as u64)
            .and_then(|_| c.barrier());
        stop.store(true, Ordering::Release);
        if let Err(e) = r {
            errors
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(format!("main thread: {e}"));
        }
    });
    no_thread_failed(errors)?;
    let pc = c.put_counts();
    Ok(format!(
        "ok: {threads} threads x {n} ranks, {rounds} rounds of put/get to every rank, {} bytes checked on rank 0, endpoints {}; NB_PUT_INJECT={} NB_PUT_BOUNCE={} NB_PUT_BLOCK={}",
        bytes_checked.load(Ordering::Relaxed),
        match eps {
            Endpoints::Shared => "shared",
            Endpoints::Own => "one per thread",
        },
        pc.inject,
        pc.bounce,
        pc.block
    ))
}
