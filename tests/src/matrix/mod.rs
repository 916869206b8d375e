//! The provider matrix (`gex-matrix`, run by `tests/provider-matrix.sh`):
//! the conformance programs and a quick benchmark over every provider this
//! machine offers, judged and rendered per libfabric version as
//! `docs/providers/libfabric-X.Y.md` (with a JSON summary beside it), and
//! all versions side by side as `docs/providers.md`.
//!
//! This module holds the parts that do not need the command line: the fixed
//! list of programs ([`PROGRAMS`]), how a provider is named to the conduit
//! ([`fi_provider_value`], [`device_for`]), how one job is run and judged
//! ([`run_job`], [`judge`]), the benchmark's headline figures
//! ([`bench::headlines`]), the per-version document
//! ([`markdown::Matrix::render`]), its summary ([`summary::Summary`]) and
//! the side-by-side overview ([`overview::render`]).

pub mod bench;
#[cfg(test)]
mod fixtures;
pub mod markdown;
mod must_pass;
pub mod overview;
mod programs;
mod refusals;
pub mod summary;
pub mod text;

pub use programs::{program, select_programs, Binary, Program, PROGRAMS};
pub use refusals::documented_refusal;
pub use text::{duration_text, pretty_name, utc_text};

use conduit::select::listing::{ProviderListing, ProviderSummary};
use std::path::Path;
use std::time::{Duration, Instant};

/// Parse a `gex-providers --json` document.
pub fn parse_listing(json: &str) -> Result<ProviderListing, String> {
    serde_json::from_str(json).map_err(|e| format!("cannot read gex-providers --json output: {e}"))
}

/// The core provider of a (possibly layered) provider name: `tcp` for
/// `tcp;ofi_rxm`.
pub fn core_of(name: &str) -> &str {
    name.split(';').next().unwrap_or(name)
}

/// Whether `pattern` (a `--providers` or `--must-pass` entry) names
/// `provider`: its full name or its core's, as libfabric's `FI_PROVIDER`
/// filter matches.
pub fn name_matches(pattern: &str, provider: &str) -> bool {
    pattern == provider || pattern == core_of(provider)
}

/// The `FI_PROVIDER` value that selects `name` among the providers `all`:
/// its core name (`tcp` selects `tcp;ofi_rxm`), unless another listed
/// provider shares that core and `name` is the layered one, which then
/// needs its full name (`net;ofi_rxm` beside `net`).
pub fn fi_provider_value(name: &str, all: &[&str]) -> String {
    let core = core_of(name);
    let shared = all.iter().filter(|n| core_of(n) == core).count() > 1;
    if shared && name != core {
        name.to_string()
    } else {
        core.to_string()
    }
}

/// The device a one-host job uses: `shm` for shm, else the loopback
/// device when the provider has it, else its first device.
pub fn device_for(p: &ProviderSummary) -> String {
    let has = |d: &str| p.devices.iter().any(|x| x == d);
    if core_of(&p.name) == "shm" && has("shm") {
        "shm".into()
    } else if has("lo") {
        "lo".into()
    } else {
        p.devices.first().cloned().unwrap_or_else(|| "lo".into())
    }
}

/// How jobs reach one provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The provider's name as libfabric lists it.
    pub name: String,
    /// The `FI_PROVIDER` value that selects it.
    pub fi_provider: String,
    /// The `GASNET_OFI_DEVICE` value.
    pub device: String,
}

impl Target {
    /// The target for `p` among the providers of `listing`.
    pub fn for_provider(p: &ProviderSummary, listing: &ProviderListing) -> Target {
        let all: Vec<&str> = listing.providers.iter().map(|x| x.name.as_str()).collect();
        Target {
            name: p.name.clone(),
            fi_provider: fi_provider_value(&p.name, &all),
            device: device_for(p),
        }
    }
}

/// Which listed providers `requested` names (empty: all), in listing order.
/// Every entry must name at least one provider.
pub fn select_providers(
    listing: &ProviderListing,
    requested: &[String],
) -> Result<Vec<usize>, String> {
    let names: Vec<&str> = listing.providers.iter().map(|p| p.name.as_str()).collect();
    for r in requested {
        if !names.iter().any(|n| name_matches(r, n)) {
            return Err(format!(
                "--providers: {r:?} names no provider listed here (listed: {})",
                names.join(", ")
            ));
        }
    }
    Ok((0..names.len())
        .filter(|&i| requested.is_empty() || requested.iter().any(|r| name_matches(r, names[i])))
        .collect())
}

/// One finished (or killed) job.
#[derive(Debug, Clone, Default)]
pub struct JobRun {
    /// The launcher's exit code (`None`: ended by a signal).
    pub code: Option<i32>,
    /// The signal that ended the launcher, if one did.
    pub signal: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// Whether the deadline passed and the process group was killed.
    pub timed_out: bool,
    /// The deadline.
    pub deadline: Duration,
    /// Wall time.
    pub secs: f64,
    /// Processes of the program still alive after the job (they were
    /// killed).
    pub survivors: Vec<u32>,
}

/// Where and how long a job runs.
#[derive(Debug, Clone, Copy)]
pub struct JobPlace<'a> {
    /// The launcher (`gasnetrun-ofi`).
    pub launcher: &'a Path,
    /// The job's working directory (files a crashing rank leaves, such as
    /// backtraces, land there rather than in the source tree).
    pub cwd: &'a Path,
    /// The deadline.
    pub deadline: Duration,
}

/// Run `launcher -n ranks program args` for `target` in `place.cwd`: every
/// inherited `GASNET_*` and `FI_*` variable removed, then `FI_PROVIDER`,
/// `GASNET_OFI_DEVICE`, `GASNET_QUIET=1` and `GASNET_EXITTIMEOUT=30` set; in
/// its own process group, killed at the deadline (the ranks die with the
/// launcher); then check that no process of `program` survived (survivors
/// are killed and listed). An error means the launcher could not be
/// started.
pub fn run_job(
    place: JobPlace<'_>,
    program: &Path,
    ranks: usize,
    args: &[&str],
    target: &Target,
) -> Result<JobRun, String> {
    let (launcher, deadline) = (place.launcher, place.deadline);
    let mut cmd = crate::job_command(
        launcher,
        ranks,
        program,
        args,
        &target.fi_provider,
        &target.device,
    );
    cmd.current_dir(place.cwd);
    let t0 = Instant::now();
    let b = crate::run_bounded(&mut cmd, deadline)
        .map_err(|e| format!("cannot start {}: {e}", launcher.display()))?;
    let secs = t0.elapsed().as_secs_f64();
    let survivors = crate::reap_survivors(&program.to_string_lossy(), Duration::from_secs(5));
    use std::os::unix::process::ExitStatusExt;
    Ok(JobRun {
        code: b.output.status.code(),
        signal: b.output.status.signal(),
        stdout: String::from_utf8_lossy(&b.output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&b.output.stderr).into_owned(),
        timed_out: b.timed_out,
        deadline,
        secs,
        survivors,
    })
}

/// A program's verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// It passed.
    Pass,
    /// It failed; the failure's first line.
    Fail(String),
    /// It was not run, and why.
    NotRun(String),
}

impl Verdict {
    /// Whether this is a failure.
    pub fn failed(&self) -> bool {
        matches!(self, Verdict::Fail(_))
    }
}

/// An extra check of a job's standard output: `Some(why)` when it is
/// wrong.
pub type OutputCheck<'a> = &'a dyn Fn(&str) -> Option<String>;

/// The first non-blank line of `text`, trimmed.
pub fn first_line(text: &str) -> Option<&str> {
    text.lines().map(str::trim).find(|l| !l.is_empty())
}

/// Judge a job: it passes when it finished within its deadline with
/// `exit_code`, its standard output contains `want` (unless empty),
/// `extra` (given the standard output) finds nothing wrong, and no process
/// survived it. A failure is described by one line: `timed out after N s;
/// process group killed`, or `exit code X, expected Y` followed by the
/// first line of standard error, or what was missing.
pub fn judge(run: &JobRun, exit_code: i32, want: &str, extra: Option<OutputCheck<'_>>) -> Verdict {
    let err_line = first_line(&run.stderr);
    let with_err = |head: String| match err_line {
        Some(l) => format!("{head}: {l}"),
        None => head,
    };
    let mut why = if run.timed_out {
        Some(with_err(format!(
            "timed out after {} s; process group killed",
            run.deadline.as_secs()
        )))
    } else if run.code != Some(exit_code) {
        let head = match (run.code, run.signal) {
            (Some(c), _) => format!("exit code {c}, expected {exit_code}"),
            (None, Some(s)) => format!("killed by signal {s}, expected exit code {exit_code}"),
            (None, None) => format!("no exit code, expected {exit_code}"),
        };
        Some(with_err(head))
    } else if !want.is_empty() && !run.stdout.contains(want) {
        Some(with_err(format!(
            "exit code {exit_code} but no \"{want}\" in the output{}",
            if err_line.is_none() {
                first_line(&run.stdout)
                    .map(|l| format!(" (first line: {l})"))
                    .unwrap_or_else(|| " (it printed nothing)".into())
            } else {
                String::new()
            }
        )))
    } else {
        extra.and_then(|f| f(&run.stdout))
    };
    if !run.survivors.is_empty() {
        let s = format!(
            "{} process(es) of the program survived the job and were killed: {:?}",
            run.survivors.len(),
            run.survivors
        );
        why = Some(match why {
            Some(w) => format!("{w}; {s}"),
            None => s,
        });
    }
    match why {
        Some(w) => Verdict::Fail(w),
        None => Verdict::Pass,
    }
}

/// For `gex-startup`: the selected provider and device must be the ones
/// asked for (its first line starts `provider=NAME domain=DEVICE `).
pub fn startup_selected(target: &Target, stdout: &str) -> Option<String> {
    let want = format!("provider={} domain={} ", target.name, target.device);
    if stdout.lines().any(|l| l.starts_with(&want)) {
        None
    } else {
        let got = stdout
            .lines()
            .find(|l| l.starts_with("provider="))
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|| "no provider= line".into());
        Some(format!(
            "FI_PROVIDER={} GASNET_OFI_DEVICE={} selected {got}, not {}",
            target.fi_provider,
            target.device,
            want.trim_end()
        ))
    }
}

/// One program's result on one provider.
#[derive(Debug, Clone)]
pub struct ProgramResult {
    /// The program's id.
    pub id: &'static str,
    /// Its verdict.
    pub verdict: Verdict,
    /// Wall time in seconds (0 when not run).
    pub secs: f64,
}

/// Everything the matrix found for one provider.
#[derive(Debug, Clone)]
pub struct ProviderResult {
    /// Its facts from `gex-providers --json`.
    pub facts: ProviderSummary,
    /// How jobs reached it.
    pub target: Target,
    /// One result per program run (or not run).
    pub programs: Vec<ProgramResult>,
    /// The quick benchmark.
    pub bench: bench::BenchOutcome,
}

impl ProviderResult {
    /// The failures' `(program id, first line)`; the benchmark counts as
    /// program `gex-bench`.
    pub fn failures(&self) -> Vec<(&str, &str)> {
        let mut v: Vec<(&str, &str)> = self
            .programs
            .iter()
            .filter_map(|r| match &r.verdict {
                Verdict::Fail(l) => Some((r.id, l.as_str())),
                _ => None,
            })
            .collect();
        if let bench::BenchOutcome::Failed(l) = &self.bench {
            v.push(("gex-bench", l.as_str()));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(name: &str, devices: &[&str]) -> ProviderSummary {
        ProviderSummary {
            name: name.into(),
            core: core_of(name).into(),
            profile: "generic".into(),
            network: "n".into(),
            status: "usable".into(),
            min_libfabric: "1.5".into(),
            libfabric_check: "ok".into(),
            inject_size: 64,
            max_msg_size: 1 << 20,
            mr_mode: "none".into(),
            mr_mode_bits: vec![],
            devices: devices.iter().map(|d| d.to_string()).collect(),
            usable: true,
            unusable_reason: None,
            notes: String::new(),
        }
    }

    #[test]
    fn provider_names_for_fi_provider() {
        let all = [
            "tcp;ofi_rxm",
            "net",
            "net;ofi_rxm",
            "udp;ofi_rxd",
            "shm",
            "sockets",
        ];
        assert_eq!(fi_provider_value("tcp;ofi_rxm", &all), "tcp");
        assert_eq!(fi_provider_value("udp;ofi_rxd", &all), "udp");
        assert_eq!(fi_provider_value("shm", &all), "shm");
        assert_eq!(fi_provider_value("net", &all), "net");
        assert_eq!(fi_provider_value("net;ofi_rxm", &all), "net;ofi_rxm");
        assert!(name_matches("tcp", "tcp;ofi_rxm"));
        assert!(name_matches("net", "net;ofi_rxm"));
        assert!(!name_matches("ofi_rxm", "tcp;ofi_rxm"));
        assert_eq!(device_for(&summary("shm", &["shm"])), "shm");
        assert_eq!(device_for(&summary("tcp;ofi_rxm", &["eth0", "lo"])), "lo");
        assert_eq!(device_for(&summary("verbs;ofi_rxm", &["mlx5_0"])), "mlx5_0");
    }

    #[test]
    fn providers_are_selected_by_name_or_core() {
        let listing = ProviderListing {
            libfabric: "1.17".into(),
            providers: vec![
                summary("tcp;ofi_rxm", &["lo"]),
                summary("net", &["lo"]),
                summary("net;ofi_rxm", &["lo"]),
                summary("shm", &["shm"]),
            ],
        };
        assert_eq!(select_providers(&listing, &[]).unwrap(), vec![0, 1, 2, 3]);
        let r = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            select_providers(&listing, &r(&["shm", "tcp"])).unwrap(),
            vec![0, 3]
        );
        assert_eq!(
            select_providers(&listing, &r(&["net"])).unwrap(),
            vec![1, 2]
        );
        let e = select_providers(&listing, &r(&["shm", "psm9"])).unwrap_err();
        assert_eq!(
            e,
            "--providers: \"psm9\" names no provider listed here (listed: tcp;ofi_rxm, net, net;ofi_rxm, shm)"
        );
    }

    fn run(code: Option<i32>, stdout: &str, stderr: &str) -> JobRun {
        JobRun {
            code,
            stdout: stdout.into(),
            stderr: stderr.into(),
            deadline: Duration::from_secs(180),
            ..JobRun::default()
        }
    }

    #[test]
    fn verdicts_name_the_failure_in_one_line() {
        let ok = "gex-am core: ok: 162 request/reply pairs checked\n";
        assert_eq!(
            judge(&run(Some(0), ok, ""), 0, "gex-am core: ok:", None),
            Verdict::Pass
        );
        assert_eq!(
            judge(
                &run(Some(1), "", "\ngex-am: rank 0: boom\nsecond line\n"),
                0,
                "x",
                None
            ),
            Verdict::Fail("exit code 1, expected 0: gex-am: rank 0: boom".into())
        );
        assert_eq!(
            judge(&run(Some(0), "", ""), 7, "", None),
            Verdict::Fail("exit code 0, expected 7".into())
        );
        assert_eq!(
            judge(&run(Some(0), "hello\n", ""), 0, "gex-am core: ok:", None),
            Verdict::Fail(
                "exit code 0 but no \"gex-am core: ok:\" in the output (first line: hello)".into()
            )
        );
        let mut t = run(None, "", "");
        t.timed_out = true;
        t.signal = Some(9);
        assert_eq!(
            judge(&t, 0, "x", None),
            Verdict::Fail("timed out after 180 s; process group killed".into())
        );
        let mut s = run(Some(0), ok, "");
        s.survivors = vec![42];
        assert_eq!(
            judge(&s, 0, "ok", None),
            Verdict::Fail(
                "1 process(es) of the program survived the job and were killed: [42]".into()
            )
        );
        let extra = |_: &str| Some("wrong provider".to_string());
        assert_eq!(
            judge(&run(Some(0), ok, ""), 0, "ok", Some(&extra)),
            Verdict::Fail("wrong provider".into())
        );
    }

    #[test]
    fn startup_must_select_the_provider_asked_for() {
        let t = Target {
            name: "net".into(),
            fi_provider: "net".into(),
            device: "lo".into(),
        };
        assert_eq!(
            startup_selected(&t, "provider=net domain=lo profile=generic ranks=4\n"),
            None
        );
        assert_eq!(
            startup_selected(&t, "provider=net;ofi_rxm domain=lo profile=generic\n").unwrap(),
            "FI_PROVIDER=net GASNET_OFI_DEVICE=lo selected provider=net;ofi_rxm domain=lo, not provider=net domain=lo"
        );
    }

    #[test]
    fn texts() {
        assert_eq!(first_line("\n  \n second \nthird"), Some("second"));
    }
}
