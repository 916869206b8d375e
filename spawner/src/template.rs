//! The mpi and pmi spawners: run the job through an external launcher
//! command built from a template (`MPIRUN_CMD` / `PMIRUN_CMD`, default
//! `mpirun -np %N %C`), as GASNet's `gasnetrun_mpi` does.
//!
//! Template expansion: the template is split into words with shell-like
//! quoting, then
//! * a word that is exactly `%C` becomes the program and its arguments, as
//!   separate words; `%P` the program; `%A` the arguments (zero or more
//!   words);
//! * inside a longer word, `%N` is the number of ranks, `%M` the number of
//!   nodes (`-N`, required when the template uses `%M`), `%C`, `%P` and `%A`
//!   are replaced by their shell-quoted text (for templates such as
//!   `sh -c "... %C"`), and `%%` is a `%`.
//!
//! The command is run directly (no shell), so arguments reach the ranks
//! byte for byte. The launcher's environment reaches the command, plus
//! `GASNET_OFI_SPAWNER=<mpi|pmi>` and `GASNET_OFI_SIZE=<n>` (the ranks'
//! bootstrap checks the PMIx job size against it) and, as
//! root, `OMPI_ALLOW_RUN_AS_ROOT=1` / `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`.
//! When the command is Open MPI's `mpirun`/`mpiexec`, every propagated
//! variable is also named with `-x NAME` (Open MPI only forwards its own
//! environment to ranks on the local host). The job's exit code is the
//! command's (128 + S when it is killed by signal S).

use crate::launch::{propagated_env, JobSpec, SpawnerKind};
use crate::SpawnError;
use bootstrap::{ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK, ENV_SIZE, ENV_SPAWNER};
use gex_env::EnvReader;
use std::ffi::{OsStr, OsString};
use std::process::{Command, Stdio};

mod expand;
mod run;

pub use expand::expand;
use expand::quote;
pub use run::run;

/// Template of the mpi spawner's command.
pub const ENV_MPIRUN_CMD: &str = "MPIRUN_CMD";
/// Template of the pmi spawner's command.
pub const ENV_PMIRUN_CMD: &str = "PMIRUN_CMD";
/// The default of both templates.
pub const DEFAULT_TEMPLATE: &str = "mpirun -np %N %C";

/// What the template placeholders stand for.
#[derive(Debug, Clone)]
pub struct TemplateArgs<'a> {
    /// `%N`: number of ranks.
    pub nranks: usize,
    /// `%M`: number of nodes (`-N`).
    pub nodes: Option<usize>,
    /// `%P`: the program.
    pub program: &'a OsStr,
    /// `%A`: its arguments.
    pub args: &'a [OsString],
}

/// True when `cmd` (a path or name) is Open MPI's launcher: its name is
/// `mpirun`, `mpiexec` or `orterun` and `cmd --version` says Open MPI.
fn is_open_mpi(cmd: &OsStr) -> bool {
    let name = std::path::Path::new(cmd)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !["mpirun", "mpiexec", "orterun"].contains(&name.as_str()) {
        return false;
    }
    Command::new(cmd)
        .arg("--version")
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .map(|o| {
            let t = String::from_utf8_lossy(&o.stdout);
            t.contains("Open MPI") || t.contains("OpenRTE")
        })
        .unwrap_or(false)
}

/// The expanded command and the environment changes for one job.
#[derive(Debug, Clone)]
pub struct TemplateJob {
    /// The command line to run.
    pub argv: Vec<OsString>,
    /// Variables set for the command (on top of the launcher's environment).
    pub set_env: Vec<(String, String)>,
    /// Variables removed from the command's environment.
    pub unset_env: Vec<&'static str>,
    /// The names of the variables passed to the ranks.
    pub passed: Vec<String>,
}

/// Build the command for `kind` (mpi or pmi) from its template.
pub fn plan(
    spec: &JobSpec,
    env: &EnvReader<'_>,
    kind: SpawnerKind,
) -> Result<TemplateJob, SpawnError> {
    let var = match kind {
        SpawnerKind::Mpi => ENV_MPIRUN_CMD,
        SpawnerKind::Pmi => ENV_PMIRUN_CMD,
        k => {
            return Err(SpawnError::InvalidArgument(format!(
                "the {} spawner has no command template",
                k.name()
            )))
        }
    };
    let template = env.string(var, DEFAULT_TEMPLATE);
    let mut argv = expand(
        &template,
        var,
        &TemplateArgs {
            nranks: spec.nranks,
            nodes: spec.nodes,
            program: &spec.program,
            args: &spec.args,
        },
    )?;
    // GASNET_OFI_SIZE tells the ranks how many they should be: without a
    // PMIx server (an MPI launcher that has none) they then fail instead
    // of each running as a job of one rank.
    let mut set_env = vec![
        (ENV_SPAWNER.to_string(), kind.name().to_string()),
        (ENV_SIZE.to_string(), spec.nranks.to_string()),
    ];
    if nix::unistd::geteuid().is_root() {
        for v in ["OMPI_ALLOW_RUN_AS_ROOT", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] {
            if env.source().var(v).is_none() {
                set_env.push((v.to_string(), "1".to_string()));
            }
        }
    }
    let mut passed: Vec<String> = propagated_env(env.source(), &spec.extra_env)
        .into_iter()
        .map(|(k, _)| k)
        .filter(|k| k != ENV_SPAWNER)
        .collect();
    passed.insert(0, ENV_SIZE.to_string());
    passed.insert(0, ENV_SPAWNER.to_string());
    if is_open_mpi(&argv[0]) {
        let mut x: Vec<OsString> = Vec::new();
        for name in &passed {
            x.push("-x".into());
            x.push(name.into());
        }
        argv.splice(1..1, x);
    }
    Ok(TemplateJob {
        argv,
        set_env,
        unset_env: vec![ENV_BOOTSTRAP_ADDR, ENV_BOOTSTRAP_SECRET, ENV_RANK],
        passed,
    })
}

/// Shell-quoted text of a command line, for `-v` and `-t`.
pub fn command_text(argv: &[OsString]) -> String {
    argv.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" ")
}
