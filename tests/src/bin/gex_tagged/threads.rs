//! `gex-tagged threads <threads> <comms> <iters>`: each thread of a
//! multi-threaded client ping-pongs on its own `comms` duplicated
//! communicators with the next rank, data checked.

use conduit::client::{Options, ParClient};
use std::process::exit;

/// Run and end the process (never returns).
pub fn main(args: &[String]) -> ! {
    let num = |i: usize, d: usize| tests::program::count_arg(args, i, d);
    let parsed: tests::Fallible<_> = (|| Ok((num(2, 4)?, num(3, 4)?, num(4, 200)?)))();
    let (threads, comms, iters) = match parsed {
        Ok(x) => x,
        Err(e) => {
            gex_env::eprintln_whole!("gex-tagged: {e}");
            exit(2);
        }
    };
    let c = init();
    let r = run(&c, threads, comms, iters);
    end(&c, "threads", r)
}

/// The multi-threaded client with tagged messaging, or exit 1 saying why.
fn init() -> ParClient {
    ParClient::init_with(Options::new(()).tagged()).unwrap_or_else(|e| {
        gex_env::eprintln_whole!("gex-tagged: {}", e.report());
        exit(1)
    })
}

/// End the mode as every conformance program does, then the process.
fn end(c: &ParClient, mode: &str, r: Result<String, String>) -> ! {
    tests::program::finish(c, "gex-tagged", mode, r.map_err(tests::fail));
    c.exit(0)
}

fn run(c: &ParClient, threads: usize, comms: usize, iters: usize) -> Result<String, String> {
    let w = c.tagged_world().map_err(|e| e.report())?;
    let mut dups = Vec::new();
    for _ in 0..threads * comms {
        dups.push(w.dup().map_err(|e| e.report())?);
    }
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let contexts: std::collections::BTreeSet<usize> = dups.iter().map(|d| d.context()).collect();
    std::thread::scope(|s| {
        let mut hs = Vec::new();
        for t in 0..threads {
            let mine = &dups[t * comms..(t + 1) * comms];
            hs.push(s.spawn(move || -> Result<(), String> {
                let mut buf = [0u8; 16];
                for i in 0..iters {
                    for (k, d) in mine.iter().enumerate() {
                        let v = ((t * 1000 + k) * 100_000 + i) as u64;
                        let out = [v.to_le_bytes(), (me as u64).to_le_bytes()].concat();
                        // Even ranks send first; with an odd size the last
                        // rank's pair still works as both post sends first
                        // (small messages are injected).
                        d.send(&out, next, 7).map_err(|e| e.report())?;
                        let st = d.recv(&mut buf, Some(prev), Some(7)).map_err(|e| e.report())?;
                        let got = u64::from_le_bytes(buf[..8].try_into().unwrap_or_default());
                        let from = u64::from_le_bytes(buf[8..].try_into().unwrap_or_default());
                        if st.len != 16 || got != v || from != prev as u64 {
                            return Err(format!(
                                "thread {t} comm {k} iteration {i}: got {got} from {from}, wanted {v} from {prev}"
                            ));
                        }
                    }
                }
                Ok(())
            }));
        }
        for h in hs {
            h.join().map_err(|_| "a thread panicked".to_string())??;
        }
        Ok::<(), String>(())
    })?;
    Ok(format!(
        "ok: {threads} threads x {comms} communicators x {iters} ping-pongs on {n} ranks, data checked; {} context(s) used",
        contexts.len()
    ))
}

/// `gex-tagged dup-threads <threads> <rounds>`: each round, every thread
/// duplicates a communicator of its own at the same time as the others,
/// sends its thread number to the next rank on the new one and receives
/// the previous rank's: every new communicator must get an id no other
/// communicator of the rank has (two with one id would cross their
/// messages); then all are freed. Runs and ends the process.
pub fn dup_main(args: &[String]) -> ! {
    let num = |i: usize, d: usize| tests::program::count_arg(args, i, d);
    let (threads, rounds) = match (num(2, 4), num(3, 50)) {
        (Ok(t), Ok(r)) => (t, r),
        (Err(e), _) | (_, Err(e)) => {
            gex_env::eprintln_whole!("gex-tagged: {e}");
            exit(2);
        }
    };
    let c = init();
    let r = dup_run(&c, threads, rounds);
    end(&c, "dup-threads", r)
}

fn dup_run(c: &ParClient, threads: usize, rounds: usize) -> Result<String, String> {
    let w = c.tagged_world().map_err(|e| e.report())?;
    let parents = (0..threads)
        .map(|_| w.dup().map_err(|e| e.report()))
        .collect::<Result<Vec<_>, _>>()?;
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    for round in 0..rounds {
        let dups = std::thread::scope(|s| {
            let hs: Vec<_> = parents
                .iter()
                .enumerate()
                .map(|(t, p)| {
                    s.spawn(move || {
                        let d = p.dup().map_err(|e| e.report())?;
                        let out = [t as u64, round as u64, me as u64].map(u64::to_le_bytes).concat();
                        d.send(&out, next, 5).map_err(|e| e.report())?;
                        let mut buf = [0u8; 24];
                        d.recv(&mut buf, Some(prev), Some(5)).map_err(|e| e.report())?;
                        let want = [t as u64, round as u64, prev as u64].map(u64::to_le_bytes).concat();
                        if buf[..] != want[..] {
                            return Err(format!(
                                "round {round}: thread {t}'s new communicator (id {}) received {buf:?}, \
                                 not its own thread's message from rank {prev}",
                                d.id()
                            ));
                        }
                        Ok::<_, String>(d)
                    })
                })
                .collect();
            hs.into_iter()
                .map(|h| h.join().map_err(|_| "a thread panicked".to_string())?)
                .collect::<Result<Vec<_>, String>>()
        })?;
        let ids: Vec<u32> = dups.iter().map(|d| d.id()).collect();
        let distinct: std::collections::BTreeSet<u32> = ids.iter().copied().collect();
        if distinct.len() != ids.len() {
            return Err(format!(
                "round {round}: communicators duplicated at once share ids: {ids:?}"
            ));
        }
        // Freed once all were made (in the same order on every rank), so
        // that no id was free again while the others were agreed.
        for d in dups {
            d.free().map_err(|e| e.report())?;
        }
    }
    Ok(format!(
        "ok: {threads} threads x {rounds} rounds duplicated communicators at once on {n} ranks, every id distinct, messages on their own communicator"
    ))
}
