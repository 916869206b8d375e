//! The matrix's quick benchmark: `gex-bench` with few iterations, and the
//! three headline figures taken from its JSON report.

use serde_json::Value;

/// `gex-bench` arguments of the quick run (two ranks), besides
/// [`quick_iters`]: AM and RMA measurements at 8 B and 1 MiB, 3
/// repetitions, after waiting up to 20 s for the machine to be quiet, JSON
/// on standard output.
pub const QUICK_ARGS: &[&str] = &[
    "--json",
    "-",
    "-q",
    "--tests",
    "am,rma",
    "--reps",
    "3",
    "--sizes",
    "8,1m",
    "--flood-bytes",
    "64m",
    "--wait-quiet",
    "20",
];

/// Round trips per figure of the quick run (`--iters`): 5,000, so that
/// the start-up gex-bench takes out of fi_pingpong's figure (about 20 ms
/// over tcp;ofi_rxm, from two runs' difference) is measured over enough
/// messages; 500 on sockets, whose fi_pingpong takes about 20 ms per round
/// trip here.
pub fn quick_iters(provider: &str) -> usize {
    if provider.starts_with("sockets") {
        500
    } else {
        5_000
    }
}

/// The whole argument list of the quick run on `provider`.
pub fn quick_args(provider: &str) -> Vec<String> {
    let mut a: Vec<String> = QUICK_ARGS.iter().map(|s| s.to_string()).collect();
    a.extend(["--iters".to_string(), quick_iters(provider).to_string()]);
    a
}

/// Ranks of the quick run.
pub const RANKS: usize = 2;

/// A headline figure: `(test, size in bytes, label)`.
pub const HEADLINES: &[(&str, usize, &str)] = &[
    ("am_short_rtt", 8, "AM Short round trip, 8 B"),
    ("put_latency", 8, "blocking put latency, 8 B"),
    ("put_nbi_bw", 1 << 20, "NBI put bandwidth, 1 MiB"),
];

/// One headline figure of one provider.
#[derive(Debug, Clone, PartialEq)]
pub struct Headline {
    /// Its label (from [`HEADLINES`]).
    pub label: &'static str,
    /// `us` or `MB/s`.
    pub unit: String,
    /// Our median.
    pub ours: f64,
    /// fi_pingpong's median, when it ran.
    pub raw: Option<f64>,
    /// ours / raw.
    pub ratio: Option<f64>,
}

/// What the quick benchmark gave for one provider.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchOutcome {
    /// Not run, and why (`--no-bench`, provider not usable, ...).
    NotRun(String),
    /// It failed; the failure's first line.
    Failed(String),
    /// The headline figures (a figure missing from the report is absent),
    /// and how fi_pingpong ran (or why not).
    Done {
        /// The figures.
        figures: Vec<Headline>,
        /// The report's `pingpong` entry: `ran`.
        pingpong_ran: bool,
        /// The report's `pingpong` entry: `how` (a command or why not).
        pingpong_how: String,
        /// CPU time other processes used during the run, in percent of all
        /// CPUs' time (the report's `other_cpu_pct`): how quiet the machine
        /// was.
        other_cpu_pct: Option<f64>,
    },
}

/// Read the JSON report in `stdout` (the first JSON object in it) and take
/// the headline figures; the report must be of `provider`.
pub fn headlines(stdout: &str, provider: &str) -> Result<BenchOutcome, String> {
    let start = stdout
        .find('{')
        .ok_or_else(|| "no JSON report in gex-bench's output".to_string())?;
    let mut it = serde_json::Deserializer::from_str(&stdout[start..]).into_iter::<Value>();
    let report = match it.next() {
        Some(Ok(v)) => v,
        Some(Err(e)) => return Err(format!("gex-bench's JSON report does not parse: {e}")),
        None => return Err("no JSON report in gex-bench's output".into()),
    };
    let got = report["provider"].as_str().unwrap_or("?");
    if got != provider {
        return Err(format!("gex-bench ran on provider {got}, not {provider}"));
    }
    let rows = report["rows"]
        .as_array()
        .ok_or_else(|| "gex-bench's JSON report has no rows".to_string())?;
    let mut figures = Vec::new();
    for (test, size, label) in HEADLINES {
        let Some(row) = rows
            .iter()
            .find(|r| r["test"].as_str() == Some(test) && r["size"].as_u64() == Some(*size as u64))
        else {
            continue;
        };
        let Some(ours) = row["ours"]["median"].as_f64() else {
            continue;
        };
        figures.push(Headline {
            label,
            unit: row["unit"].as_str().unwrap_or("").to_string(),
            ours,
            raw: row["raw"]["median"].as_f64(),
            ratio: row["ratio"].as_f64(),
        });
    }
    Ok(BenchOutcome::Done {
        figures,
        pingpong_ran: report["pingpong"]["ran"].as_bool().unwrap_or(false),
        pingpong_how: report["pingpong"]["how"].as_str().unwrap_or("").to_string(),
        other_cpu_pct: report["other_cpu_pct"].as_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"{
      "provider": "shm", "ranks": 2, "other_cpu_pct": 12.5,
      "pingpong": {"ran": true, "how": "fi_pingpong -p shm"},
      "rows": [
        {"test": "am_short_rtt", "size": 8, "unit": "us",
         "ours": {"median": 2.5}, "raw": {"median": 2.0}, "ratio": 1.25},
        {"test": "put_latency", "size": 8, "unit": "us",
         "ours": {"median": 1.5}, "raw": null, "ratio": null},
        {"test": "put_nbi_bw", "size": 8, "unit": "MB/s",
         "ours": {"median": 9.0}, "raw": {"median": 3.0}, "ratio": 3.0},
        {"test": "barrier", "size": null, "unit": "us",
         "ours": {"median": 4.0}, "raw": null, "ratio": null}
      ]}"#;

    #[test]
    fn headline_figures_are_taken_from_the_report() {
        let out = format!("some line\n{REPORT}\n");
        let BenchOutcome::Done {
            figures,
            pingpong_ran,
            other_cpu_pct,
            ..
        } = headlines(&out, "shm").unwrap()
        else {
            panic!("not done");
        };
        assert!(pingpong_ran);
        assert_eq!(other_cpu_pct, Some(12.5));
        assert_eq!(
            figures,
            vec![
                Headline {
                    label: "AM Short round trip, 8 B",
                    unit: "us".into(),
                    ours: 2.5,
                    raw: Some(2.0),
                    ratio: Some(1.25)
                },
                Headline {
                    label: "blocking put latency, 8 B",
                    unit: "us".into(),
                    ours: 1.5,
                    raw: None,
                    ratio: None
                },
            ]
        );
        assert_eq!(
            headlines(REPORT, "tcp;ofi_rxm").unwrap_err(),
            "gex-bench ran on provider shm, not tcp;ofi_rxm"
        );
        assert!(headlines("nothing", "shm").is_err());
        assert!(headlines("{ broken", "shm").is_err());
    }
}
