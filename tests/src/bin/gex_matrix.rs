//! gex-matrix: the provider matrix of this machine.
//!
//! Lists the libfabric providers (`gex-providers --json`), runs the
//! conformance programs over each usable one under `gasnetrun-ofi`, takes
//! three quick `gex-bench` figures per provider, and writes the run's
//! document and summary for the libfabric it runs against
//! (`docs/providers/libfabric-X.Y.md` and `.json`), then the overview of
//! every version's run (`docs/providers.md`); or, with `--out`, only the
//! document. `tests/provider-matrix.sh` builds the programs and runs it;
//! see `tests::matrix` for the parts.

#![forbid(unsafe_code)]

use clap::Parser;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant, SystemTime};
use tests::matrix::bench::{self, BenchOutcome};
use tests::matrix::markdown::Matrix;
use tests::matrix::summary;
use tests::matrix::text::shell_join;
use tests::matrix::{
    self, judge, run_job, select_programs, startup_selected, Binary, JobPlace, OutputCheck,
    Program, ProgramResult, ProviderResult, Target, Verdict,
};

/// gex-matrix: run the conformance programs and a quick benchmark over
/// every libfabric provider of this machine and write the provider matrix
/// for the libfabric it runs against: docs/providers/libfabric-X.Y.md (the
/// run in full) and docs/providers/libfabric-X.Y.json (its summary), then
/// docs/providers.md, every version's run side by side from the summaries
/// there.
///
/// It finds gasnetrun-ofi, gex-providers, the conformance programs and
/// gex-bench next to itself (and the examples in examples/ there); run it
/// through tests/provider-matrix.sh, which builds them first. Progress goes
/// to standard error.
///
/// Exit status: 0 when every program passed on the must-pass providers; 1
/// when one failed there (the Markdown is written all the same); 2 for a
/// usage or set-up error.
#[derive(Debug, Parser)]
#[command(name = "gex-matrix")]
struct Opts {
    /// Providers to run, comma-separated: names as listed (`tcp;ofi_rxm`)
    /// or core names (`tcp`; `net` also matches `net;ofi_rxm`). Default:
    /// every provider listed.
    #[arg(long, value_delimiter = ',', value_name = "NAMES")]
    providers: Vec<String>,
    /// Programs to run, comma-separated ids: startup-ring, am-core,
    /// am-barrier, am-flood, am-exit, am-bad, rma-all, rma-bad,
    /// tagged-layout, tagged-all, atomics-all, atomics-fadd, coll-bcast,
    /// coll-reduce, coll-teams, vis-all, example-am-ring, example-gups,
    /// example-stencil, example-long-gather. Default: all.
    #[arg(long, value_delimiter = ',', value_name = "IDS")]
    programs: Vec<String>,
    /// Deadline of each job in seconds; at the deadline its process group
    /// is killed and it fails.
    #[arg(long, value_name = "SECONDS", default_value_t = 180,
          value_parser = clap::value_parser!(u64).range(1..=86_400))]
    deadline: u64,
    /// Skip the quick benchmark (gex-bench).
    #[arg(long)]
    no_bench: bool,
    /// Providers whose failures make the exit status 1, comma-separated
    /// names as for --providers, or `none`. A must-pass provider that is
    /// not offered here counts as a failure unless --providers leaves it
    /// out.
    #[arg(
        long,
        value_delimiter = ',',
        value_name = "NAMES",
        default_value = "shm,tcp"
    )]
    must_pass: Vec<String>,
    /// Write only the run's document, there (`-`: standard output), and
    /// leave docs/providers/ and docs/providers.md alone. Default: the
    /// docs/ of the workspace gex-matrix was built from, as above.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// The docs/ directory to write into instead of the workspace's (for
    /// tests).
    #[arg(long, hide = true, value_name = "DIR")]
    docs_dir: Option<PathBuf>,
    /// The command line to show in the Markdown (the script passes its
    /// own).
    #[arg(long, hide = true, value_name = "TEXT")]
    command_line: Option<String>,
}

/// A set-up or usage error: the message, for exit status 2.
type SetupError = String;

fn main() {
    let opts = Opts::parse();
    match run(opts) {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            gex_env::eprintln_whole!("gex-matrix: {e}");
            std::process::exit(2);
        }
    }
}

/// The directory holding gex-matrix, and a check that every program it
/// needs is there.
fn find_binaries(programs: &[&Program], bench: bool) -> Result<PathBuf, SetupError> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find my own path: {e}"))?;
    let dir = exe
        .parent()
        .ok_or_else(|| format!("{} has no directory", exe.display()))?
        .to_path_buf();
    let mut needed = vec![Binary::Bin("gasnetrun-ofi"), Binary::Bin("gex-providers")];
    for p in programs {
        if !needed.contains(&p.binary) {
            needed.push(p.binary);
        }
    }
    if bench {
        needed.push(Binary::Bin("gex-bench"));
    }
    let missing: Vec<String> = needed
        .iter()
        .map(|b| b.path_in(&dir))
        .filter(|p| !p.is_file())
        .map(|p| p.display().to_string())
        .collect();
    if !missing.is_empty() {
        let release = if dir.file_name().is_some_and(|n| n == "release") {
            "--release "
        } else {
            ""
        };
        return Err(format!(
            "not found next to gex-matrix: {}; build them with `cargo build {release}-p tests -p conduit -p gasnetrun-ofi -p bench -p gex-examples --bins --examples` (tests/provider-matrix.sh does)",
            missing.join(", ")
        ));
    }
    Ok(dir)
}

/// `gex-providers --json`, parsed.
fn listing(dir: &Path) -> Result<conduit::select::listing::ProviderListing, SetupError> {
    let prog = dir.join("gex-providers");
    let mut cmd = Command::new(&prog);
    cmd.arg("--json");
    tests::clear_fabric_env(&mut cmd);
    let b = tests::run_bounded(&mut cmd, Duration::from_secs(60))
        .map_err(|e| format!("cannot start {}: {e}", prog.display()))?;
    if b.timed_out || !b.output.status.success() {
        let err = String::from_utf8_lossy(&b.output.stderr);
        return Err(format!(
            "{} --json failed ({}): {}",
            prog.display(),
            if b.timed_out {
                "timed out after 60 s".to_string()
            } else {
                b.output.status.to_string()
            },
            matrix::first_line(&err).unwrap_or("no message")
        ));
    }
    matrix::parse_listing(&String::from_utf8_lossy(&b.output.stdout))
}

/// Counts jobs for the progress lines.
struct Progress {
    done: usize,
    total: usize,
}

impl Progress {
    fn start(&mut self, provider: &str, what: &str) {
        self.done += 1;
        eprint!(
            "gex-matrix: [{}/{}] {provider} {what} ... ",
            self.done, self.total
        );
    }
}

/// Where the jobs run.
struct Env {
    /// The directory holding gex-matrix and its sibling programs.
    bin_dir: PathBuf,
    /// The launcher.
    launcher: PathBuf,
    /// The jobs' working directory.
    scratch: PathBuf,
    /// The deadline of each job.
    deadline: Duration,
}

impl Drop for Env {
    /// Remove the scratch directory if the jobs left nothing there (on
    /// every path out, errors included).
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.scratch);
    }
}

impl Env {
    fn place(&self) -> JobPlace<'_> {
        JobPlace {
            launcher: &self.launcher,
            cwd: &self.scratch,
            deadline: self.deadline,
        }
    }

    /// Names of the files in the scratch directory.
    fn scratch_files(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.scratch)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }
}

/// Run one conformance program for `target`.
fn run_program(env: &Env, prog: &Program, target: &Target) -> Result<ProgramResult, SetupError> {
    let path = prog.binary.path_in(&env.bin_dir);
    let run = run_job(env.place(), &path, prog.ranks, prog.args, target)?;
    let check = |out: &str| startup_selected(target, out);
    let extra: Option<OutputCheck<'_>> = if prog.id == "startup-ring" {
        Some(&check)
    } else {
        None
    };
    Ok(ProgramResult {
        id: prog.id,
        verdict: matrix::documented_refusal(prog.id, &target.name, &run)
            .unwrap_or_else(|| judge(&run, prog.exit_code, prog.want, extra)),
        secs: run.secs,
    })
}

/// Run the quick benchmark for `target`.
fn run_bench(env: &Env, target: &Target) -> Result<BenchOutcome, SetupError> {
    let args = bench::quick_args(&target.name);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = run_job(
        env.place(),
        &env.bin_dir.join("gex-bench"),
        bench::RANKS,
        &args,
        target,
    )?;
    Ok(match judge(&run, 0, "", None) {
        Verdict::Pass => {
            bench::headlines(&run.stdout, &target.name).unwrap_or_else(BenchOutcome::Failed)
        }
        Verdict::Fail(l) | Verdict::NotRun(l) => BenchOutcome::Failed(l),
    })
}

/// Write the run's document to `out` (`-`: standard output); what was
/// written, for the last progress line.
fn write_out(out: &Path, md: &str) -> Result<String, SetupError> {
    if out == Path::new("-") {
        print!("{md}");
        return Ok("standard output".into());
    }
    if let Some(parent) = out.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)
            .map_err(|e| format!("--out: cannot create {}: {e}", parent.display()))?;
    }
    std::fs::write(out, md).map_err(|e| format!("--out: cannot write {}: {e}", out.display()))?;
    Ok(out.display().to_string())
}

fn run(opts: Opts) -> Result<i32, SetupError> {
    let t0 = Instant::now();
    let started = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    for (opt, list) in [
        ("--providers", &opts.providers),
        ("--programs", &opts.programs),
        ("--must-pass", &opts.must_pass),
    ] {
        if list.iter().any(|s| s.trim().is_empty()) && !(opt == "--must-pass" && list.len() == 1) {
            return Err(format!("{opt}: empty name in {:?}", list.join(",")));
        }
    }
    let must_pass: Vec<String> = opts
        .must_pass
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty() && s != "none")
        .collect();
    let programs = select_programs(&opts.programs)?;
    let dir = find_binaries(&programs, !opts.no_bench)?;
    let docs = opts.docs_dir.clone().unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .unwrap_or(Path::new("."))
            .join("docs")
    });
    let scratch = std::env::temp_dir().join(format!("gex-matrix-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| {
        format!(
            "cannot create the jobs' directory {}: {e}",
            scratch.display()
        )
    })?;
    let env = Env {
        launcher: dir.join("gasnetrun-ofi"),
        bin_dir: dir.clone(),
        scratch,
        deadline: Duration::from_secs(opts.deadline),
    };

    let listing = listing(&dir)?;
    let selected = matrix::select_providers(&listing, &opts.providers)?;
    let names: Vec<&str> = selected
        .iter()
        .map(|&i| listing.providers[i].name.as_str())
        .collect();
    gex_env::eprintln_whole!(
        "gex-matrix: libfabric {}; providers: {}; {} program(s){}; deadline {} s per job",
        listing.libfabric,
        names.join(", "),
        programs.len(),
        if opts.no_bench { "" } else { " and gex-bench" },
        opts.deadline
    );

    let usable = selected
        .iter()
        .filter(|&&i| listing.providers[i].usable)
        .count();
    let mut progress = Progress {
        done: 0,
        total: usable * (programs.len() + usize::from(!opts.no_bench)),
    };
    let mut results = Vec::new();
    for &i in &selected {
        let facts = listing.providers[i].clone();
        let target = Target::for_provider(&facts, &listing);
        let mut res = ProviderResult {
            facts,
            target,
            programs: Vec::new(),
            bench: BenchOutcome::NotRun("--no-bench".into()),
        };
        if let Some(why) = &res.facts.unusable_reason {
            let not = format!("the conduit cannot use it ({why})");
            res.programs = programs
                .iter()
                .map(|p| ProgramResult {
                    id: p.id,
                    verdict: Verdict::NotRun(not.clone()),
                    secs: 0.0,
                })
                .collect();
            res.bench = BenchOutcome::NotRun("not usable".into());
            gex_env::eprintln_whole!("gex-matrix: {}: not usable: {why}", res.facts.name);
            results.push(res);
            continue;
        }
        for prog in &programs {
            progress.start(&res.target.name, prog.id);
            let before = env.scratch_files();
            let r = run_program(&env, prog, &res.target)?;
            match &r.verdict {
                Verdict::Pass => gex_env::eprintln_whole!("pass ({:.1} s)", r.secs),
                Verdict::Fail(l) => gex_env::eprintln_whole!("FAIL ({:.1} s): {l}", r.secs),
                Verdict::NotRun(w) => gex_env::eprintln_whole!("not run: {w}"),
            }
            let left: Vec<String> = env
                .scratch_files()
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            if !left.is_empty() {
                gex_env::eprintln_whole!(
                    "gex-matrix:   the job left {} in {}",
                    left.join(", "),
                    env.scratch.display()
                );
            }
            res.programs.push(r);
        }
        if !opts.no_bench {
            progress.start(&res.target.name, "gex-bench (quick)");
            let t = Instant::now();
            res.bench = run_bench(&env, &res.target)?;
            match &res.bench {
                BenchOutcome::Failed(l) => {
                    gex_env::eprintln_whole!("FAIL ({:.1} s): {l}", t.elapsed().as_secs_f64())
                }
                _ => gex_env::eprintln_whole!("done ({:.1} s)", t.elapsed().as_secs_f64()),
            }
        }
        results.push(res);
    }

    let os = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|t| matrix::pretty_name(&t))
        .unwrap_or_else(|| "unknown (no PRETTY_NAME in /etc/os-release)".into());
    let command = opts.command_line.clone().unwrap_or_else(|| {
        let mut args: Vec<String> = std::env::args().collect();
        if let Some(first) = args.first_mut() {
            *first = "gex-matrix".into();
        }
        shell_join(&args)
    });
    let m = Matrix {
        command,
        date: matrix::utc_text(started),
        took_secs: t0.elapsed().as_secs_f64(),
        os,
        libfabric: listing.libfabric.clone(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        deadline_secs: opts.deadline,
        must_pass,
        programs,
        providers: results,
        offered: listing.providers.iter().map(|p| p.name.clone()).collect(),
    };

    let fatal = m.must_pass_failures(&opts.providers);
    let wrote = match &opts.out {
        Some(out) => write_out(out, &m.render())?,
        None => {
            let p = summary::publish(&docs, &m)?;
            format!(
                "{}, {} and {} (libfabric {})",
                p.document.display(),
                p.summary.display(),
                p.overview.display(),
                p.versions.join(", ")
            )
        }
    };
    let failed: usize = m.providers.iter().map(|p| p.failures().len()).sum();
    gex_env::eprintln_whole!(
        "gex-matrix: wrote {wrote} in {}; {failed} failure(s){}",
        matrix::duration_text(m.took_secs),
        if fatal.is_empty() {
            String::new()
        } else {
            format!(", {} on must-pass providers:", fatal.len())
        }
    );
    for f in &fatal {
        gex_env::eprintln_whole!("gex-matrix:   {f}");
    }
    let left = env.scratch_files();
    if !left.is_empty() {
        gex_env::eprintln_whole!(
            "gex-matrix: the jobs left {} file(s) in {} (kept)",
            left.len(),
            env.scratch.display()
        );
    }
    Ok(if fatal.is_empty() { 0 } else { 1 })
}

#[cfg(test)]
#[path = "gex_matrix/cli_tests.rs"]
mod cli_tests;
