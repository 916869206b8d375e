//! `--tests tagged`: one-way latency and windowed bandwidth by size, for
//! three parties in turn within each repetition:
//!
//! 1. the conduit's tagged messaging, both ranks busy
//!    ([`Bench::conduit_tagged_runs`], not built yet);
//! 2. `fi_pingpong` on the same provider, one run per size, while the
//!    other ranks sleep;
//! 3. Open MPI's OFI MTL: `mtl_pingpong` under `mpirun --mca pml cm --mca
//!    mtl ofi` on the same provider, one run for all sizes, while the
//!    other ranks sleep (see [`crate::mtl`]).
//!
//! The method, the same for all three (fi_pingpong aside, which has its
//! own): for each size `s` of `--sizes` (0 left out), a warm-up of a
//! tenth of the count (at least 2, at most 1000), then
//! `Opts::flood_count(s)` blocking round trips: one-way latency =
//! elapsed / round trips / 2 (fi_pingpong's `usec/xfer`); and, after a
//! tenth of the windows as warm-up, `Opts::windowed_count(s)` messages
//! sent `Opts::window_for(s)` at a time, the receiver answering each
//! window's last message with a small acknowledgement before the next
//! window: MB/s = s x messages / elapsed / 10^6. The windowed test runs
//! twice: with a window's receives into disjoint buffers (`bw`: a Rust
//! program with safe borrows has one buffer per receive, and at 1 MiB the
//! 64 MiB of them are cold), then with all into one buffer (`bw1`: the
//! shape of OSU's `osu_bw` and fabtests' `fi_rdm_tagged_bw`, whose
//! destination stays in cache as `fi_pingpong`'s does).
//!
//! Rows: `tagged_lat` / `tagged_bw` / `tagged_bw1` (the conduit, with
//! fi_pingpong's figure as `raw` and the MTL's as `mtl`), `mtl_lat` /
//! `mtl_bw` / `mtl_bw1` (the MTL, with fi_pingpong's as `raw`),
//! `fi_pingpong_lat` / `fi_pingpong_bw` (one message in flight).

use super::{fail, Bench, Fallible};
use crate::cli::Opts;
use crate::mtl::{self, Args, Built, Mtl};
use crate::pingpong::Pingpong;
use crate::report::{RawInfo, StartUp, TaggedInfo};
use crate::samples::{self, Kind, Sample};
use std::time::{Duration, Instant};

/// The tests this step fills, in report order.
pub(super) const TESTS: [&str; 8] = [
    "tagged_lat",
    "mtl_lat",
    "fi_pingpong_lat",
    "tagged_bw",
    "mtl_bw",
    "tagged_bw1",
    "mtl_bw1",
    "fi_pingpong_bw",
];

/// What [`Bench::conduit_tagged_runs`] returns (on every rank) while the
/// conduit has no tagged messaging to measure: the tagged step then goes
/// on with its baselines only. Any other error ends the run.
#[derive(Debug)]
pub struct NotBuilt;

impl std::fmt::Display for NotBuilt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the conduit's tagged benchmark is not built yet")
    }
}

impl std::error::Error for NotBuilt {}

/// The tagged step's state over the repetitions.
pub(super) struct Tagged {
    mtl: Option<Mtl>,
    /// The MTL's command, or why it does not run.
    mtl_how: String,
    mpi_version: Option<String>,
    mtl_provider: Option<String>,
    mtl_errors: Vec<String>,
    /// The MTL cannot run on this provider: not tried again.
    mtl_unusable: bool,
    /// Why the conduit's part does not run (after [`NotBuilt`]).
    conduit_off: Option<String>,
    /// Keeps the built program until the end.
    _built: Option<Built>,
}

/// The sizes measured: `--sizes` without 0 and repeats.
fn sizes(o: &Opts) -> Vec<usize> {
    let mut v: Vec<usize> = Vec::new();
    for &s in o.sizes.iter().filter(|&&s| s > 0) {
        if !v.contains(&s) {
            v.push(s);
        }
    }
    v
}

fn mtl_args(o: &Opts) -> Args {
    Args {
        sizes: sizes(o),
        iters: o.iters,
        flood_bytes: o.flood_bytes,
        window: o.window as usize,
    }
}

/// Check that `samples` hold every size's three figures, measured with the
/// counts and windows of the method.
pub(super) fn check_method(samples: &[Sample], o: &Opts) -> Result<(), String> {
    let sizes = sizes(o);
    samples::check_complete(samples, &sizes)?;
    for &z in &sizes {
        for (kind, count, window) in [
            (Kind::Latency, o.flood_count(z), 1),
            (Kind::Bandwidth, o.windowed_count(z), o.window_for(z)),
            (
                Kind::BandwidthOneBuffer,
                o.windowed_count(z),
                o.window_for(z),
            ),
        ] {
            let s = samples::find(samples, kind, z).ok_or("no figure")?;
            if (s.count, s.window) != (count, window) {
                return Err(format!(
                    "{kind:?} of {z} B: {} messages {} at a time, not {count} {window} at a time",
                    s.count, s.window
                ));
            }
        }
    }
    Ok(())
}

impl Tagged {
    /// Rank 0 finds mpirun and builds the MTL ping-pong (an error when
    /// Open MPI is missing, unless --no-mtl); the other ranks have nothing
    /// to prepare.
    pub fn setup(b: &Bench<'_>, provider: &str) -> Fallible<Tagged> {
        let mut t = Tagged {
            mtl: None,
            mtl_how: "--no-mtl".into(),
            mpi_version: None,
            mtl_provider: None,
            mtl_errors: Vec::new(),
            mtl_unusable: false,
            conduit_off: None,
            _built: None,
        };
        if b.rank0() && !b.o.no_mtl {
            let (mpirun, version) = mtl::find_mpirun(b.o.mpirun.as_deref()).map_err(fail)?;
            let mut built = mtl::build(b.o.mpicc.as_deref()).map_err(fail)?;
            let mut m = Mtl::for_provider(&mpirun, &built.program, provider);
            if m.include == "shm" {
                m.preload = Some(built.build_shim().map_err(fail)?);
            }
            t.mtl_how = m.describe(&mtl_args(b.o));
            t.mpi_version = Some(version);
            t.mtl = Some(m);
            t._built = Some(built);
        }
        Ok(t)
    }

    /// The report's account of the step.
    pub fn info(self, o: &Opts) -> TaggedInfo {
        let mtl_ran = self.mtl.is_some() && self.mtl_errors.is_empty();
        let mut mtl_how = self.mtl_how;
        if !self.mtl_errors.is_empty() {
            let mut e = self.mtl_errors;
            e.dedup();
            mtl_how = format!("{mtl_how}; errors: {}", e.join("; "));
        }
        TaggedInfo {
            conduit: RawInfo {
                ran: self.conduit_off.is_none(),
                how: self
                    .conduit_off
                    .unwrap_or_else(|| "in gex-bench's ranks".into()),
            },
            mtl: RawInfo {
                ran: mtl_ran,
                how: mtl_how,
            },
            mtl_provider: self.mtl_provider,
            mpi_version: self.mpi_version,
            window: o.window as usize,
        }
    }
}

impl Bench<'_> {
    /// One repetition of the tagged step (every rank).
    pub(super) fn tagged(
        &mut self,
        t: &mut Tagged,
        pp: Option<&Pingpong>,
        pp_errors: &mut Vec<String>,
    ) -> Fallible<()> {
        let sizes = sizes(self.o);
        self.c.barrier()?;
        let mut conduit = None;
        if t.conduit_off.is_none() {
            match self.conduit_tagged_runs(&sizes) {
                Ok(s) if self.rank0() => {
                    check_method(&s, self.o)
                        .map_err(|e| fail(format!("the conduit's tagged benchmark: {e}")))?;
                    conduit = Some(s);
                }
                Ok(_) => {}
                Err(e) if e.downcast_ref::<NotBuilt>().is_some() => {
                    t.conduit_off = Some(e.to_string());
                }
                Err(e) => return Err(e),
            }
        }
        self.step_end(false)?;
        if self.rank0() {
            let mut raw = Vec::new();
            for &size in &sizes {
                let r = pp.and_then(|p| {
                    p.run(size, self.o.flood_count(size), Duration::from_secs(300))
                        .map_err(|e| pp_errors.push(format!("fi_pingpong -S {size}: {e}")))
                        .ok()
                });
                if let Some(r) = &r {
                    self.pp_start_up.push(StartUp::of(size, r));
                }
                // Bandwidth as size / the one-way time (the start-up taken
                // out; `pingpong::parse` reads the finer of its columns).
                raw.push(
                    r.filter(|r| r.one_way_us > 0.0)
                        .map(|r| (r.one_way_us, size as f64 / r.one_way_us)),
                );
            }
            let mtl = match t.mtl.as_ref().filter(|_| !t.mtl_unusable) {
                None => None,
                Some(m) => match m
                    .run(&mtl_args(self.o), Duration::from_secs(600))
                    .and_then(|r| Ok(check_method(&r.samples, self.o).map(|()| r)?))
                {
                    Ok(r) => {
                        t.mtl_provider = Some(r.provider);
                        Some(r.samples)
                    }
                    Err(e) => {
                        self.progress(&format!("  Open MPI's MTL: {}", e.msg));
                        // An MTL that cannot run here is not tried again.
                        t.mtl_unusable |= e.unusable;
                        t.mtl_errors.push(e.msg);
                        None
                    }
                },
            };
            self.record_tagged(
                &sizes,
                &raw,
                pp.is_some(),
                conduit.as_deref(),
                mtl.as_deref(),
                t.mtl.is_some(),
            );
        }
        self.step_end(true)
    }

    /// File one repetition's figures (rank 0). `raw[i]`: fi_pingpong's
    /// one-way µs and MB/s at `sizes[i]`, `None` where it failed;
    /// `with_raw`: whether fi_pingpong runs at all.
    fn record_tagged(
        &mut self,
        sizes: &[usize],
        raw: &[Option<(f64, f64)>],
        with_raw: bool,
        conduit: Option<&[Sample]>,
        mtl: Option<&[Sample]>,
        mtl_on: bool,
    ) {
        // Every test's rows together, sizes in order.
        for test in TESTS {
            for &z in sizes {
                let unit = if test.ends_with("_lat") { "us" } else { "MB/s" };
                self.figs.get(test, Some(z), unit);
            }
        }
        for (&z, r) in sizes.iter().zip(raw) {
            let mut line = format!("  {z} B:");
            for kind in Kind::ALL {
                let bw = "fi_pingpong bandwidth, one message in flight (size / one-way time)";
                let (unit, ours, base, pp, what) = match kind {
                    Kind::Latency => (
                        "us",
                        "tagged_lat",
                        "mtl_lat",
                        "fi_pingpong_lat",
                        "fi_pingpong one-way latency (the finer of usec/xfer and size / MB/sec)",
                    ),
                    Kind::Bandwidth => ("MB/s", "tagged_bw", "mtl_bw", "fi_pingpong_bw", bw),
                    Kind::BandwidthOneBuffer => {
                        ("MB/s", "tagged_bw1", "mtl_bw1", "fi_pingpong_bw", bw)
                    }
                };
                let rv = r.map(|r| if kind == Kind::Latency { r.0 } else { r.1 });
                let m = mtl.and_then(|s| samples::find(s, kind, z)).map(|s| s.value);
                let c = conduit
                    .and_then(|s| samples::find(s, kind, z))
                    .map(|s| s.value);
                let mut seen = Vec::new();
                // fi_pingpong's bandwidth is one figure for both shapes.
                if let Some(v) = rv.filter(|_| kind != Kind::BandwidthOneBuffer) {
                    self.figs.get(pp, Some(z), unit).ours.push(v);
                    seen.push(format!("fi_pingpong {v:.3}"));
                }
                for (test, v, who) in [(ours, c, "conduit"), (base, m, "MTL")] {
                    let Some(v) = v else { continue };
                    let f = self.figs.get(test, Some(z), unit);
                    f.ours.push(v);
                    if with_raw {
                        f.raw.push(rv.unwrap_or(f64::NAN));
                        f.raw_what = Some(what);
                    }
                    if test == ours && mtl_on {
                        f.mtl.push(m.unwrap_or(f64::NAN));
                    }
                    seen.push(format!("{who} {v:.3}"));
                }
                if !seen.is_empty() {
                    let shape = if kind == Kind::BandwidthOneBuffer {
                        " into one buffer:"
                    } else {
                        ""
                    };
                    line.push_str(&format!("{shape} {} {unit};", seen.join(", ")));
                }
            }
            self.progress(line.trim_end_matches(';'));
        }
    }

    /// The conduit's tagged ping-pong, one repetition, called on every rank
    /// after a barrier (and followed by a step end that releases ranks 1..
    /// only when rank 0 returns): the method of the module documentation
    /// between ranks 0 and 1 over the world communicator, the same as
    /// `mtl_pingpong.c` (blocking send and receive for latency; for
    /// bandwidth, windows of `isend`s from one buffer against `irecv`s into
    /// disjoint parts of one, then all into its start; both posted with
    /// [`conduit::tagged::TagScope::irecv_raw`], which safe `irecv` also
    /// goes through; each window acknowledged with 4 bytes).
    ///
    /// Rank 0 returns one [`Sample`] per figure; the other ranks an empty
    /// vector. [`NotBuilt`] remains for a client without tagged messaging.
    fn conduit_tagged_runs(&mut self, sizes: &[usize]) -> Fallible<Vec<Sample>> {
        const PING: u32 = 1;
        const BW: u32 = 2;
        const ACK: u32 = 3;
        let w = match self.c.tagged_world() {
            Ok(w) => w,
            Err(conduit::client::Error::Tagged(conduit::tagged::TaggedError::NotEnabled)) => {
                return Err(Box::new(NotBuilt))
            }
            Err(e) => return Err(fail(format!("tagged messaging: {e}"))),
        };
        let me = w.rank();
        let mut out = Vec::new();
        if me > 1 {
            return Ok(out);
        }
        let peer = 1 - me;
        let largest = sizes.iter().copied().max().unwrap_or(1).max(1);
        let rlen = sizes
            .iter()
            .map(|&z| z * self.o.window_for(z))
            .max()
            .unwrap_or(1)
            .max(largest);
        let sbuf = vec![0x5au8; largest];
        let mut rbuf = vec![0u8; rlen];
        let warm = |n: usize| (n / 10).clamp(2, 1000);
        let pingpong = |rbuf: &mut [u8], z: usize, n: usize| -> Fallible<f64> {
            w.barrier()?;
            let t0 = Instant::now();
            for _ in 0..n {
                if me == 0 {
                    w.send(&sbuf[..z], peer, PING)?;
                    w.recv(&mut rbuf[..z], Some(peer), Some(PING))?;
                } else {
                    w.recv(&mut rbuf[..z], Some(peer), Some(PING))?;
                    w.send(&sbuf[..z], peer, PING)?;
                }
            }
            Ok(t0.elapsed().as_secs_f64())
        };
        for &z in sizes {
            let n = self.o.flood_count(z);
            pingpong(&mut rbuf, z, warm(n))?;
            let t = pingpong(&mut rbuf, z, n)?;
            out.push(Sample {
                kind: Kind::Latency,
                size: z,
                value: t * 1e6 / n as f64 / 2.0,
                count: n,
                window: 1,
            });
        }
        let windowed =
            |rbuf: &mut [u8], z: usize, win: usize, windows: usize, one: bool| -> Fallible<f64> {
                w.barrier()?;
                let t0 = Instant::now();
                let mut ack = [0u8; 4];
                for _ in 0..windows {
                    if me == 0 {
                        w.scope(|s| {
                            let mut reqs = Vec::with_capacity(win);
                            for _ in 0..win {
                                reqs.push(s.isend(&w, &sbuf[..z], peer, BW)?);
                            }
                            for r in s.wait_all(reqs) {
                                r?;
                            }
                            Ok::<_, conduit::client::Error>(())
                        })?;
                        w.recv(&mut ack, Some(peer), Some(ACK))?;
                    } else {
                        let at = rbuf[..z * win].as_mut_ptr();
                        #[allow(unsafe_code)]
                        w.scope(|s| {
                            let mut reqs = Vec::with_capacity(win);
                            for j in 0..win {
                                // Receive j's part (all share part 0 if `one`).
                                let part = at.wrapping_add(if one { 0 } else { j * z });
                                // SAFETY: rbuf[..z * win] is borrowed
                                // mutably for the closure, which reads and
                                // writes none of it; `part..part + z` lies
                                // in it, and every receive is over when
                                // the scope returns.
                                reqs.push(unsafe {
                                    s.irecv_raw(&w, part, z, Some(peer), Some(BW))?
                                });
                            }
                            for r in s.wait_all(reqs) {
                                r?;
                            }
                            Ok::<_, conduit::client::Error>(())
                        })?;
                        w.send(&ack, peer, ACK)?;
                    }
                }
                Ok(t0.elapsed().as_secs_f64())
            };
        for (kind, one) in [(Kind::Bandwidth, false), (Kind::BandwidthOneBuffer, true)] {
            for &z in sizes {
                let win = self.o.window_for(z);
                let count = self.o.windowed_count(z);
                let windows = count / win;
                windowed(&mut rbuf, z, win, windows.div_ceil(10), one)?;
                let t = windowed(&mut rbuf, z, win, windows, one)?;
                out.push(Sample {
                    kind,
                    size: z,
                    value: (z * count) as f64 / t / 1e6,
                    count,
                    window: win,
                });
            }
        }
        if me == 0 {
            Ok(out)
        } else {
            Ok(Vec::new())
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_method_is_checked() {
        let o = Opts::parse_from(["gex-bench", "--sizes", "0,8,1m,8", "--flood-bytes", "1m"]);
        assert_eq!(sizes(&o), vec![8, 1 << 20]);
        let ok = "lat 8 1.0 10000\nlat 1048576 90.0 16\nbw 8 5.0 10048 64\nbw 1048576 900.0 16 1\n\
                  bw1 8 6.0 10048 64\nbw1 1048576 990.0 16 1\n";
        assert_eq!(check_method(&samples::parse(ok).unwrap(), &o), Ok(()));
        let e = check_method(
            &samples::parse(&ok.replacen("16 1\n", "16 2\n", 1)).unwrap(),
            &o,
        )
        .unwrap_err();
        assert!(e.contains("Bandwidth of 1048576 B"), "{e}");
        let e = check_method(
            &samples::parse(&ok.replace("990.0 16 1\n", "990.0 32 1\n")).unwrap(),
            &o,
        )
        .unwrap_err();
        assert!(e.contains("BandwidthOneBuffer of 1048576 B"), "{e}");
        let no_bw1: String = ok
            .lines()
            .filter(|l| !l.starts_with("bw1"))
            .map(|l| format!("{l}\n"))
            .collect();
        let e = check_method(&samples::parse(&no_bw1).unwrap(), &o).unwrap_err();
        assert_eq!(e, "no figure for bw1 8, bw1 1048576");
        let e = check_method(&samples::parse("lat 8 1.0 10000\n").unwrap(), &o).unwrap_err();
        assert!(e.starts_with("no figure for"), "{e}");
        assert_eq!(
            NotBuilt.to_string(),
            "the conduit's tagged benchmark is not built yet"
        );
    }
}
