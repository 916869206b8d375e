//! The measurements, run by every rank of the job in the same order: rank
//! 0 drives and times, the other ranks serve (poll) until rank 0 releases
//! them with a control message.

use crate::cli::{Opts, TestKind};
use crate::pingpong::Pingpong;
use crate::proc::{cpu_ticks, loadavg, own_ticks, rss_parts, vm_rss_kib};
use crate::report::{Memory, RawInfo, Report, RssParts, StartUp};
use conduit::client::{Client, Handler};
use figures::Figures;

/// A benchmark step's outcome: a conduit error or a failed check.
pub type Fallible<T> = Result<T, Box<dyn std::error::Error + Send + Sync>>;

fn fail(why: impl Into<String>) -> Box<dyn std::error::Error + Send + Sync> {
    why.into().into()
}
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod figures;
mod steps;
mod tagged;

/// Control: rank 0 releases the servers from step `args[0]`.
const H_CTRL: u8 = 130;
/// Ping (Short request, 2 args = 8 bytes).
const H_PING: u8 = 131;
/// Pong (Short reply, 2 args).
const H_PONG: u8 = 132;
/// Flood Medium (1 arg: the flood's message count).
const H_MED: u8 = 133;
/// Flood Long (1 arg: the flood's message count).
const H_LONG: u8 = 134;
/// Long ping (Long request, 2 args), answered by a pong.
const H_LONG_PING: u8 = 137;
/// Flood acknowledgement (Short reply).
const H_ACK: u8 = 135;
/// End-of-run report of a server rank (Medium request: VmRSS after start-up
/// and at the end in KiB, and its CPU time over the run in clock ticks; three
/// little-endian u64).
const H_RSS: u8 = 136;

/// State the handlers share with the main code.
#[derive(Default)]
struct Shared {
    ctrl: AtomicU32,
    pongs: AtomicU64,
    acks: AtomicU64,
    rss: Mutex<Vec<Memory>>,
    /// CPU ticks the server ranks used over the run.
    server_ticks: AtomicU64,
}

struct Bench<'a> {
    c: &'a Client,
    o: &'a Opts,
    sh: Arc<Shared>,
    step: u32,
    figs: Figures,
    progress_t0: Instant,
    /// The start-up taken out of each fi_pingpong figure (rank 0).
    pp_start_up: Vec<StartUp>,
}

impl Bench<'_> {
    fn rank0(&self) -> bool {
        self.c.rank() == 0
    }

    fn progress(&self, what: &str) {
        if self.rank0() && !self.o.quiet {
            conduit::eprintln_whole!(
                "[gex-bench {:7.1} s] {what}",
                self.progress_t0.elapsed().as_secs_f64()
            );
        }
    }

    /// End of a step. Rank 0 releases the others; they wait, polling
    /// continuously (`sleepy == false`) or once per millisecond with sleeps
    /// in between (`sleepy`: leaves the cores to fi_pingpong).
    fn step_end(&mut self, sleepy: bool) -> Fallible<()> {
        self.step += 1;
        let s = self.step;
        if self.rank0() {
            for r in 1..self.c.size() {
                self.c.request_short(r, H_CTRL, &[s])?;
            }
            return Ok(());
        }
        let sh = self.sh.clone();
        if sleepy {
            while sh.ctrl.load(Ordering::Acquire) < s {
                self.c.poll()?;
                std::thread::sleep(Duration::from_millis(1));
            }
            Ok(())
        } else {
            Ok(self
                .c
                .block_until(|| sh.ctrl.load(Ordering::Acquire) >= s)?)
        }
    }

    /// Rank 0 runs fi_pingpong for every figure's size while the other
    /// ranks sleep; they poll again when released.
    fn raw(&mut self, pp: Option<&Pingpong>, errors: &mut Vec<String>) -> Fallible<()> {
        if let (true, Some(pp)) = (self.rank0(), pp) {
            let deadline = Duration::from_secs(300);
            // One fi_pingpong run per size, with as many round trips as
            // the conduit's figure of that size with the most messages
            // (floods and by-size latencies use flood_count; the AM
            // round trip --iters: `Opts::pingpong_count`).
            let mut wanted: Vec<usize> = self
                .figs
                .0
                .iter()
                .filter(|f| f.test != "barrier" && !tagged::TESTS.contains(&f.test))
                .filter_map(|f| f.size)
                .collect();
            wanted.sort_unstable();
            wanted.dedup();
            for size in wanted {
                let am_rtt = self
                    .figs
                    .0
                    .iter()
                    .any(|f| f.test == "am_short_rtt" && f.size == Some(size));
                let iters = self.o.pingpong_count(size, am_rtt);
                match pp.run(size, iters, deadline) {
                    Ok(r) => {
                        self.pp_start_up.push(StartUp::of(size, &r));
                        for f in self.figs.0.iter_mut() {
                            if f.size != Some(size) || f.raw.len() >= f.ours.len() {
                                continue;
                            }
                            match f.test {
                                "am_short_rtt" | "am_long_rtt" | "put_latency" | "get_latency" => {
                                    f.raw.push(2.0 * r.one_way_us);
                                    f.raw_what = Some("2 x fi_pingpong one-way latency");
                                }
                                "am_medium_flood"
                                | "am_long_flood"
                                | "put_nbi_bw"
                                | "put_nbi_bw_spread"
                                | "get_nbi_bw"
                                | "get_nbi_bw_spread"
                                | "get_nbi_bw_spread_paged" => {
                                    // size / the one-way time, whose start-up
                                    // is taken out (`pingpong::parse` reads
                                    // the finer of its two columns).
                                    f.raw.push(if r.one_way_us > 0.0 {
                                        size as f64 / r.one_way_us
                                    } else {
                                        r.mb_per_s
                                    });
                                    f.raw_what = Some(
                                        "fi_pingpong bandwidth, one message in flight (size / one-way time)",
                                    );
                                }
                                _ => {}
                            }
                        }
                    }
                    Err(e) => errors.push(format!("fi_pingpong -S {size}: {e}")),
                }
            }
        }
        self.step_end(true)
    }

    fn rss_gather(&mut self, start: RssParts, ticks: u64) -> Fallible<Vec<Memory>> {
        let end_kib = vm_rss_kib();
        let me = self.c.rank();
        let mine = Memory {
            rank: me,
            start_kib: start.total_kib,
            end_kib,
            start,
            conduit: self.c.memory_use(),
        };
        if me != 0 {
            let b = serde_json::to_vec(&ServerReport {
                memory: mine,
                ticks,
            })
            .map_err(|e| fail(format!("memory report: {e}")))?;
            self.c.request_medium(0, H_RSS, &[me as u32], &b)?;
            return Ok(Vec::new());
        }
        let sh = self.sh.clone();
        let others = self.c.size() - 1;
        self.c
            .block_until(|| sh.rss.lock().map(|v| v.len() >= others).unwrap_or(true))?;
        let mut all = vec![mine];
        all.extend(sh.rss.lock().map(|v| v.clone()).unwrap_or_default());
        all.sort_by_key(|m| m.rank);
        Ok(all)
    }
}

/// A server rank's end-of-run report to rank 0 (JSON in an AM Medium).
#[derive(serde::Serialize, serde::Deserialize)]
struct ServerReport {
    memory: Memory,
    /// CPU clock ticks the rank used over the run.
    ticks: u64,
}

fn register(c: &Client, sh: &Arc<Shared>) -> Fallible<()> {
    let s = sh.clone();
    c.register(
        H_CTRL,
        Handler::request_short(1, move |_t, a| {
            s.ctrl.fetch_max(a[0], Ordering::AcqRel);
        }),
    )?;
    c.register(
        H_PING,
        Handler::request_short(2, |t, a| {
            // A reply to a live requester cannot fail short of a fabric
            // error, which the next poll reports.
            let _ = t.reply_short(H_PONG, a);
        }),
    )?;
    c.register(
        H_LONG_PING,
        Handler::request_long(2, |t, a, _p| {
            let _ = t.reply_short(H_PONG, a);
        }),
    )?;
    let s = sh.clone();
    c.register(
        H_PONG,
        Handler::reply_short(2, move |_t, _a| {
            s.pongs.fetch_add(1, Ordering::Relaxed);
        }),
    )?;
    for (h, long) in [(H_MED, false), (H_LONG, true)] {
        // Handlers are Fn (a multi-threaded client runs them on any
        // thread): the count lives in an atomic.
        let got = std::sync::atomic::AtomicU64::new(0);
        let count = move |t: &mut conduit::client::Token<'_>, a: &[u32]| {
            if got.fetch_add(1, Ordering::Relaxed) + 1 == a[0] as u64 {
                got.store(0, Ordering::Relaxed);
                let _ = t.reply_short(H_ACK, &[a[0]]);
            }
        };
        let handler = if long {
            Handler::request_long(1, move |t, a, _p| count(t, a))
        } else {
            Handler::request_medium(1, move |t, a, _p| count(t, a))
        };
        c.register(h, handler)?;
    }
    let s = sh.clone();
    c.register(
        H_ACK,
        Handler::reply_short(1, move |_t, _a| {
            s.acks.fetch_add(1, Ordering::Relaxed);
        }),
    )?;
    let s = sh.clone();
    c.register(
        H_RSS,
        Handler::request_medium(1, move |_t, a, p| {
            if let Ok(r) = serde_json::from_slice::<ServerReport>(p) {
                s.server_ticks.fetch_add(r.ticks, Ordering::Relaxed);
                if let Ok(mut v) = s.rss.lock() {
                    v.push(Memory {
                        rank: a[0] as usize,
                        ..r.memory
                    });
                }
            }
        }),
    )?;
    Ok(())
}

/// Run the benchmark on this rank. Rank 0 returns the report; the others
/// return `None`.
pub fn run(c: &Client, o: &Opts) -> Fallible<Option<Report>> {
    if c.size() < 2 {
        return Err(fail(
            "gex-bench needs at least 2 ranks (gasnetrun-ofi -n 2 gex-bench)",
        ));
    }
    let load_start = loadavg();
    let sh = Arc::new(Shared::default());
    register(c, &sh)?;
    let am = o.tests.contains(&TestKind::Am) || o.tests.contains(&TestKind::Rma);
    if am {
        let page = conduit::config::host_page_size();
        let largest = o.sizes.iter().copied().max().unwrap_or(0).max(1);
        // The spread puts write as much of the segment as the gets write
        // of their buffer (`rma_bandwidth`).
        let span = if o.tests.contains(&TestKind::Rma) {
            o.rma_span(largest)
        } else {
            largest
        };
        c.attach_segment(span.div_ceil(page) * page)?;
    }
    let start_mem = rss_parts();
    c.barrier()?;
    let (busy0, total0) = cpu_ticks();
    let own0 = own_ticks();

    let provider = c.provider().to_string();
    let (pp, how) = if o.no_pingpong {
        (None, "--no-pingpong".to_string())
    } else {
        match o.pingpong.clone().or_else(crate::pingpong::find_binary) {
            Some(b) => {
                let p = Pingpong::for_provider(&b, &provider);
                // The 8-byte run's command lines (the AM round trip's,
                // where it is measured).
                let am = o.tests.contains(&TestKind::Am);
                let how = p.describe(8, o.pingpong_count(8, am));
                (Some(p), how)
            }
            None => (None, "fi_pingpong not found on PATH".to_string()),
        }
    };
    let mut b = Bench {
        c,
        o,
        sh,
        step: 0,
        figs: Figures::default(),
        progress_t0: Instant::now(),
        pp_start_up: Vec::new(),
    };
    let mut pp_errors = Vec::new();
    let mut tg = if o.tests.contains(&TestKind::Tagged) {
        Some(tagged::Tagged::setup(&b, &provider)?)
    } else {
        None
    };
    for rep in 0..o.reps {
        for t in &o.tests {
            match t {
                TestKind::Am => {
                    b.progress(&format!("rep {}/{}: AM Short round trip", rep + 1, o.reps));
                    b.am_short()?;
                    b.progress(&format!("rep {}/{}: AM Medium flood", rep + 1, o.reps));
                    b.am_floods(false)?;
                    b.progress(&format!("rep {}/{}: AM Long flood", rep + 1, o.reps));
                    b.am_floods(true)?;
                    b.progress(&format!("rep {}/{}: AM Long round trip", rep + 1, o.reps));
                    b.am_long_rtt()?;
                }
                TestKind::Rma => {
                    b.progress(&format!("rep {}/{}: put/get latency", rep + 1, o.reps));
                    b.rma_latency()?;
                    b.progress(&format!(
                        "rep {}/{}: NBI put/get bandwidth",
                        rep + 1,
                        o.reps
                    ));
                    b.rma_bandwidth()?;
                }
                TestKind::Barrier => {
                    b.progress(&format!("rep {}/{}: barrier", rep + 1, o.reps));
                    b.barriers()?;
                }
                TestKind::Tagged => {
                    if let Some(t) = tg.as_mut() {
                        b.progress(&format!("rep {}/{}: tagged", rep + 1, o.reps));
                        b.tagged(t, pp.as_ref(), &mut pp_errors)?;
                    }
                }
            }
        }
        if pp.is_some() && o.tests.iter().any(|t| *t != TestKind::Tagged) {
            b.progress(&format!("rep {}/{}: fi_pingpong", rep + 1, o.reps));
        }
        b.raw(pp.as_ref(), &mut pp_errors)?;
    }
    for e in &pp_errors {
        conduit::eprintln_whole!("gex-bench: {e}");
    }
    let memory = b.rss_gather(start_mem, own_ticks() - own0)?;
    let (busy1, total1) = cpu_ticks();
    if !b.rank0() {
        return Ok(None);
    }
    let rows = b.figs.rows();
    let ran = pp.is_some() && pp_errors.is_empty();
    // What the rest of the machine used meanwhile: all busy time less ours
    // (both ranks, and fi_pingpong as rank 0's children).
    let ours = own_ticks() - own0 + b.sh.server_ticks.load(Ordering::Relaxed);
    let foreign = (busy1 - busy0).saturating_sub(ours);
    let other_cpu_pct = 100.0 * foreign as f64 / (total1 - total0).max(1) as f64;
    Ok(Some(Report {
        provider,
        shared_memory: b.c.is_shared(1),
        ranks: b.c.size(),
        iters: o.iters,
        reps: o.reps,
        max_medium: b.c.max_medium(),
        long_inline_threshold: b.c.long_inline_threshold(),
        load_start,
        load_end: loadavg(),
        other_cpu_pct,
        pingpong: RawInfo {
            ran,
            how: if pp_errors.is_empty() {
                how
            } else {
                format!("{how}; errors: {}", pp_errors.join("; "))
            },
        },
        pingpong_start_up: std::mem::take(&mut b.pp_start_up),
        tagged: tg.map(|t| t.info(o)),
        rows,
        memory,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use conduit::client::MemoryUse;

    #[test]
    fn memory_report_round_trips_through_json() {
        let m = Memory {
            rank: 3,
            start_kib: 100,
            end_kib: 120,
            start: RssParts {
                total_kib: 100,
                anon_kib: 60,
                file_kib: 30,
                shmem_kib: 10,
            },
            conduit: MemoryUse {
                receive_buffers: 1,
                request_buffers: 2,
                reply_buffers: 3,
                bounce_buffers: 4,
                get_bounce_buffers: 8,
                address_table: 5,
                names_at_startup: 6,
                segment: 7,
            },
        };
        let json = serde_json::to_vec(&ServerReport {
            memory: m,
            ticks: 42,
        })
        .unwrap();
        // GASNET_OFI_MAX_MEDIUM is at least 512.
        assert!(json.len() <= 512, "fits any Medium: {} bytes", json.len());
        let r: ServerReport = serde_json::from_slice(&json).unwrap();
        let (back, ticks) = (r.memory, r.ticks);
        assert_eq!(ticks, 42);
        assert_eq!(back.start, m.start);
        assert_eq!(back.conduit, m.conduit);
        assert_eq!((back.start_kib, back.end_kib), (100, 120));
    }
}
