//! Command-line options of `gex-bench`.

use crate::plot::Target;
use clap::{Parser, ValueEnum};

/// A selectable group of measurements (`--tests am,rma,barrier`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TestKind {
    /// AM Short round trip; AM Medium and Long flood throughput and AM
    /// Long round trip by size.
    Am,
    /// Blocking put and get latency and NBI put and get bandwidth by size,
    /// with the put path taken; NBI puts and gets in two shapes: all to
    /// one buffer (the put's target range, the get's range of this rank's
    /// segment) and spread over disjoint buffers (parts of the target's
    /// segment, buffers of this process; the gets also into page-aligned
    /// buffers, `get_nbi_bw_spread_paged`), and `memcpy` in both shapes.
    Rma,
    /// Anonymous barrier latency.
    Barrier,
    /// Tagged messaging: one-way latency and windowed bandwidth by size,
    /// the conduit's beside fi_pingpong's and Open MPI's OFI MTL's (a
    /// small MPI ping-pong built with mpicc, run with mpirun on the same
    /// provider).
    Tagged,
}

/// gex-bench: conduit benchmarks side by side with fi_pingpong.
///
/// Run under the launcher with two ranks, e.g.
/// `FI_PROVIDER=shm GASNET_OFI_DEVICE=shm gasnetrun-ofi -n 2 gex-bench`.
/// Rank 0 measures and prints; rank 1 serves. Every figure is the median
/// of `--reps` repetitions, with its spread; `fi_pingpong` runs on the same
/// provider between the conduit's repetitions (never at the same time) and
/// each figure is printed beside the raw fabric's and the ratio. Each
/// fi_pingpong figure comes from two runs (N and N/10 messages), their
/// difference, so that its connection set-up is not in it, as the
/// conduit's warm-up keeps its own out.
#[derive(Debug, Clone, Parser)]
#[command(name = "gex-bench", version)]
pub struct Opts {
    /// Which measurements (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "am,rma,barrier")]
    pub tests: Vec<TestKind>,
    /// Round trips (and barriers) per repetition; flood messages per size
    /// are at most this many.
    #[arg(long, default_value_t = 10_000)]
    pub iters: usize,
    /// Repetitions of every measurement (the report gives their median,
    /// quartiles and extremes).
    #[arg(long, default_value_t = 9)]
    pub reps: usize,
    /// Payload sizes for AM Medium and Long throughput and for put/get
    /// latency and bandwidth (comma-separated, suffixes k and m allowed;
    /// Mediums above the conduit's maximum are skipped).
    #[arg(long, value_delimiter = ',', value_parser = parse_size,
          default_value = "8,64,512,4k,8k,64k,1m,4m")]
    pub sizes: Vec<usize>,
    /// Bytes per flood: a size's message count is
    /// min(--iters, max(16, this / size)).
    #[arg(long, value_parser = parse_size, default_value = "64m")]
    pub flood_bytes: usize,
    /// Write JSON to FILE (`-` or no value: to standard output instead of
    /// the table).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub json: Option<String>,
    /// Write CSV to FILE (`-` or no value: to standard output instead of
    /// the table).
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "-")]
    pub csv: Option<String>,
    /// Also draw the figures as a chart in FILE: latency and bandwidth by
    /// message size, ours beside fi_pingpong's. The extension picks the
    /// format: `.svg` or `.png` (checked while parsing, so that a wrong
    /// name stops the job before anything is measured).
    #[arg(long, value_name = "FILE", value_parser = Target::new)]
    pub plot: Option<Target>,
    /// Instead of the tests above, measure the multi-threaded client's AM
    /// message rate with these thread counts per rank (comma-separated),
    /// with one shared endpoint and with one endpoint per thread.
    #[arg(long, value_delimiter = ',', value_name = "THREADS")]
    pub par: Vec<usize>,
    /// AM Shorts each sending thread sends per repetition (`--par`).
    #[arg(long, default_value_t = 100_000)]
    pub par_msgs: u64,
    /// Messages in flight in the tagged bandwidth test (`--tests tagged`);
    /// at most --flood-bytes / size of them.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub window: u32,
    /// Do not run Open MPI's OFI MTL ping-pong (`--tests tagged`).
    #[arg(long)]
    pub no_mtl: bool,
    /// The mpicc that builds the MTL ping-pong (default: found on PATH).
    #[arg(long, value_name = "PATH")]
    pub mpicc: Option<std::path::PathBuf>,
    /// Open MPI's mpirun (default: found on PATH).
    #[arg(long, value_name = "PATH")]
    pub mpirun: Option<std::path::PathBuf>,
    /// Do not run fi_pingpong.
    #[arg(long)]
    pub no_pingpong: bool,
    /// The fi_pingpong binary (default: found on PATH).
    #[arg(long, value_name = "PATH")]
    pub pingpong: Option<std::path::PathBuf>,
    /// Before starting, wait up to this many seconds for the machine to be
    /// quiet (other processes below 10% of the CPUs over one second).
    #[arg(long, value_name = "SECONDS", default_value_t = 0)]
    pub wait_quiet: u64,
    /// No progress lines on standard error.
    #[arg(long, short)]
    pub quiet: bool,
}

/// `4096`, `4k`, `4K`, `1m`, `1M`.
pub fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let (num, mul) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1usize << 10),
        Some('m' | 'M') => (&s[..s.len() - 1], 1 << 20),
        Some('g' | 'G') => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("{s:?} is not a size (e.g. 4096, 64k, 1m)"))
}

impl Opts {
    /// Bytes the NBI gets land in (disjoint parts, one per get in
    /// flight), and the spread puts write in the target's segment:
    /// `--flood-bytes`, at least 16 of the largest size.
    pub fn rma_span(&self, largest: usize) -> usize {
        self.flood_bytes.max(largest * 16)
    }

    /// Messages in a flood of `size`-byte payloads.
    pub fn flood_count(&self, size: usize) -> usize {
        (self.flood_bytes / size.max(1))
            .max(16)
            .min(self.iters.max(1))
    }

    /// Round trips of the `fi_pingpong` run beside the figures of `size`:
    /// as many messages as the figure of that size with the most, the AM
    /// Short round trip's `--iters` where it is measured (8 bytes, with
    /// `--tests am`: `am_rtt`), else [`flood_count`](Self::flood_count).
    /// A small `--flood-bytes` shortens the floods, not the raw figure
    /// the round trip is compared with.
    pub fn pingpong_count(&self, size: usize, am_rtt: bool) -> usize {
        // A flood never has more than --iters messages.
        if am_rtt {
            self.iters.max(1)
        } else {
            self.flood_count(size)
        }
    }

    /// Messages in flight in the tagged bandwidth test of `size`-byte
    /// payloads: min(--window, max(1, --flood-bytes / size)).
    pub fn window_for(&self, size: usize) -> usize {
        (self.flood_bytes / size.max(1))
            .max(1)
            .min(self.window as usize)
    }

    /// Messages of the tagged bandwidth test of `size`: its flood count
    /// rounded up to whole windows.
    pub fn windowed_count(&self, size: usize) -> usize {
        let w = self.window_for(size);
        self.flood_count(size).div_ceil(w) * w
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("4k"), Ok(4096));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("8"), Ok(8));
        assert!(parse_size("x").is_err());
        let o = Opts::parse_from(["gex-bench", "--tests", "am", "--sizes", "8,1k", "--json"]);
        assert_eq!(o.tests, vec![TestKind::Am]);
        assert_eq!(o.sizes, vec![8, 1024]);
        assert_eq!(o.json.as_deref(), Some("-"));
        assert_eq!(o.flood_count(8), 10_000);
        assert_eq!(o.flood_count(4 << 20), 16);
        assert_eq!(o.pingpong_count(8, true), 10_000);
        assert_eq!(o.plot, None);
        // A short flood leaves the round trip's raw figure its --iters.
        let o = Opts::parse_from(["gex-bench", "--iters", "50000", "--flood-bytes", "64"]);
        assert_eq!(o.flood_count(8), 16);
        assert_eq!(o.pingpong_count(8, true), 50_000);
        assert_eq!(o.pingpong_count(8, false), 16);
        assert_eq!(o.pingpong_count(1 << 20, false), 16);
        let o = Opts::parse_from(["gex-bench", "--tests", "tagged", "--flood-bytes", "1m"]);
        assert_eq!(o.tests, vec![TestKind::Tagged]);
        assert_eq!((o.window_for(8), o.window_for(64 << 10)), (64, 16));
        assert_eq!((o.window_for(1 << 20), o.window_for(4 << 20)), (1, 1));
        assert_eq!(o.windowed_count(8), 10_048);
        assert_eq!(o.windowed_count(1 << 20), 16);
        assert!(Opts::try_parse_from(["gex-bench", "--window", "0"]).is_err());
    }

    #[test]
    fn plot_by_extension() {
        let o = Opts::try_parse_from(["gex-bench", "--plot", "/tmp/b.png"]).unwrap();
        let t = o.plot.unwrap();
        assert_eq!(t.format, crate::plot::Format::Png);
        assert_eq!(t.path, std::path::Path::new("/tmp/b.png"));
        for bad in ["b.jpg", "a: b.gif", "plot"] {
            let e = Opts::try_parse_from(["gex-bench", "--plot", bad])
                .unwrap_err()
                .to_string();
            for want in ["--plot", bad, ".svg or .png"] {
                assert!(e.contains(want), "{want:?} not in {e}");
            }
        }
    }
}
