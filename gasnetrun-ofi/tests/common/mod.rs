//! Helpers for the multi-process tests: every job runs under a deadline,
//! in its own process group, and is checked for survivors afterwards.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, MutexGuard};
use std::thread;
use std::time::{Duration, Instant};

/// One job at a time: the machine has 2 cores and the survivor checks look
/// at every process.
static SERIAL: Mutex<()> = Mutex::new(());

pub fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn launcher() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_gasnetrun-ofi"))
}

/// The test program (an example of this package, built by `cargo test`).
pub fn bootcheck() -> PathBuf {
    example("bootcheck")
}

/// An example program of this package (`bootcheck`, or one of the client
/// programs built here: `gex-am`, `gex-rma`, `example-gups`, ...).
///
/// `cargo test` builds examples as `examples/<name>-<hash>` (with `_` for
/// `-` in the name) and does not always refresh the `examples/<name>` link,
/// so the most recently built of these is used: a stale copy from an older
/// build cannot stand in.
pub fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe
        .parent()
        .and_then(|d| d.parent())
        .unwrap()
        .join("examples");
    let hashed = format!("{}-", name.replace('-', "_"));
    let newest = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            (n == name || n.starts_with(&hashed)) && !n.contains('.')
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max_by_key(|(t, _)| *t)
        .map(|(_, p)| p);
    match newest {
        Some(p) => p,
        None => panic!(
            "{}/{name} is missing: run through cargo test (`cargo test -p gasnetrun-ofi` builds it)",
            dir.display()
        ),
    }
}

/// [`example`] as a command-line argument.
pub fn example_arg(name: &str) -> String {
    example(name).to_string_lossy().into_owned()
}

/// A marker unique to one test, put on the ranks' command lines.
pub fn token(name: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "tok-{name}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// Pids (other than ours) for which `keep(pid)` holds.
pub fn pids_where(keep: impl Fn(i32) -> bool) -> Vec<i32> {
    let me = std::process::id() as i32;
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse::<i32>().ok())
        .filter(|&pid| pid != me && keep(pid))
        .collect()
}

/// Pids (other than ours) whose command line contains `token`.
pub fn processes_with(token: &str) -> Vec<i32> {
    pids_where(|pid| {
        std::fs::read(format!("/proc/{pid}/cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(token))
    })
}

/// Every process of the job is gone (waits up to 3 s for the last ones to
/// be reaped); kills and fails otherwise.
pub fn assert_no_survivors(token: &str) {
    let end = Instant::now() + Duration::from_secs(3);
    loop {
        let left = processes_with(token);
        if left.is_empty() {
            return;
        }
        if Instant::now() > end {
            for p in &left {
                let _ = nix::sys::signal::kill(
                    nix::unistd::Pid::from_raw(*p),
                    nix::sys::signal::Signal::SIGKILL,
                );
            }
            panic!("processes of the job survived: {left:?}");
        }
        thread::sleep(Duration::from_millis(50));
    }
}

/// A running launcher.
pub struct Job {
    pub child: Child,
    pub token: String,
    pub started: Instant,
    out_rx: Receiver<String>,
    err_rx: Receiver<String>,
    pub out: Vec<String>,
    pub err: Vec<String>,
}

pub struct Done {
    pub code: Option<i32>,
    pub signal: Option<i32>,
    pub out: Vec<String>,
    pub err: Vec<String>,
    pub elapsed: Duration,
}

impl Done {
    pub fn err_text(&self) -> String {
        self.err.join("\n")
    }
    /// Assert that the job succeeded and that each of `ranks` ranks
    /// printed (bootcheck's `args` mode) exactly the arguments `sent`.
    pub fn assert_args_intact(&self, sent: &[&str], ranks: usize) {
        assert_eq!(self.code, Some(0), "{:?}", self.err);
        let want = format!("{:?}", sent);
        for r in 0..ranks {
            assert!(
                self.out.contains(&format!("args {r} {want}")),
                "{:?}",
                self.out
            );
        }
    }

    /// The stderr lines that contain `text`.
    pub fn err_with(&self, text: &str) -> Vec<&String> {
        self.err.iter().filter(|l| l.contains(text)).collect()
    }

    pub fn out_text(&self) -> String {
        self.out.join("\n")
    }
}

fn lines(r: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for l in BufReader::new(r).lines() {
            let Ok(l) = l else { break };
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    rx
}

impl Job {
    /// Start `gasnetrun-ofi args...` with extra variables.
    pub fn start(token: &str, args: &[&str], envs: &[(&str, &str)]) -> Job {
        let mut cmd = Command::new(launcher());
        cmd.args(args).envs(envs.iter().copied());
        Job::start_cmd(token, cmd)
    }

    /// Start any command (e.g. the launcher under `ip netns exec`) as a job:
    /// own process group, piped output, no stdin.
    pub fn start_cmd(token: &str, mut cmd: Command) -> Job {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {cmd:?}: {e}"));
        let out_rx = lines(child.stdout.take().unwrap());
        let err_rx = lines(child.stderr.take().unwrap());
        Job {
            child,
            token: token.to_string(),
            started: Instant::now(),
            out_rx,
            err_rx,
            out: Vec::new(),
            err: Vec::new(),
        }
    }

    fn drain(&mut self) {
        while let Ok(l) = self.out_rx.try_recv() {
            self.out.push(l);
        }
        while let Ok(l) = self.err_rx.try_recv() {
            self.err.push(l);
        }
    }

    /// Wait until `count` stdout lines match `pred` (all lines so far count).
    pub fn wait_stdout(
        &mut self,
        count: usize,
        within: Duration,
        pred: impl Fn(&str) -> bool,
    ) -> Vec<String> {
        let end = Instant::now() + within;
        loop {
            self.drain();
            let m: Vec<String> = self.out.iter().filter(|l| pred(l)).cloned().collect();
            if m.len() >= count {
                return m;
            }
            if Instant::now() > end {
                let why = format!(
                    "timed out waiting for output; stdout {:?} stderr {:?}",
                    self.out, self.err
                );
                self.kill();
                panic!("{why}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Wait for `n` ranks' `ready R PID` lines (bootcheck's `hang`, gex-am's
    /// `exit after-pause`); the pid of rank `rank`.
    pub fn ready_pid(&mut self, n: usize, rank: usize, within: Duration) -> i32 {
        let ready = self.wait_stdout(n, within, |l| l.starts_with("ready "));
        let tag = format!("ready {rank} ");
        ready
            .iter()
            .find_map(|l| l.strip_prefix(&tag))
            .and_then(|x| x.parse().ok())
            .unwrap_or_else(|| panic!("no pid of rank {rank} in {ready:?}"))
    }

    /// Wait until a stderr line matches.
    pub fn wait_stderr(&mut self, within: Duration, pred: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + within;
        loop {
            self.drain();
            if let Some(l) = self.err.iter().find(|l| pred(l)) {
                return l.clone();
            }
            if Instant::now() > end {
                let why = format!(
                    "timed out waiting for stderr; stdout {:?} stderr {:?}",
                    self.out, self.err
                );
                self.kill();
                panic!("{why}");
            }
            thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kill the launcher's group and every process of the job.
    pub fn kill(&mut self) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGKILL,
        );
        let _ = self.child.wait();
        for p in processes_with(&self.token) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }

    /// Wait for the launcher to end within `deadline` (a hung job fails the
    /// test after being killed), then check that nothing of the job is left.
    pub fn wait(mut self, deadline: Duration) -> Done {
        use std::os::unix::process::ExitStatusExt;
        let end = self.started + deadline;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            if Instant::now() > end {
                self.drain();
                let why = format!(
                    "job did not end within {deadline:?}; stdout {:?} stderr {:?}",
                    self.out, self.err
                );
                self.kill();
                panic!("{why}");
            }
            thread::sleep(Duration::from_millis(10));
        };
        let elapsed = self.started.elapsed();
        // Output threads end when the pipes close.
        let tail = Instant::now() + Duration::from_secs(2);
        loop {
            self.drain();
            let closed = matches!(
                self.out_rx.try_recv(),
                Err(mpsc::TryRecvError::Disconnected)
            ) && matches!(
                self.err_rx.try_recv(),
                Err(mpsc::TryRecvError::Disconnected)
            );
            if closed || Instant::now() > tail {
                break;
            }
            thread::sleep(Duration::from_millis(10));
        }
        assert_no_survivors(&self.token);
        Done {
            code: status.code(),
            signal: status.signal(),
            out: std::mem::take(&mut self.out),
            err: std::mem::take(&mut self.err),
            elapsed,
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            self.kill();
        }
    }
}

/// One run of a client program (an example of this package) and what its
/// rank 0 prints when every check passed.
pub struct ClientRun {
    /// The example's name ([`example`]).
    pub program: &'static str,
    /// Its arguments (the job's token goes after them: the programs
    /// ignore further arguments).
    pub args: Vec<String>,
    /// How the success line starts; exactly one stdout line starts so.
    pub want: String,
    /// Further text that line must contain.
    pub also: Vec<String>,
    /// Text that line must not contain (e.g. a path counter of 0).
    pub not: Vec<&'static str>,
}

/// Which path carries rank 0's messages in a run of [`client_programs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Paths {
    /// `GASNET_SUPERNODE_MAXSIZE=1`: the provider carries everything.
    Provider,
    /// Every rank on one host with the shared-memory path on (the
    /// default): nothing goes through the provider.
    Shared,
    /// Ranks 0 and 1 share a host with the path on, others are elsewhere:
    /// rank 0 uses both, and its RMA peer (rank 1) is reached by copies.
    Mixed,
}

/// The client programs, each over `n` ranks: `gex-am core`, `flood` and
/// `longs`,
/// `gex-rma all` and the examples `am_ring`, `gups`, `stencil` and
/// `long_gather`, with the
/// summary lines of the `tests` and `gex-examples` tests (`tests/tests/am.rs`,
/// `rma.rs`, `examples/tests/examples.rs`) for `n` ranks; the path counters
/// rank 0 prints must show `paths`.
pub fn client_programs(n: usize, paths: Paths) -> Vec<ClientRun> {
    let run = ClientRun::new;
    let core = run(
        "gex-am",
        &["core"],
        "gex-am core: ok: 162 request/reply pairs checked".into(),
    );
    let core = match paths {
        // Both Long paths (inline and RMA) taken, nothing shared.
        Paths::Provider => ClientRun {
            not: vec!["long_inline=0 ", "long_rma=0 "],
            also: vec!["shared=0".into()],
            ..core
        },
        Paths::Shared => ClientRun {
            also: vec!["injected=0 buffered=0 shared=".into()],
            not: vec!["shared=0"],
            ..core
        },
        Paths::Mixed => ClientRun {
            not: vec!["injected=0 buffered=0", "shared=0"],
            ..core
        },
    };
    let rma = run(
        "gex-rma",
        &["all"],
        "gex-rma all: ok: 189 put/get steps of sizes 1 B..4 MiB checked on both sides, \
         500 NB puts and 1000 NBI operations synced in one call, 20000 small NBI puts \
         (1..256 bytes) checked at their target; NB_PUT_INJECT="
            .into(),
    );
    let rma = match paths {
        // Every put path (inject, bounce buffer, blocking, aggregated)
        // taken.
        Paths::Provider => ClientRun {
            not: vec![
                "NB_PUT_INJECT=0 ",
                "NB_PUT_BOUNCE=0 ",
                "NB_PUT_BLOCK=0 ",
                "NB_PUT_AGGREGATE=0 ",
            ],
            also: vec!["RMA_SHARED=0".into()],
            ..rma
        },
        // Rank 1 is reached by copies: no provider put path.
        Paths::Shared | Paths::Mixed => ClientRun {
            also: vec![
                "NB_PUT_INJECT=0 NB_PUT_BOUNCE=0 NB_PUT_BLOCK=0 NB_PUT_AGGREGATE=0 PUT_BATCHES=0 \
                 RMA_SHARED="
                    .into(),
            ],
            not: vec!["RMA_SHARED=0"],
            ..rma
        },
    };
    vec![
        core,
        run(
            "gex-am",
            &["flood", "20000", "2000"],
            format!(
                "gex-am flood: ok: {} shorts and {} mediums of 8192 bytes from {n} ranks arrived exactly once",
                20000 * n,
                2000 * n
            ),
        ),
        // Longs above the packing threshold to every rank at once: in one
        // message where the provider's profile says so (tcp;ofi_rxm),
        // copies within a supernode.
        run(
            "gex-am",
            &["longs", "40"],
            format!(
                "gex-am longs: ok: {} Long requests of 8296 bytes and their Long replies arrived exactly once per rank",
                40 * (n - 1)
            ),
        ),
        rma,
        run(
            "example-am_ring",
            &["50"],
            format!(
                "am_ring: ok: 50 laps around {n} ranks, {} hops, trail checked",
                50 * n
            ),
        ),
        ClientRun {
            also: vec![format!(
                "restored the table; {} fetch-and-adds by AM sum correctly",
                5000 * n
            )],
            ..run(
                "example-gups",
                &["5000"],
                format!("gups: ok: {} XOR updates by AM (", 2 * 5000 * n),
            )
        },
        run(
            "example-stencil",
            &["500", "100"],
            format!(
                "stencil: ok: {} cells on {n} ranks, 100 steps, matches the serial result",
                500 * n
            ),
        ),
        run(
            "example-long_gather",
            &["16", "5000"],
            format!(
                "long_gather: ok: {} Longs of 5000 bytes from {n} ranks, checked in the handler and in the segment",
                16 * n
            ),
        ),
    ]
}

/// The extended-API programs over `n` ranks on tcp;ofi_rxm named in full
/// (whose endpoints then offer FI_ATOMIC, so atomic domains are native):
/// `gex-coll reduce`, `user`, `teams` and `cache`,
/// `gex-atomics all` and `fadd`, `gex-vis all`, with the summary lines of
/// `tests/tests/coll.rs`, `atomics.rs` and `vis.rs` for `n` ranks. The
/// collective cache counters must show `paths`: chunks copied to the
/// ranks of this host, none written by RMA (`auto` on tcp), and board
/// posts only when the whole team shares memory.
pub fn extended_programs(n: usize, paths: Paths) -> Vec<ClientRun> {
    let run = ClientRun::new;
    let cache = run(
        "gex-coll",
        &["cache"],
        "gex-coll cache: ok: 45 collectives inside and beyond the collective cache checked, \
         an unwaited event flushed;"
            .into(),
    );
    let cache = match paths {
        Paths::Provider => ClientRun {
            also: vec!["COLL_CACHE_LOCAL=0 COLL_CACHE_RMA=0 COLL_BOARD=0".into()],
            ..cache
        },
        Paths::Shared => ClientRun {
            also: vec![" COLL_CACHE_RMA=0 ".into()],
            not: vec!["COLL_CACHE_LOCAL=0 ", "COLL_BOARD=0"],
            ..cache
        },
        Paths::Mixed => ClientRun {
            also: vec![" COLL_CACHE_RMA=0 COLL_BOARD=0".into()],
            not: vec!["COLL_CACHE_LOCAL=0 "],
            ..cache
        },
    };
    vec![
        run(
            "gex-coll",
            &["reduce"],
            "gex-coll reduce: ok: 88 reduce-to-one + reduce-to-all checks over 44 operator x \
             type pairs exact"
                .into(),
        ),
        run(
            "gex-coll",
            &["user"],
            format!(
                "gex-coll user: ok: non-commutative user reduction of 600 2x2 matrices equals \
                 the product in rank order (not the reverse); commutative user sum {}",
                n * (n + 1) / 2
            ),
        ),
        run(
            "gex-coll",
            &["teams"],
            "gex-coll teams: ok: odd and even teams ran 20 rounds of broadcast + allreduce \
             concurrently with world allreduces; rank translation checked"
                .into(),
        ),
        cache,
        run(
            "gex-atomics",
            &["all"],
            "gex-atomics all: ok: 150 operation x type checks per rank (i32 u32 i64 u64 f32 \
             f64 by native native native native native native)"
                .into(),
        ),
        run(
            "gex-atomics",
            &["fadd", "2000"],
            format!(
                "gex-atomics fadd: ok: {n} ranks x 2000 fetch-and-adds summed to {} (native)",
                2000 * n
            ),
        ),
        run(
            "gex-vis",
            &["all"],
            "gex-vis all: ok: 6 VIS put/get pairs per rank (vector, indexed with few large and \
             many small pieces; strided 3-D sub-block) checked"
                .into(),
        ),
    ]
}

impl ClientRun {
    /// `program args` whose rank 0 prints a line starting with `want`.
    pub fn new(program: &'static str, args: &[&str], want: String) -> ClientRun {
        ClientRun {
            program,
            args: args.iter().map(|a| a.to_string()).collect(),
            want,
            also: Vec::new(),
            not: Vec::new(),
        }
    }

    /// `<program> <args> <token>` for the launcher's command line.
    pub fn command(&self, token: &str) -> Vec<String> {
        let mut v = vec![example_arg(self.program)];
        v.extend(self.args.iter().cloned());
        v.push(token.to_string());
        v
    }

    /// What the run is called in failure messages.
    pub fn name(&self) -> String {
        format!("{} {}", self.program, self.args.join(" "))
    }

    /// The job exited 0, rank 0 printed the success line once (with what
    /// it must and must not contain), and the lead rank's provider warning
    /// names `provider` (e.g. `tcp;ofi_rxm provider (veth0)`). A failure
    /// message carries the job's whole output.
    pub fn check(&self, what: &str, d: &Done, provider: &str) {
        let all = || {
            format!(
                "{what}: {}: exit code {:?}, signal {:?}, {:?}\n--- stdout\n{}\n--- stderr\n{}",
                self.name(),
                d.code,
                d.signal,
                d.elapsed,
                d.out_text(),
                d.err_text()
            )
        };
        assert_eq!(d.code, Some(0), "{}", all());
        let lines: Vec<&String> = d.out.iter().filter(|l| l.starts_with(&self.want)).collect();
        assert_eq!(
            lines.len(),
            1,
            "want one line starting {:?}; {}",
            self.want,
            all()
        );
        for a in &self.also {
            assert!(lines[0].contains(a.as_str()), "want {a:?}; {}", all());
        }
        for n in &self.not {
            assert!(!lines[0].contains(n), "unwanted {n:?}; {}", all());
        }
        let warning = format!("WARNING: ofi-conduit is using the {provider}");
        assert!(
            d.err.iter().any(|l| l.starts_with(&warning)),
            "want the warning {warning:?}; {}",
            all()
        );
    }
}

/// The shm provider's objects in /dev/shm (`<pid>:<uid>:<n>`), sorted.
pub fn shm_objects() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| {
                    let p: Vec<&str> = n.split(':').collect();
                    p.len() == 3 && p.iter().all(|x| x.parse::<u32>().is_ok())
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
