//! The multi-threaded client's AM message rate (`gex-bench --par 1,2`).
//!
//! For each thread count T and each way of reaching the network (all
//! threads through the client's endpoint, or each through its own), rank 1
//! runs T threads that each send `--par-msgs` AM Shorts to rank 0 as fast
//! as they can; rank 0 runs T threads that serve the same endpoints. A
//! repetition's rate is the messages received divided by the time from
//! the barrier that starts it until rank 0 has them all. Ranks other than
//! 0 and 1 only meet the barriers.

use crate::cli::Opts;
use crate::stats::Summary;
use conduit::client::{Options, ParClient};
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// What rank 0 counts: messages per endpoint set.
#[derive(Debug)]
pub struct Counts {
    got: Vec<AtomicU64>,
}

/// One figure: T threads, endpoints shared or one per thread.
#[derive(Debug, Clone, Serialize)]
pub struct ParRate {
    /// Threads per rank.
    pub threads: usize,
    /// `shared` or `own`.
    pub endpoints: &'static str,
    /// Messages per thread per repetition.
    pub msgs_per_thread: u64,
    /// Million messages per second received by rank 0.
    pub mmsgs_per_s: Summary,
}

const H: u8 = 200;

/// Start the multi-threaded client with one endpoint set per thread of the
/// largest count (plus the client's own).
pub fn init(threads: &[usize]) -> Result<ParClient<Counts>, conduit::client::Error> {
    let sets = threads.iter().copied().max().unwrap_or(1) + 1;
    ParClient::init_with(
        Options::new(Counts {
            got: (0..sets).map(|_| AtomicU64::new(0)).collect(),
        })
        .endpoints(sets),
    )
}

type Fallible<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn one_rep(c: &ParClient<Counts>, t: usize, own: bool, n: u64) -> Fallible<f64> {
    let me = c.rank();
    for g in &c.state().got {
        g.store(0, Ordering::Relaxed);
    }
    c.barrier()?;
    let start = Instant::now();
    if me <= 1 {
        let errors: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|sc| {
            for k in 0..t {
                let errors = &errors;
                sc.spawn(move || {
                    let run = || -> Result<(), conduit::client::Error> {
                        let ep;
                        let set = if own { k + 1 } else { 0 };
                        macro_rules! go {
                            ($e:expr) => {{
                                let e = $e;
                                if me == 1 {
                                    for i in 0..n {
                                        e.request_short(0, H, &[i as u32])?;
                                    }
                                } else {
                                    let want = if own { n } else { n * t as u64 };
                                    e.block_until(|| {
                                        c.state().got[set].load(Ordering::Relaxed) >= want
                                    })?;
                                }
                            }};
                        }
                        if own {
                            ep = c.endpoint(k + 1)?;
                            go!(&ep);
                        } else {
                            go!(c);
                        }
                        Ok(())
                    };
                    if let Err(e) = run() {
                        errors
                            .lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .push(e.report());
                    }
                });
            }
        });
        if let Some(e) = errors.into_inner().unwrap_or_default().first() {
            return Err(e.clone().into());
        }
    }
    let secs = start.elapsed().as_secs_f64();
    c.barrier()?;
    Ok((n * t as u64) as f64 / secs / 1e6)
}

/// Measure every combination; rank 0 returns the figures.
pub fn run(c: &ParClient<Counts>, o: &Opts, threads: &[usize]) -> Fallible<Option<Vec<ParRate>>> {
    if c.size() < 2 {
        return Err("gex-bench --par needs at least 2 ranks".into());
    }
    c.on_request_short(H, 1, |tok, _| {
        tok.state().got[tok.endpoint()].fetch_add(1, Ordering::Relaxed);
    })?;
    c.barrier()?;
    let mut out = Vec::new();
    for &t in threads {
        for own in [false, true] {
            // A short warm-up, then the measured repetitions.
            one_rep(c, t, own, (o.par_msgs / 10).max(1))?;
            let mut v = Vec::with_capacity(o.reps);
            for _ in 0..o.reps {
                v.push(one_rep(c, t, own, o.par_msgs)?);
            }
            if let Some(s) = Summary::of(&v) {
                out.push(ParRate {
                    threads: t,
                    endpoints: if own { "own" } else { "shared" },
                    msgs_per_thread: o.par_msgs,
                    mmsgs_per_s: s,
                });
            }
        }
    }
    Ok((c.rank() == 0).then_some(out))
}

/// The table printed by rank 0.
pub fn table(provider: &str, rates: &[ParRate]) -> String {
    let mut s = format!(
        "# gex-bench --par: AM Short message rate, multi-threaded client, provider {provider}\n\
         # rank 1's T threads send to rank 0's T threads; medians of repetitions (min..max)\n\
         {:>7}  {:>9}  {:>14}  {:>22}\n",
        "threads", "endpoints", "M msgs/s", "spread"
    );
    for r in rates {
        s.push_str(&format!(
            "{:>7}  {:>9}  {:>14.3}  {:>10.3}..{:<10.3}\n",
            r.threads, r.endpoints, r.mmsgs_per_s.median, r.mmsgs_per_s.min, r.mmsgs_per_s.max
        ));
    }
    s
}
