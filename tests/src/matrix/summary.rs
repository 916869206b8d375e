//! A run's summary, `docs/providers/libfabric-X.Y.json`: what the overview
//! (`docs/providers.md`) shows of one libfabric version's run, as data.
//! [`publish`] writes a run's document and summary and rewrites the
//! overview from every summary present.

use super::bench::BenchOutcome;
use super::markdown::Matrix;
use super::text::duration_text;
use super::{ProgramResult, Verdict};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The layout version of the summary (its `schema` field).
pub const SCHEMA: u32 = 1;

/// One run of the matrix against one libfabric version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    /// The layout version ([`SCHEMA`]).
    pub schema: u32,
    /// The libfabric version the run was against (`major.minor`).
    pub libfabric: String,
    /// When it started (`YYYY-MM-DD HH:MM UTC`).
    pub date: String,
    /// The command line that produced it.
    pub command: String,
    /// How long the whole run took, in seconds.
    pub took_secs: f64,
    /// The host OS (`PRETTY_NAME`).
    pub os: String,
    /// CPUs available.
    pub cpus: usize,
    /// The per-job deadline in seconds.
    pub deadline_secs: u64,
    /// `--must-pass` entries.
    pub must_pass: Vec<String>,
    /// The run's full document, beside this file (`libfabric-X.Y.md`).
    pub document: String,
    /// Every provider this libfabric lists here, run or not.
    pub offered: Vec<String>,
    /// The ids of the programs run, in order.
    pub programs: Vec<String>,
    /// The providers run (or found unusable), in listing order.
    pub providers: Vec<ProviderRow>,
}

/// One provider of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProviderRow {
    /// Its name as libfabric lists it (`tcp;ofi_rxm`).
    pub name: String,
    /// The conduit's profile for it (`generic` when it has none).
    pub profile: String,
    /// The profile's status (`usable`, `not recommended`, ...).
    pub profile_status: String,
    /// Whether the conduit can use it.
    pub usable: bool,
    /// Why not, when it cannot.
    pub unusable_reason: Option<String>,
    /// The `FI_PROVIDER` value the jobs set.
    pub fi_provider: String,
    /// The `GASNET_OFI_DEVICE` value the jobs set.
    pub device: String,
    /// Whether its failures fail the run.
    pub must_pass: bool,
    /// One entry per program, in the run's order.
    pub programs: Vec<ProgramRow>,
    /// The quick benchmark.
    pub bench: BenchRow,
}

/// How a program (or the benchmark) ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// It passed (the benchmark: it gave its figures).
    Pass,
    /// It failed.
    Fail,
    /// It was not run.
    NotRun,
}

/// One program's verdict on one provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramRow {
    /// The program's id.
    pub id: String,
    /// How it ended.
    pub result: Outcome,
    /// The verdict as the run's conformance table shows it (without the
    /// Markdown): `pass (0.5 s)`, `FAIL (2.1 s): first line`, `not run:
    /// why`.
    pub verdict: String,
    /// The failure's first line, or why it was not run.
    pub detail: Option<String>,
    /// Wall time in seconds (0 when not run).
    pub secs: f64,
}

/// The quick benchmark on one provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    /// How it ended.
    pub result: Outcome,
    /// The failure's first line, or why it was not run.
    pub detail: Option<String>,
    /// Whether fi_pingpong gave figures.
    pub fi_pingpong_ran: bool,
    /// How fi_pingpong ran (its command), or why it did not.
    pub fi_pingpong_how: String,
    /// CPU time other processes used during the run, in percent of all
    /// CPUs: how quiet the machine was.
    pub other_cpu_pct: Option<f64>,
    /// The headline figures found in the report.
    pub figures: Vec<FigureRow>,
}

/// One headline figure.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FigureRow {
    /// Its label (`AM Short round trip, 8 B`).
    pub label: String,
    /// `us` or `MB/s`.
    pub unit: String,
    /// Our median.
    pub ours: f64,
    /// fi_pingpong's median, when it ran.
    pub fi_pingpong: Option<f64>,
    /// ours / fi_pingpong.
    pub ratio: Option<f64>,
}

/// A program's verdict as text (the run's conformance table without the
/// Markdown and without cutting the failure's line).
pub fn verdict_text(r: &ProgramResult) -> String {
    match &r.verdict {
        Verdict::Pass => format!("pass ({})", duration_text(r.secs)),
        Verdict::Fail(l) => format!("FAIL ({}): {l}", duration_text(r.secs)),
        Verdict::NotRun(why) => format!("not run: {why}"),
    }
}

/// The base name of a version's files: `libfabric-1.17` (anything but
/// digits and dots in the version becomes `_`).
pub fn file_stem(libfabric: &str) -> String {
    let v: String = libfabric
        .chars()
        .map(|c| {
            if c.is_ascii_digit() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("libfabric-{v}")
}

/// A key that sorts versions numerically (`1.9` before `1.17`).
pub fn version_key(v: &str) -> Vec<(u64, String)> {
    v.split('.')
        .map(|p| (p.parse().unwrap_or(u64::MAX), p.to_string()))
        .collect()
}

impl Summary {
    /// The summary of run `m`.
    pub fn of(m: &Matrix) -> Summary {
        let providers = m
            .providers
            .iter()
            .map(|p| ProviderRow {
                name: p.facts.name.clone(),
                profile: p.facts.profile.clone(),
                profile_status: p.facts.status.clone(),
                usable: p.facts.unusable_reason.is_none(),
                unusable_reason: p.facts.unusable_reason.clone(),
                fi_provider: p.target.fi_provider.clone(),
                device: p.target.device.clone(),
                must_pass: m.must_pass(&p.facts.name),
                programs: p
                    .programs
                    .iter()
                    .map(|r| {
                        let (result, detail) = match &r.verdict {
                            Verdict::Pass => (Outcome::Pass, None),
                            Verdict::Fail(l) => (Outcome::Fail, Some(l.clone())),
                            Verdict::NotRun(w) => (Outcome::NotRun, Some(w.clone())),
                        };
                        ProgramRow {
                            id: r.id.to_string(),
                            result,
                            verdict: verdict_text(r),
                            detail,
                            secs: r.secs,
                        }
                    })
                    .collect(),
                bench: bench_row(&p.bench),
            })
            .collect();
        Summary {
            schema: SCHEMA,
            libfabric: m.libfabric.clone(),
            date: m.date.clone(),
            command: m.command.clone(),
            took_secs: m.took_secs,
            os: m.os.clone(),
            cpus: m.cpus,
            deadline_secs: m.deadline_secs,
            must_pass: m.must_pass.clone(),
            document: format!("{}.md", file_stem(&m.libfabric)),
            offered: m.offered.clone(),
            programs: m.programs.iter().map(|p| p.id.to_string()).collect(),
            providers,
        }
    }

    /// The summary as pretty-printed JSON, ending in a newline.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).expect("a summary serialises");
        s.push('\n');
        s
    }

    /// Read a summary from JSON; it must be of layout [`SCHEMA`].
    pub fn from_json(json: &str) -> Result<Summary, String> {
        let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
        match v.get("schema").and_then(serde_json::Value::as_u64) {
            Some(n) if n == u64::from(SCHEMA) => {}
            other => {
                return Err(format!(
                    "schema {} where {SCHEMA} is expected (regenerate it)",
                    other.map_or("missing".to_string(), |n| n.to_string())
                ))
            }
        }
        serde_json::from_value(v).map_err(|e| e.to_string())
    }
}

/// The summary of a benchmark outcome.
fn bench_row(b: &BenchOutcome) -> BenchRow {
    let mut row = BenchRow {
        result: Outcome::NotRun,
        detail: None,
        fi_pingpong_ran: false,
        fi_pingpong_how: String::new(),
        other_cpu_pct: None,
        figures: Vec::new(),
    };
    match b {
        BenchOutcome::NotRun(why) => row.detail = Some(why.clone()),
        BenchOutcome::Failed(l) => {
            row.result = Outcome::Fail;
            row.detail = Some(l.clone());
        }
        BenchOutcome::Done {
            figures,
            pingpong_ran,
            pingpong_how,
            other_cpu_pct,
        } => {
            row.result = Outcome::Pass;
            row.fi_pingpong_ran = *pingpong_ran;
            row.fi_pingpong_how = pingpong_how.clone();
            row.other_cpu_pct = *other_cpu_pct;
            row.figures = figures
                .iter()
                .map(|f| FigureRow {
                    label: f.label.to_string(),
                    unit: f.unit.clone(),
                    ours: f.ours,
                    fi_pingpong: f.raw,
                    ratio: f.ratio,
                })
                .collect();
        }
    }
    row
}

/// The per-version summaries in `dir` (`libfabric-*.json`), sorted by
/// version. A file that does not read, or two of one version, is an error.
pub fn load_dir(dir: &Path) -> Result<Vec<Summary>, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libfabric-") && n.ends_with(".json"))
        })
        .collect();
    paths.sort();
    let mut out: Vec<Summary> = Vec::new();
    for p in paths {
        let text =
            std::fs::read_to_string(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
        let s = Summary::from_json(&text).map_err(|e| format!("{}: {e}", p.display()))?;
        if out.iter().any(|o| o.libfabric == s.libfabric) {
            return Err(format!(
                "{}: a second summary of libfabric {}",
                p.display(),
                s.libfabric
            ));
        }
        out.push(s);
    }
    out.sort_by_key(|s| version_key(&s.libfabric));
    Ok(out)
}

/// The files [`publish`] wrote.
#[derive(Debug, Clone)]
pub struct Published {
    /// The run's document, `docs/providers/libfabric-X.Y.md`.
    pub document: PathBuf,
    /// The run's summary, `docs/providers/libfabric-X.Y.json`.
    pub summary: PathBuf,
    /// The overview, `docs/providers.md`.
    pub overview: PathBuf,
    /// The libfabric versions the overview shows, in order.
    pub versions: Vec<String>,
}

/// Write run `m`'s document and summary into `docs/providers/`, then
/// rewrite the overview `docs/providers.md` from every summary there.
pub fn publish(docs: &Path, m: &Matrix) -> Result<Published, String> {
    let dir = docs.join("providers");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let stem = file_stem(&m.libfabric);
    let document = dir.join(format!("{stem}.md"));
    let summary = dir.join(format!("{stem}.json"));
    let write = |path: &Path, text: &str| {
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write(&document, &m.render_in_version_dir())?;
    write(&summary, &Summary::of(m).to_json())?;
    let all = load_dir(&dir)?;
    let overview = docs.join("providers.md");
    write(&overview, &super::overview::render(&all))?;
    Ok(Published {
        document,
        summary,
        overview,
        versions: all.into_iter().map(|s| s.libfabric).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::super::fixtures::{bench_done, provider, run, unusable};
    use super::*;

    fn sample() -> Matrix {
        run(
            "1.17",
            vec![
                provider(
                    "shm",
                    &[
                        ("am-core", Verdict::Pass),
                        ("am-barrier", Verdict::Fail("exit code 1: boom".into())),
                    ],
                    bench_done(2.5, Some(2.0), Some(40.0)),
                ),
                unusable("net", "corrupts", &["am-core", "am-barrier"]),
            ],
            &["shm", "net", "sockets"],
        )
    }

    #[test]
    fn the_summary_round_trips_through_json() {
        let s = Summary::of(&sample());
        let json = s.to_json();
        assert_eq!(Summary::from_json(&json).unwrap(), s);
        assert_eq!(s.document, "libfabric-1.17.md");
        assert_eq!(s.programs, ["am-core", "am-barrier"]);
        let shm = &s.providers[0];
        assert!(shm.usable && shm.must_pass);
        assert_eq!(shm.programs[0].verdict, "pass (1.5 s)");
        assert_eq!(shm.programs[1].result, Outcome::Fail);
        assert_eq!(shm.programs[1].verdict, "FAIL (1.5 s): exit code 1: boom");
        assert_eq!(shm.bench.figures[0].fi_pingpong, Some(2.0));
        let net = &s.providers[1];
        assert_eq!(net.unusable_reason.as_deref(), Some("corrupts"));
        assert_eq!(net.bench.result, Outcome::NotRun);
        for field in [
            "\"schema\": 1",
            "\"result\": \"not-run\"",
            "\"profile_status\": \"unsupported\"",
            "\"other_cpu_pct\": 40.0",
        ] {
            assert!(json.contains(field), "missing {field} in {json}");
        }
        let old = json.replace("\"schema\": 1", "\"schema\": 0");
        assert_eq!(
            Summary::from_json(&old).unwrap_err(),
            "schema 0 where 1 is expected (regenerate it)"
        );
    }

    #[test]
    fn versions_sort_numerically_and_name_the_files() {
        let mut v = vec!["2.1", "1.17", "1.9", "10.0"];
        v.sort_by_key(|x| version_key(x));
        assert_eq!(v, ["1.9", "1.17", "2.1", "10.0"]);
        assert_eq!(file_stem("2.1"), "libfabric-2.1");
        assert_eq!(file_stem("1/2"), "libfabric-1_2");
    }

    #[test]
    fn publish_writes_both_files_and_the_overview() {
        let docs = std::env::temp_dir().join(format!("gex-matrix-docs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&docs);
        let a = sample();
        let mut b = sample();
        b.libfabric = "2.1".into();
        publish(&docs, &b).unwrap();
        let p = publish(&docs, &a).unwrap();
        assert_eq!(p.versions, ["1.17", "2.1"]);
        let doc = std::fs::read_to_string(&p.document).unwrap();
        assert!(doc.contains("| libfabric | 1.17 |"), "{doc}");
        let json = std::fs::read_to_string(docs.join("providers/libfabric-2.1.json")).unwrap();
        assert_eq!(Summary::from_json(&json).unwrap().libfabric, "2.1");
        let md = std::fs::read_to_string(&p.overview).unwrap();
        assert!(md.contains("[libfabric-2.1.md](providers/libfabric-2.1.md)"));
        std::fs::remove_dir_all(&docs).unwrap();
    }
}
