//! Open MPI's OFI MTL as a baseline: `bench/c/mtl_pingpong.c` (compiled
//! into this binary as text), built with `mpicc -O2` at run time and run
//! with `mpirun --mca pml cm --mca mtl ofi` on the conduit's provider.
//!
//! Only the `cm` PML and the `ofi` MTL are allowed, so a run that
//! completes went through the MTL (Open MPI has no fallback left: without
//! a usable provider `MPI_Init` fails with "PML cm cannot be selected").
//! `mtl_ofi_verbose 1` makes each rank print the libfabric provider the MTL
//! chose (`mtl:ofi:prov: tcp;ofi_rxm`); that line is required and its
//! provider recorded.
//!
//! Over shm the ranks preload `bench/c/mtl_shm_caps.c` (built with `cc` at
//! run time): Open MPI 4.1's MTL asks for FI_LOCAL_COMM | FI_REMOTE_COMM,
//! which shm does not offer, and the shim takes those two bits out of the
//! MTL's `fi_getinfo` request (nothing else). The command line in the
//! report shows the `-x LD_PRELOAD=...` it adds.

use crate::child::Guard;
use crate::samples::{self, Sample};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The ping-pong's source.
pub const SOURCE: &str = include_str!("../c/mtl_pingpong.c");
/// The capability shim's source (preloaded over shm only).
pub const SHM_SHIM: &str = include_str!("../c/mtl_shm_caps.c");
/// The shim's file name.
pub const SHM_SHIM_NAME: &str = "mtl_shm_caps.so";
/// The packages that bring `mpicc` and `mpirun`.
pub const PACKAGES: &str = "Debian/Ubuntu: apt-get install libopenmpi-dev openmpi-bin";

/// `name` on `PATH`.
pub fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// The built program (and the shm shim) in a directory of its own,
/// removed when dropped.
#[derive(Debug)]
pub struct Built {
    /// The executable.
    pub program: PathBuf,
    /// The capability shim for shm ([`SHM_SHIM`]), once built.
    pub shim: Option<PathBuf>,
    dir: PathBuf,
}

impl Drop for Built {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Write [`SOURCE`] into a new temporary directory and compile it with
/// `mpicc -O2` (`mpicc` = `explicit`, or found on `PATH`).
pub fn build(explicit: Option<&Path>) -> Result<Built, String> {
    let mpicc = match explicit {
        Some(p) => p.to_path_buf(),
        None => find_on_path("mpicc").ok_or_else(|| {
            format!("mpicc not found on PATH; the Open MPI baseline of --tests tagged is built with it: install Open MPI ({PACKAGES}), pass --mpicc PATH, or leave it out with --no-mtl")
        })?,
    };
    let dir = std::env::temp_dir().join(format!("gex-bench-mtl-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let built = Built {
        program: dir.join("mtl_pingpong"),
        shim: None,
        dir,
    };
    compile(
        &mpicc,
        &built.dir,
        "mtl_pingpong.c",
        SOURCE,
        &["-O2"],
        &built.program,
        &[],
        PACKAGES,
    )?;
    Ok(built)
}

/// Write `source` as `dir/name` and compile it with `cc FLAGS -o out SRC
/// LIBS`; errors name the compiler, its status and its messages (`install`
/// says what brings the compiler).
#[allow(clippy::too_many_arguments)]
fn compile(
    cc: &Path,
    dir: &Path,
    name: &str,
    source: &str,
    flags: &[&str],
    out: &Path,
    libs: &[&str],
    install: &str,
) -> Result<(), String> {
    let src = dir.join(name);
    std::fs::write(&src, source).map_err(|e| format!("cannot write {}: {e}", src.display()))?;
    let run = Command::new(cc)
        .args(flags)
        .arg("-o")
        .arg(out)
        .arg(&src)
        .args(libs)
        .output()
        .map_err(|e| format!("cannot run {}: {e} ({install})", cc.display()))?;
    if !run.status.success() {
        return Err(format!(
            "{} {} failed ({}): {}",
            cc.display(),
            flags.join(" "),
            run.status,
            String::from_utf8_lossy(&run.stderr).trim()
        ));
    }
    Ok(())
}

impl Built {
    /// Compile [`SHM_SHIM`] with `cc -O2 -shared -fPIC` next to the program
    /// (for a run over shm).
    pub fn build_shim(&mut self) -> Result<PathBuf, String> {
        let cc = find_on_path("cc").ok_or_else(|| {
            "cc not found on PATH; the Open MPI baseline over shm preloads a shim built with it: install a C compiler (Debian/Ubuntu: apt-get install gcc), or leave the baseline out with --no-mtl".to_string()
        })?;
        let so = self.dir.join(SHM_SHIM_NAME);
        compile(
            &cc,
            &self.dir,
            "mtl_shm_caps.c",
            SHM_SHIM,
            &["-O2", "-shared", "-fPIC"],
            &so,
            &["-ldl"],
            "Debian/Ubuntu: apt-get install gcc",
        )?;
        self.shim = Some(so.clone());
        Ok(so)
    }
}

/// `mpirun` (`explicit`, or found on `PATH`) and its version line; an error
/// unless it is Open MPI's.
pub fn find_mpirun(explicit: Option<&Path>) -> Result<(PathBuf, String), String> {
    let mpirun = match explicit {
        Some(p) => p.to_path_buf(),
        None => find_on_path("mpirun").ok_or_else(|| {
            format!("mpirun not found on PATH; the Open MPI baseline of --tests tagged runs under it: install Open MPI ({PACKAGES}), pass --mpirun PATH, or leave it out with --no-mtl")
        })?,
    };
    let out = Command::new(&mpirun)
        .arg("--version")
        .output()
        .map_err(|e| format!("cannot run {} --version: {e}", mpirun.display()))?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let version = text.lines().next().unwrap_or("").trim().to_string();
    if !version.contains("Open MPI") {
        return Err(format!(
            "{} is not Open MPI's mpirun ({version:?}); the MTL baseline needs Open MPI ({PACKAGES}; pick it with update-alternatives --config mpirun, or pass --mpirun PATH)",
            mpirun.display()
        ));
    }
    Ok((mpirun, version))
}

/// What the program is asked to measure (its options `-s -i -f -w -m`).
#[derive(Debug, Clone, PartialEq)]
pub struct Args {
    /// Payload sizes.
    pub sizes: Vec<usize>,
    /// `--iters`: at most this many round trips or messages per size.
    pub iters: usize,
    /// `--flood-bytes`: a size's count is min(iters, max(16, this / size)),
    /// and its window at most this many bytes.
    pub flood_bytes: usize,
    /// `--window`: messages in flight in the bandwidth test.
    pub window: usize,
}

impl Args {
    fn to_vec(&self) -> Vec<String> {
        let sizes: Vec<String> = self.sizes.iter().map(|s| s.to_string()).collect();
        [
            "-s",
            &sizes.join(","),
            "-i",
            &self.iters.to_string(),
            "-f",
            &self.flood_bytes.to_string(),
            "-w",
            &self.window.to_string(),
            "-m",
            &self.flood_bytes.to_string(),
        ]
        .map(String::from)
        .to_vec()
    }
}

/// How the MTL ping-pong is run for one provider.
#[derive(Debug, Clone)]
pub struct Mtl {
    /// Open MPI's `mpirun`.
    pub mpirun: PathBuf,
    /// The built `mtl_pingpong`.
    pub program: PathBuf,
    /// `mtl_ofi_provider_include`: `tcp` (the MTL then gets `tcp;ofi_rxm`),
    /// `shm`, ...
    pub include: String,
    /// Environment of mpirun and, by `-x`, of both ranks.
    pub env: Vec<(String, String)>,
    /// A library the ranks preload (`-x LD_PRELOAD=...`; not mpirun):
    /// the capability shim over shm.
    pub preload: Option<PathBuf>,
}

/// Why a run gave no figures.
#[derive(Debug, Clone, PartialEq)]
pub struct RunError {
    /// What happened.
    pub msg: String,
    /// Whether the MTL cannot run on this provider at all (no use trying
    /// again).
    pub unusable: bool,
}

impl From<String> for RunError {
    fn from(msg: String) -> RunError {
        RunError {
            msg,
            unusable: false,
        }
    }
}

/// One run's figures and the provider the MTL reported.
#[derive(Debug, Clone)]
pub struct MtlRun {
    /// The figures.
    pub samples: Vec<Sample>,
    /// `mtl:ofi:prov:` of rank 0's verbose output (`tcp;ofi_rxm`).
    pub provider: String,
}

impl Mtl {
    /// The run for the conduit's provider (as libfabric names it: `shm`,
    /// `tcp;ofi_rxm`, ...): the same core provider, over the loopback
    /// interface for the IP ones (as `fi_pingpong`). Over shm, set
    /// [`Mtl::preload`] to the shim ([`Built::build_shim`]).
    pub fn for_provider(mpirun: &Path, program: &Path, provider: &str) -> Mtl {
        let base = provider.split(';').next().unwrap_or(provider).to_string();
        let env = match base.as_str() {
            "tcp" => vec![("FI_TCP_IFACE".to_string(), "lo".to_string())],
            "udp" => vec![("FI_UDP_IFACE".to_string(), "lo".to_string())],
            _ => vec![],
        };
        Mtl {
            mpirun: mpirun.to_path_buf(),
            program: program.to_path_buf(),
            include: base,
            env,
            preload: None,
        }
    }

    fn mpirun_args(&self) -> Vec<String> {
        let mut a: Vec<String> = [
            "--allow-run-as-root",
            "--oversubscribe",
            "--bind-to",
            "none",
            "-n",
            "2",
            "--mca",
            "pml",
            "cm",
            "--mca",
            "mtl",
            "ofi",
            "--mca",
            "mtl_ofi_provider_include",
            &self.include,
            "--mca",
            "mtl_ofi_verbose",
            "1",
        ]
        .map(String::from)
        .to_vec();
        for (k, _) in &self.env {
            a.extend(["-x".to_string(), k.clone()]);
        }
        if let Some(p) = &self.preload {
            a.extend(["-x".to_string(), format!("LD_PRELOAD={}", p.display())]);
        }
        a
    }

    /// The command line (for the report).
    pub fn describe(&self, args: &Args) -> String {
        let env: String = self.env.iter().map(|(k, v)| format!("{k}={v} ")).collect();
        format!(
            "{env}{} {} mtl_pingpong {}",
            self.mpirun.display(),
            self.mpirun_args().join(" "),
            args.to_vec().join(" ")
        )
    }

    /// Run it once for all of `args.sizes`.
    pub fn run(&self, args: &Args, deadline: Duration) -> Result<MtlRun, RunError> {
        let mut c = Command::new(&self.mpirun);
        // Open MPI's and libfabric's defaults: none of the job's FI_*,
        // GASNET_*, OMPI_* or PMIX_* settings.
        for (k, _) in std::env::vars() {
            if ["FI_", "GASNET_", "OMPI_", "PMIX_"]
                .iter()
                .any(|p| k.starts_with(p))
            {
                c.env_remove(k);
            }
        }
        c.envs(self.env.iter().map(|(k, v)| (k, v)));
        c.args(self.mpirun_args())
            .arg(&self.program)
            .args(args.to_vec());
        let start = Instant::now();
        let out = Guard::spawn(c, "mpirun")?.wait(start + deadline)?;
        let provider = chosen_provider(&out.stderr);
        if !out.ok {
            return Err(diagnose(&self.include, &out.stderr, &out.status));
        }
        let provider = provider.ok_or_else(|| {
            format!(
                "mpirun succeeded but no rank said which provider the OFI MTL used (no \"mtl:ofi:prov:\" line): {}",
                tail(&out.stderr)
            )
        })?;
        if provider.split(';').next() != Some(self.include.as_str()) {
            return Err(RunError {
                msg: format!(
                    "the OFI MTL used provider {provider:?}, not {:?}",
                    self.include
                ),
                unusable: true,
            });
        }
        let samples = samples::parse(&out.stdout)?;
        samples::check_complete(&samples, &args.sizes)?;
        Ok(MtlRun { samples, provider })
    }
}

/// The provider of the first `mtl:ofi:prov: NAME` line.
pub fn chosen_provider(stderr: &str) -> Option<String> {
    stderr.lines().find_map(|l| {
        let (_, p) = l.split_once("mtl:ofi:prov: ")?;
        let p = p.trim();
        (!p.is_empty() && p != "none").then(|| p.to_string())
    })
}

/// The last lines of `text` that are not the MTL's verbose output.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| !l.contains("mtl_ofi_component.c") && !l.trim().is_empty())
        .filter(|l| !l.trim_start().starts_with("----"))
        .collect();
    lines[lines.len().saturating_sub(6)..].join(" | ")
}

/// Why a run failed, from its standard error.
pub fn diagnose(include: &str, stderr: &str, status: &str) -> RunError {
    if stderr.contains("select_ofi_provider: no provider found")
        || stderr.contains("PML cm cannot be selected")
    {
        let why = if include == "shm" {
            "Open MPI 4.1's OFI MTL asks fi_getinfo for FI_TAGGED | FI_LOCAL_COMM | FI_REMOTE_COMM | FI_DIRECTED_RECV, and libfabric's shm provider does not offer FI_REMOTE_COMM (FI_LOG_LEVEL=info shows \"shm: Unsupported capabilities\"); without the preloaded capability shim (mtl_shm_caps.so) the MTL cannot run over shm, and with it this libfabric still offered nothing"
        } else {
            "run it with FI_LOG_LEVEL=info to see why libfabric offered none"
        };
        return RunError {
            msg: format!(
                "Open MPI's OFI MTL found no usable libfabric provider {include:?} and PML cm could not be selected: {why}"
            ),
            unusable: true,
        };
    }
    format!("mpirun failed ({status}): {}", tail(stderr)).into()
}

#[cfg(test)]
mod test {
    use super::*;

    const TCP_ERR: &str = "[vm:00971] ../../../../../../ompi/mca/mtl/ofi/mtl_ofi_component.c:583: mtl:ofi:provider_include = \"tcp\"\n\
        [vm:00971] ../../../../../../ompi/mca/mtl/ofi/mtl_ofi_component.c:735: fi_getinfo(): Success\n\
        [vm:00971] ../../../../../../ompi/mca/mtl/ofi/mtl_ofi_component.c:337: mtl:ofi:prov: tcp;ofi_rxm\n";
    const SHM_ERR: &str = "[vm:01318] ../../../../../../ompi/mca/mtl/ofi/mtl_ofi_component.c:320: mtl:ofi: \"tcp;ofi_rxm\" not in include list\n\
        [vm:01318] ../../../../../../ompi/mca/mtl/ofi/mtl_ofi_component.c:337: mtl:ofi:prov: none\n\
        [vm:01318] ../../../../../../ompi/mca/mtl/ofi/mtl_ofi_component.c:756: select_ofi_provider: no provider found\n\
        --------------------------------------------------------------------------\n\
        No components were able to be opened in the pml framework.\n\
        [vm:01318] PML cm cannot be selected\n";

    #[test]
    fn finds_the_provider_the_mtl_chose() {
        assert_eq!(chosen_provider(TCP_ERR).as_deref(), Some("tcp;ofi_rxm"));
        assert_eq!(chosen_provider(SHM_ERR), None);
        assert_eq!(chosen_provider(""), None);
    }

    #[test]
    fn says_why_shm_fails() {
        let e = diagnose("shm", SHM_ERR, "exit status: 1");
        assert!(e.unusable);
        assert!(
            e.msg.contains("FI_REMOTE_COMM") && e.msg.contains("PML cm"),
            "{e:?}"
        );
        let e = diagnose("tcp", "oops\n", "exit status: 1");
        assert!(!e.unusable);
        assert_eq!(e.msg, "mpirun failed (exit status: 1): oops");
    }

    #[test]
    fn command_line() {
        let m = Mtl::for_provider(
            Path::new("/usr/bin/mpirun"),
            Path::new("/t/m"),
            "tcp;ofi_rxm",
        );
        assert_eq!(m.include, "tcp");
        let args = Args {
            sizes: vec![8, 1 << 20],
            iters: 100,
            flood_bytes: 1 << 26,
            window: 64,
        };
        let d = m.describe(&args);
        for want in [
            "FI_TCP_IFACE=lo /usr/bin/mpirun",
            "--mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include tcp",
            "-x FI_TCP_IFACE",
            "mtl_pingpong -s 8,1048576 -i 100 -f 67108864 -w 64 -m 67108864",
        ] {
            assert!(d.contains(want), "{want:?} not in {d}");
        }
        assert!(!d.contains("LD_PRELOAD"), "{d}");
        let mut shm = Mtl::for_provider(Path::new("r"), Path::new("p"), "shm");
        assert_eq!(shm.include, "shm");
        shm.preload = Some(PathBuf::from("/t/mtl_shm_caps.so"));
        let d = shm.describe(&args);
        assert!(
            d.contains("--mca mtl_ofi_provider_include shm --mca mtl_ofi_verbose 1 -x LD_PRELOAD=/t/mtl_shm_caps.so mtl_pingpong -s "),
            "{d}"
        );
    }

    /// The shim compiles where the machine has `cc` (as the benchmark
    /// needs it to over shm) and exports `fi_getinfo`.
    #[test]
    fn the_shim_builds() {
        let dir = std::env::temp_dir().join(format!("gex-bench-shim-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut b = Built {
            program: dir.join("unused"),
            shim: None,
            dir,
        };
        let so = b.build_shim().expect("cc builds the shim (install gcc)");
        assert_eq!(b.shim.as_deref(), Some(so.as_path()));
        let bytes = std::fs::read(&so).unwrap();
        assert!(bytes.windows(10).any(|w| w == b"fi_getinfo"));
    }
}
