//! The report: figures with their raw-fabric counterparts, and its three
//! renderings (table, JSON, CSV).

use crate::stats::Summary;
use serde::Serialize;
use std::fmt::Write;

/// One figure: ours, the raw fabric's at the same size, and their ratio.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// `am_short_rtt`, `am_medium_flood`, `am_long_flood`, `am_long_rtt`,
    /// `empty_poll` (one round of progress that finds nothing), `barrier`.
    pub test: String,
    /// Payload bytes (`None` for the barrier and the empty poll).
    pub size: Option<usize>,
    /// `us` (lower is better) or `MB/s` (10^6 B/s, higher is better).
    pub unit: String,
    /// How the conduit sent it: `inject` (fi_inject), `bounce` (copied to
    /// a pool buffer, fi_send), `rma-block` (Long: blocking RMA write of the
    /// payload, then the header), or a `+`-joined mix. For puts: `inject`,
    /// `bounce` or `block` (the NBI put hierarchy; `block` waits for the
    /// transfer before returning) and `direct` (a blocking put above the
    /// inject limit, written from the caller's buffer).
    pub path: Option<String>,
    /// Our figure over the repetitions.
    pub ours: Summary,
    /// The raw fabric's figure over the repetitions (for latency: two
    /// fi_pingpong one-way times, i.e. its round trip).
    pub raw: Option<Summary>,
    /// What `raw` is.
    pub raw_what: Option<String>,
    /// ours.median / raw.median.
    pub ratio: Option<f64>,
    /// Median of the per-repetition ratios (ours / raw of the same
    /// repetition, measured seconds apart): steadier than `ratio` when the
    /// machine drifts between repetitions.
    pub paired_ratio: Option<f64>,
    /// Our figure of each repetition, in order.
    pub ours_reps: Vec<f64>,
    /// The raw fabric's figure of each repetition, in order.
    pub raw_reps: Vec<f64>,
    /// The conduit's tagged figures only: Open MPI's OFI MTL's figure at
    /// the same size, over the repetitions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtl: Option<Summary>,
    /// ours.median / mtl.median.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtl_ratio: Option<f64>,
    /// Median of the per-repetition ratios ours / mtl.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mtl_paired_ratio: Option<f64>,
    /// The MTL's figure of each repetition, in order (NaN where it failed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mtl_reps: Vec<f64>,
}

/// A resident set split as /proc/self/status reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct RssParts {
    /// VmRSS, KiB.
    pub total_kib: u64,
    /// RssAnon: private anonymous pages (heap, buffers, and the segment
    /// where `GASNET_OFI_SEGMENT_HUGEPAGES` put it in huge pages), KiB.
    pub anon_kib: u64,
    /// RssFile: mapped files (the program and its libraries), KiB.
    pub file_kib: u64,
    /// RssShmem: shared memory (the segment as a memory file, shm provider
    /// regions), KiB.
    pub shmem_kib: u64,
}

/// Resident memory of one rank.
#[derive(Debug, Clone, Copy, Serialize, serde::Deserialize)]
pub struct Memory {
    /// The rank.
    pub rank: usize,
    /// VmRSS after start-up (init, handlers, segment), KiB.
    pub start_kib: u64,
    /// VmRSS at the end, KiB.
    pub end_kib: u64,
    /// The resident set after start-up, split.
    pub start: RssParts,
    /// What the conduit allocated (bytes), by purpose.
    pub conduit: conduit::client::MemoryUse,
}

/// How fi_pingpong was run (or why not).
#[derive(Debug, Clone, Serialize)]
pub struct RawInfo {
    /// Whether its figures are in the rows.
    pub ran: bool,
    /// The command pair for the latency size, or why it did not run.
    pub how: String,
}

/// The start-up taken out of one fi_pingpong figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct StartUp {
    /// Message size.
    pub size: usize,
    /// Microseconds in the longer run's timed loop that were not per
    /// message; `None` when the figure is one run's: too few iterations
    /// for two, or a difference that was not positive
    /// (`PingpongResult::start_up_us`).
    pub us: Option<f64>,
    /// The one-way time kept, in µs.
    pub one_way_us: f64,
}

impl StartUp {
    /// The record of figure `r` of size `size`.
    pub fn of(size: usize, r: &crate::pingpong::PingpongResult) -> StartUp {
        StartUp {
            size,
            us: r.start_up_us,
            one_way_us: r.one_way_us,
        }
    }
}

/// How the tagged test's three parties ran (or why not).
#[derive(Debug, Clone, Serialize)]
pub struct TaggedInfo {
    /// The conduit's tagged ping-pong.
    pub conduit: RawInfo,
    /// Open MPI's OFI MTL ping-pong: its command, or why it did not run.
    pub mtl: RawInfo,
    /// The libfabric provider the MTL reported using (`mtl:ofi:prov:`).
    pub mtl_provider: Option<String>,
    /// `mpirun --version`'s first line.
    pub mpi_version: Option<String>,
    /// `--window`.
    pub window: usize,
}

/// Everything one invocation measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The provider the conduit selected.
    pub provider: String,
    /// Whether rank 1 is in rank 0's supernode: AMs and RMA between them
    /// go through shared memory, not the provider.
    pub shared_memory: bool,
    /// Ranks in the job.
    pub ranks: usize,
    /// `--iters`.
    pub iters: usize,
    /// `--reps`.
    pub reps: usize,
    /// The conduit's largest Medium payload.
    pub max_medium: usize,
    /// The conduit's inline Long threshold.
    pub long_inline_threshold: usize,
    /// /proc/loadavg (1, 5, 15 min) at the start.
    pub load_start: [f64; 3],
    /// /proc/loadavg at the end.
    pub load_end: [f64; 3],
    /// CPU time used by processes other than the benchmark's (ranks and
    /// fi_pingpong) during the run, in percent of all CPUs' time: how quiet
    /// the machine was.
    pub other_cpu_pct: f64,
    /// fi_pingpong.
    pub pingpong: RawInfo,
    /// What each fi_pingpong figure had of start-up (connection set-up in
    /// its timed loop), taken out of it (`crate::pingpong`), in run order.
    pub pingpong_start_up: Vec<StartUp>,
    /// `--tests tagged`: the conduit's and Open MPI's runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tagged: Option<TaggedInfo>,
    /// The figures.
    pub rows: Vec<Row>,
    /// Resident memory per rank.
    pub memory: Vec<Memory>,
}

fn opt(v: Option<f64>, prec: usize) -> String {
    v.map_or("-".into(), |x| format!("{x:.prec$}"))
}

impl Report {
    /// The human table.
    pub fn table(&self) -> String {
        let mut s = String::new();
        let l = |a: [f64; 3]| format!("{:.2} {:.2} {:.2}", a[0], a[1], a[2]);
        let _ = writeln!(
            s,
            "gex-bench: provider {}, {} ranks, {} reps, iters {}, max medium {}, long inline threshold {}",
            self.provider, self.ranks, self.reps, self.iters, self.max_medium, self.long_inline_threshold
        );
        let _ = writeln!(
            s,
            "{}",
            if self.shared_memory {
                "path: rank 1 shares rank 0's host and supernode: AMs and RMA go through shared memory, not the provider (GASNET_SUPERNODE_MAXSIZE=1 turns that off; fi_pingpong still measures the provider)"
            } else {
                "path: the provider carries every message (shared memory between the ranks is off or they are on different hosts)"
            }
        );
        let _ = writeln!(
            s,
            "load average at start {}, at end {}; other processes used {:.1}% of the CPUs during the run",
            l(self.load_start),
            l(self.load_end),
            self.other_cpu_pct
        );
        let _ = writeln!(
            s,
            "fi_pingpong: {}",
            if self.pingpong.ran {
                self.pingpong.how.clone()
            } else {
                format!("not run ({})", self.pingpong.how)
            }
        );
        let mut start_ups: Vec<f64> = self.pingpong_start_up.iter().filter_map(|u| u.us).collect();
        if !start_ups.is_empty() {
            start_ups.sort_by(f64::total_cmp);
            let _ = writeln!(
                s,
                "fi_pingpong's start-up taken out of its figures: median {:.0} us (from {:.0} to {:.0} us over {} runs)",
                start_ups[start_ups.len() / 2],
                start_ups[0],
                start_ups[start_ups.len() - 1],
                start_ups.len()
            );
        }
        if let Some(t) = &self.tagged {
            let how = |i: &RawInfo| {
                if i.ran {
                    i.how.clone()
                } else {
                    format!("not run ({})", i.how)
                }
            };
            let _ = writeln!(s, "tagged, conduit: {}", how(&t.conduit));
            let _ = writeln!(
                s,
                "tagged, Open MPI OFI MTL ({}, provider {}): {}",
                t.mpi_version.as_deref().unwrap_or("-"),
                t.mtl_provider.as_deref().unwrap_or("-"),
                how(&t.mtl)
            );
            let _ = writeln!(
                s,
                "tagged figures (tagged_*: the conduit; mtl_*: Open MPI's MTL; fi_pingpong_*): one-way latency (half a round trip; raw = fi_pingpong's one-way) and bandwidth with up to {} messages in flight (raw = fi_pingpong's, one in flight)",
                t.window
            );
        }
        let _ = writeln!(
            s,
            "figures: median of reps [min .. max]; raw = fi_pingpong (round trip = 2 x one-way; MB/s = one message in flight); ratio = ours / raw (medians); paired = median of per-rep ratios"
        );
        let _ = writeln!(
            s,
            "{:<16} {:>8} {:<10} {:<5} {:>10} {:>23} {:>10} {:>7} {:>7}",
            "test", "size", "path", "unit", "ours", "[min .. max]", "raw", "ratio", "paired"
        );
        for r in &self.rows {
            let prec = if r.unit == "us" { 3 } else { 1 };
            let _ = writeln!(
                s,
                "{:<16} {:>8} {:<10} {:<5} {:>10} {:>23} {:>10} {:>7} {:>7}",
                r.test,
                r.size.map_or("-".into(), |z| z.to_string()),
                r.path.as_deref().unwrap_or("-"),
                r.unit,
                format!("{:.prec$}", r.ours.median),
                format!("[{:.prec$} .. {:.prec$}]", r.ours.min, r.ours.max),
                opt(r.raw.map(|x| x.median), prec),
                opt(r.ratio, 3),
                opt(r.paired_ratio, 3),
            );
        }
        if self.rows.iter().any(|r| r.mtl.is_some()) {
            let _ = writeln!(
                s,
                "beside Open MPI's OFI MTL: ratio = ours / MTL (medians); paired = median of per-rep ratios"
            );
            let _ = writeln!(
                s,
                "{:<16} {:>8} {:<5} {:>10} {:>10} {:>7} {:>7}",
                "test", "size", "unit", "ours", "MTL", "ratio", "paired"
            );
            for r in self.rows.iter().filter(|r| r.mtl.is_some()) {
                let prec = if r.unit == "us" { 3 } else { 1 };
                let _ = writeln!(
                    s,
                    "{:<16} {:>8} {:<5} {:>10} {:>10} {:>7} {:>7}",
                    r.test,
                    r.size.map_or("-".into(), |z| z.to_string()),
                    r.unit,
                    format!("{:.prec$}", r.ours.median),
                    opt(r.mtl.map(|x| x.median), prec),
                    opt(r.mtl_ratio, 3),
                    opt(r.mtl_paired_ratio, 3),
                );
            }
        }
        if !self.memory.is_empty() {
            let _ = writeln!(
                s,
                "resident memory (VmRSS, KiB; after start-up split into anonymous/file/shared):"
            );
            for m in &self.memory {
                let _ = writeln!(
                    s,
                    "  rank {}: after start-up {} ({}/{}/{}), at the end {}",
                    m.rank,
                    m.start_kib,
                    m.start.anon_kib,
                    m.start.file_kib,
                    m.start.shmem_kib,
                    m.end_kib
                );
            }
            let c = &self.memory[0].conduit;
            let k = |b: usize| b / 1024;
            let _ = writeln!(
                s,
                "conduit allocations of rank 0 (KiB): receive buffers {}, request buffers {}, reply buffers {}, bounce buffers {}, get bounce buffers {}, address table {:.1}, segment {} (shared); the rest of the resident set is the provider's, the program's and its libraries'",
                k(c.receive_buffers),
                k(c.request_buffers),
                k(c.reply_buffers),
                k(c.bounce_buffers),
                k(c.get_bounce_buffers),
                c.address_table as f64 / 1024.0,
                k(c.segment)
            );
        }
        s
    }

    /// The JSON document.
    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a report serialises") + "\n"
    }

    /// CSV: one line per figure, then one per rank's memory.
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "provider,test,size,path,unit,median,min,max,q1,q3,reps,raw_median,raw_min,raw_max,ratio,paired_ratio,mtl_median,mtl_ratio,mtl_paired_ratio\n",
        );
        let f = |v: Option<f64>| v.map_or(String::new(), |x| format!("{x}"));
        for r in &self.rows {
            let _ = writeln!(
                s,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
                self.provider.replace(',', ";"),
                r.test,
                r.size.map_or(String::new(), |z| z.to_string()),
                r.path.as_deref().unwrap_or(""),
                r.unit,
                r.ours.median,
                r.ours.min,
                r.ours.max,
                r.ours.q1,
                r.ours.q3,
                r.ours.n,
                f(r.raw.map(|x| x.median)),
                f(r.raw.map(|x| x.min)),
                f(r.raw.map(|x| x.max)),
                f(r.ratio),
                f(r.paired_ratio),
                f(r.mtl.map(|x| x.median)),
                f(r.mtl_ratio),
                f(r.mtl_paired_ratio),
            );
        }
        for m in &self.memory {
            for (what, v) in [("rss_start", m.start_kib), ("rss_end", m.end_kib)] {
                let _ = writeln!(
                    s,
                    "{},{what}_rank{},,,KiB,{v},{v},{v},{v},{v},1,,,,,,,,",
                    self.provider.replace(',', ";"),
                    m.rank
                );
            }
        }
        s
    }
}
