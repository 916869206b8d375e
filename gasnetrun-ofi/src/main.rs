//! `gasnetrun-ofi`: launch an ofi-conduit program on `-n` ranks.

#![forbid(unsafe_code)]

mod args;
mod providers;

use clap::error::ErrorKind;
use clap::Parser;
use gex_env::{EnvReader, ProcessEnv};
use spawner::{JobSpec, SpawnerKind};
use std::ffi::OsString;

const AFTER_HELP: &str = "\
Spawners:
  local  fork every rank on this host (the default when no host list is set)
  ssh    one ssh session per host (the default when GASNET_SSH_SERVERS or
         GASNET_SSH_NODEFILE is set); ranks are spread over the first -N hosts,
         each host's ranks contiguous
  pmi    run the job with PMIRUN_CMD (default `mpirun -np %N %C`; e.g.
         `srun -n %N %C`); ranks bootstrap over PMIx
  mpi    run the job with MPIRUN_CMD (same default); ranks bootstrap over the
         PMIx server under it

Environment:
  GASNET_OFI_SPAWNER      spawner when -spawner= is absent (the flag wins)
  GASNET_SSH_SERVERS      hosts, separated by commas or spaces
  GASNET_SSH_NODEFILE     file with one host per line (wins over GASNET_SSH_SERVERS)
  GASNET_SSH_CMD          remote shell command (default: ssh)
  GASNET_SSH_OPTIONS      options put before the host name (shell-like quoting);
                          OpenSSH also gets -o StrictHostKeyChecking=no -o BatchMode=yes
                          -o ConnectTimeout=10 -o ServerAliveInterval=10 -o ServerAliveCountMax=3
  GASNET_SSH_OUT_DEGREE   most ssh sessions one process starts; agents start the rest
                          as a tree (default 32)
  GASNET_SSH_STARTUP_TIMEOUT  seconds every host has to answer (default 30)
  GASNET_SPAWN_MAX_PER_HOST   most ranks started on one host (default: estimated)
  GASNET_SSH_REMOTE_PATH  working directory on the remote hosts (default: the current one)
  GASNET_EXITTIMEOUT[_MAX,_MIN,_FACTOR]  how long the job may take to end once
                          one rank has exited (default min(480, 10 + 0.25 * N) s)
  GASNET_OFI_BOOTSTRAP_RADIX  fan-out of the bootstrap tree (default 8)
  GASNET_OFI_BOOTSTRAP_HOST   IP address the launcher listens on for ssh jobs
  PMIRUN_CMD, MPIRUN_CMD  command templates: %N ranks, %M nodes (-N), %C program
                          and arguments, %P program, %A arguments, %% a %
  GASNET_SPAWN_VERBOSE    same as -v
  GASNET_VERBOSEENV       print every variable read

Every GASNET_*, FI_*, MLX5_* and HFI_* variable, and those named with -E, reach
every rank. The launcher exits with the job's exit code: the code of the first
rank that exits non-zero (128 + N for a rank killed by signal N), 0 when all
exit 0. See docs/launching.md.";

/// Launch an ofi-conduit program.
#[derive(Debug, Parser)]
#[command(
    name = "gasnetrun-ofi",
    version,
    about = "Launch an ofi-conduit program on N ranks",
    override_usage = "gasnetrun-ofi -n <n> [options] [--] prog [program args]",
    after_help = AFTER_HELP
)]
struct Cli {
    /// Number of processes to run (required).
    #[arg(short = 'n', value_name = "n", allow_hyphen_values = true,
          value_parser = positive, required_unless_present = "list_providers")]
    n: Option<usize>,
    /// Number of nodes (hosts) to run on.
    #[arg(short = 'N', value_name = "nodes", allow_hyphen_values = true, value_parser = positive)]
    nodes: Option<usize>,
    /// Extra environment variables to propagate to every rank.
    #[arg(short = 'E', value_name = "VAR1[,VAR2...]", value_delimiter = ',')]
    extra_env: Vec<String>,
    /// Be verbose about what is happening; prefix rank output with [rank].
    #[allow(rustdoc::broken_intra_doc_links)] // "[rank]" is help text, not a link
    #[arg(short = 'v')]
    verbose: bool,
    /// Test only: print what would run and run nothing (implies -v).
    #[arg(short = 't')]
    test_only: bool,
    /// Keep any temporary files created (implies -v; local and ssh create none).
    #[arg(short = 'k')]
    keep: bool,
    /// Force a spawner: local, ssh, mpi or pmi (also written -spawner=...).
    #[arg(long = "spawner", value_name = "local|ssh|mpi|pmi", value_parser = spawner_kind)]
    spawner: Option<SpawnerKind>,
    /// List the libfabric providers the conduit can use, then exit.
    #[arg(long = "list-providers")]
    list_providers: bool,
    /// The program to run, then its arguments.
    #[arg(
        value_name = "prog [program args]",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required_unless_present = "list_providers"
    )]
    command: Vec<OsString>,
}

/// A count of ranks or hosts: 1 to `u32::MAX` (ranks are numbered in 32
/// bits; a rank refuses a larger `GASNET_OFI_SIZE`).
fn positive(s: &str) -> Result<usize, String> {
    const MAX: usize = u32::MAX as usize;
    let too_large = || format!("too large: at most {MAX}");
    match s.trim().parse::<usize>() {
        Ok(0) => Err("must be at least 1".into()),
        Ok(v) if v > MAX => Err(too_large()),
        Ok(v) => Ok(v),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(too_large()),
        Err(_) => Err("not a positive whole number".into()),
    }
}

fn spawner_kind(s: &str) -> Result<SpawnerKind, String> {
    SpawnerKind::parse(s).ok_or_else(|| "expected local, ssh, mpi or pmi".into())
}

/// One line out of a clap error.
fn one_line(e: &clap::Error) -> String {
    let text = e.to_string();
    let mut parts = Vec::new();
    for l in text.lines() {
        let l = l.trim();
        if l.starts_with("Usage:") || l.starts_with("For more information") {
            break;
        }
        if !l.is_empty() {
            parts.push(l.strip_prefix("error: ").unwrap_or(l).to_string());
        }
    }
    parts.join(" ")
}

/// Page sizes a rank's host may have (x86-64 and most others: 4K; arm64
/// and ppc64 kernels: 16K or 64K).
const RANK_PAGE_SIZES: [usize; 3] = [4096, 16384, 65536];

/// Read the conduit's configuration from the job's environment (which every
/// rank inherits) as a rank would, quietly (the ranks print
/// `GASNET_VERBOSEENV`'s listing): a bad value stops the launch here, with
/// one line, before any rank starts; otherwise every rank would print it.
///
/// The page size is the one fact of its host the configuration reads (the
/// bounce buffers' rules). Ranks on other hosts may have another, so a
/// value refused with this host's page size but accepted with some rank's
/// possible page size is left to the ranks: the launcher never refuses a
/// job its ranks could accept.
fn check_conduit_env() -> Result<(), gex_config::ConfigError> {
    let env = EnvReader::quiet(&ProcessEnv);
    match gex_config::Config::from_env(&env) {
        Ok(_) => Ok(()),
        Err(_)
            if RANK_PAGE_SIZES
                .iter()
                .any(|&p| gex_config::Config::from_env_with_page_size(&env, p).is_ok()) =>
        {
            Ok(())
        }
        Err(e) => Err(e),
    }
}

/// An exit status that is never 0 unless the job's code is 0.
fn status(code: i32) -> i32 {
    match code & 0xff {
        0 if code != 0 => 1,
        c => c,
    }
}

fn main() {
    let raw: Vec<OsString> = std::env::args_os().collect();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_target(false)
        .without_time()
        .init();

    if raw.get(1).is_some_and(|a| a == "--shm-janitor") {
        std::process::exit(spawner::shm_clean::run_janitor(std::io::stdin()));
    }
    if raw.get(1).is_some_and(|a| a == "--ssh-agent") {
        let code = match spawner::run_agent(std::io::stdin()) {
            Ok(c) => c,
            Err(e) => {
                gex_env::eprintln_whole!("gasnetrun-ofi agent: {e}");
                e.exit_code()
            }
        };
        std::process::exit(status(code));
    }

    let args = match args::rewrite_args(raw) {
        Ok(a) => a,
        Err(e) => {
            gex_env::eprintln_whole!("gasnetrun-ofi: {e}");
            std::process::exit(2);
        }
    };
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            let _ = e.print();
            std::process::exit(0);
        }
        Err(e) => {
            gex_env::eprintln_whole!("gasnetrun-ofi: {} (try gasnetrun-ofi -h)", one_line(&e));
            std::process::exit(2);
        }
    };
    if cli.list_providers {
        std::process::exit(providers::list_providers());
    }
    let mut command = cli.command.into_iter();
    let (Some(n), Some(program)) = (cli.n, command.next()) else {
        gex_env::eprintln_whole!(
            "gasnetrun-ofi: -n and a program are required (try gasnetrun-ofi -h)"
        );
        std::process::exit(2);
    };
    if let Err(e) = args::check_env_names(&cli.extra_env) {
        gex_env::eprintln_whole!("gasnetrun-ofi: {e}");
        std::process::exit(2);
    }
    let spec = JobSpec {
        nranks: n,
        nodes: cli.nodes,
        extra_env: cli
            .extra_env
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect(),
        verbose: cli.verbose,
        test_only: cli.test_only,
        keep: cli.keep,
        spawner: cli.spawner,
        program,
        args: command.collect(),
    };
    if let Err(e) = check_conduit_env() {
        gex_env::eprintln_whole!("gasnetrun-ofi: {e}");
        std::process::exit(2);
    }
    let env = EnvReader::new(&ProcessEnv);
    let code = match spawner::run_job(&spec, &env) {
        Ok(c) => c,
        Err(e) => {
            gex_env::eprintln_whole!("gasnetrun-ofi: {e}");
            e.exit_code()
        }
    };
    std::process::exit(status(code));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<OsString> {
        a.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_gasnet_style_command_lines() {
        let c = Cli::try_parse_from(
            args::rewrite_args(v(&[
                "g",
                "-n",
                "4",
                "-N",
                "2",
                "-E",
                "A,B",
                "-v",
                "-spawner=ssh",
                "prog",
                "-x",
                "y",
            ]))
            .unwrap(),
        )
        .unwrap();
        assert_eq!(c.n, Some(4));
        assert_eq!(c.nodes, Some(2));
        assert_eq!(c.extra_env, vec!["A", "B"]);
        assert_eq!(c.spawner, Some(SpawnerKind::Ssh));
        assert_eq!(c.command, v(&["prog", "-x", "y"]));
        assert!(
            Cli::try_parse_from(v(&["g", "--list-providers"]))
                .unwrap()
                .list_providers
        );
    }

    #[test]
    fn bad_n_is_one_line() {
        for a in [
            &["g", "-n", "0", "p"][..],
            &["g", "-n", "-1", "p"],
            &["g", "-n", "abc", "p"],
            &["g", "p"],
        ] {
            let e = Cli::try_parse_from(args::rewrite_args(v(a)).unwrap()).unwrap_err();
            let l = one_line(&e);
            assert!(!l.contains('\n') && l.contains("-n"), "{l}");
        }
        // Too large is not "not a whole number".
        let e = Cli::try_parse_from(
            args::rewrite_args(v(&["g", "-n", "18446744073709551616", "p"])).unwrap(),
        )
        .unwrap_err();
        assert_eq!(
            one_line(&e),
            "invalid value '18446744073709551616' for '-n <n>': too large: at most 4294967295"
        );
        // Nor is a count above the 32-bit rank numbers.
        let e =
            Cli::try_parse_from(args::rewrite_args(v(&["g", "-n", "4294967296", "p"])).unwrap())
                .unwrap_err();
        assert_eq!(
            one_line(&e),
            "invalid value '4294967296' for '-n <n>': too large: at most 4294967295"
        );
    }
}
