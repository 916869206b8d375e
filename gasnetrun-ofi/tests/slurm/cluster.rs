//! The private one-node Slurm cluster of the Slurm test: munged,
//! slurmctld and slurmd started on free ports with a configuration for
//! this host, jobs run under it, and the teardown that checks nothing of
//! it is left.

use super::common::{token, Job};
use super::host::{find_exe, free_ports, kill, processes_with_env, scrubbed, shm_names};
use std::collections::BTreeSet;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// From starting the daemons to an idle node.
const UP_DEADLINE: Duration = Duration::from_secs(30);
/// A daemon's orderly exit after SIGTERM.
const DOWN_GRACE: Duration = Duration::from_secs(5);

/// The munge daemon, slurmctld and slurmd of one private cluster.
pub(crate) struct Cluster {
    dir: PathBuf,
    conf: PathBuf,
    node: String,
    daemons: Vec<(&'static str, Child)>,
    /// /dev/shm before the cluster started.
    shm_before: BTreeSet<String>,
}

impl Cluster {
    pub(crate) fn start() -> Cluster {
        assert!(
            nix::unistd::geteuid().is_root(),
            "this test runs slurmctld and slurmd as root (SlurmUser=root): run it as root"
        );
        let munged = find_exe("munged");
        let slurmctld = find_exe("slurmctld");
        let slurmd = find_exe("slurmd");
        find_exe("srun");
        find_exe("sinfo");
        let node = nix::unistd::gethostname()
            .expect("gethostname")
            .to_string_lossy()
            .split('.')
            .next()
            .unwrap()
            .to_string();
        let dir = std::env::temp_dir().join(format!("slurm-lab-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::DirBuilder::new()
            .mode(0o755)
            .create(&dir)
            .unwrap_or_else(|e| panic!("creating {}: {e}", dir.display()));
        for d in ["state", "spool", "tmp"] {
            std::fs::create_dir(dir.join(d)).unwrap();
        }
        let mut c = Cluster {
            conf: dir.join("slurm.conf"),
            dir,
            node,
            daemons: Vec::new(),
            shm_before: shm_names(),
        };

        // munge with a key and socket of its own.
        let mut key = vec![0u8; 1024];
        std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut key)
            .unwrap();
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(c.dir.join("munge.key"))
            .and_then(|mut f| f.write_all(&key))
            .unwrap();
        let socket = c.dir.join("munge.sock");
        let d = c.dir.display().to_string();
        let mut m = Command::new(munged);
        m.args([
            "-F",
            "-f",
            &format!("--socket={}", socket.display()),
            &format!("--key-file={d}/munge.key"),
            &format!("--log-file={d}/munged.log"),
            &format!("--pid-file={d}/munged.pid"),
            &format!("--seed-file={d}/munged.seed"),
        ]);
        c.spawn("munged", m);
        c.wait_until("munged's socket", Duration::from_secs(10), || {
            socket.exists()
        });

        // slurm.conf for this host: its real CPU count, everything in `dir`.
        let ports = free_ports(2);
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let node = &c.node;
        let conf = format!(
            "ClusterName=gasnetlab\n\
             SlurmctldHost={node}(127.0.0.1)\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             SlurmctldPort={}\n\
             SlurmdPort={}\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={}\n\
             StateSaveLocation={d}/state\n\
             SlurmdSpoolDir={d}/spool\n\
             TmpFS={d}/tmp\n\
             SlurmctldPidFile={d}/slurmctld.pid\n\
             SlurmdPidFile={d}/slurmd.pid\n\
             SlurmctldLogFile={d}/slurmctld.log\n\
             SlurmdLogFile={d}/slurmd.log\n\
             PlugStackConfig={d}/plugstack.conf\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             SchedulerType=sched/builtin\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_CPU\n\
             MpiDefault=pmix\n\
             ReturnToService=2\n\
             MailProg=/bin/true\n\
             SlurmctldDebug=info\n\
             SlurmdDebug=info\n\
             NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN\n\
             PartitionName=lab Nodes={node} Default=YES MaxTime=INFINITE State=UP\n",
            ports[0],
            ports[1],
            socket.display(),
        );
        std::fs::write(&c.conf, conf).unwrap();
        std::fs::write(c.dir.join("plugstack.conf"), "").unwrap();

        let mut ctld = c.command(&slurmctld);
        ctld.args(["-D", "-i"]);
        c.spawn("slurmctld", ctld);
        let mut sd = c.command(&slurmd);
        sd.args(["-D", "-N", &c.node]);
        c.spawn("slurmd", sd);

        // The node registers and becomes idle.
        let end = Instant::now() + UP_DEADLINE;
        loop {
            let mut s = c.command(Path::new("sinfo"));
            s.args(["-h", "-o", "%t", "-n", &c.node]);
            let t = token("sinfo");
            let d = Job::start_cmd(&t, s).wait(Duration::from_secs(15));
            let last = format!("{} {}", d.out_text(), d.err_text());
            if d.code == Some(0) && d.out_text().trim() == "idle" {
                break;
            }
            c.check_daemons();
            if Instant::now() > end {
                panic!(
                    "the node did not become idle within {UP_DEADLINE:?} (sinfo: {last:?}){}",
                    c.logs()
                );
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        c
    }

    /// A command with this cluster's configuration and a clean environment.
    fn command(&self, program: &Path) -> Command {
        let mut cmd = Command::new(program);
        scrubbed(&mut cmd);
        cmd.env("SLURM_CONF", &self.conf);
        cmd
    }

    /// Start a daemon in the foreground, its output to `<name>.out`; it
    /// gets SIGTERM if this thread ends without tearing it down.
    fn spawn(&mut self, name: &'static str, mut cmd: Command) {
        let out = std::fs::File::create(self.dir.join(format!("{name}.out"))).unwrap();
        cmd.stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out);
        // SAFETY: the closure only calls prctl, which is async-signal-safe,
        // between fork and exec.
        unsafe {
            cmd.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name} ({cmd:?}): {e}"));
        self.daemons.push((name, child));
    }

    /// Every daemon still runs (else fail with the logs).
    fn check_daemons(&mut self) {
        let mut dead = Vec::new();
        for (name, child) in &mut self.daemons {
            if let Ok(Some(st)) = child.try_wait() {
                dead.push(format!("{name} exited ({st})"));
            }
        }
        if !dead.is_empty() {
            panic!("{}{}", dead.join(", "), self.logs());
        }
    }

    fn wait_until(&mut self, what: &str, within: Duration, ok: impl Fn() -> bool) {
        let end = Instant::now() + within;
        while !ok() {
            self.check_daemons();
            assert!(
                Instant::now() < end,
                "{what}: not ready within {within:?}{}",
                self.logs()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The daemons' logs (their last lines), for failure messages.
    fn logs(&self) -> String {
        let mut s = String::new();
        for f in [
            "munged.log",
            "munged.out",
            "slurmctld.log",
            "slurmctld.out",
            "slurmd.log",
            "slurmd.out",
        ] {
            let text = std::fs::read_to_string(self.dir.join(f)).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            let tail = &lines[lines.len().saturating_sub(15)..];
            if !tail.is_empty() {
                s.push_str(&format!("\n--- {f}:\n{}", tail.join("\n")));
            }
        }
        s
    }

    /// `srun` (or the launcher) as a job of this cluster over `provider`
    /// (shm, or tcp on the loopback device). `token` must be on every
    /// rank's command line (the programs ignore a trailing argument), so
    /// that survivors are found and killed.
    pub(crate) fn job(
        &self,
        token: &str,
        program: &Path,
        args: &[&str],
        provider: &str,
        envs: &[(&str, &str)],
    ) -> Job {
        let mut cmd = self.command(program);
        cmd.args(args)
            .env("FI_PROVIDER", provider)
            .env(
                "GASNET_OFI_DEVICE",
                if provider == "shm" { "shm" } else { "lo" },
            )
            .env("GASNET_QUIET", "1")
            .env("GASNET_EXITTIMEOUT", "30")
            .envs(envs.iter().copied());
        Job::start_cmd(token, cmd)
    }

    /// Stop the daemons (SIGTERM, SIGKILL after DOWN_GRACE), then anything
    /// else of this cluster (job steps, ranks); returns what had to be
    /// killed after the daemons were down.
    fn stop(&mut self) -> Vec<String> {
        // Reverse order of start: slurmctld may still talk to slurmd, and
        // both need munged for that.
        while let Some((_, mut child)) = self.daemons.pop() {
            kill(child.id() as i32, nix::sys::signal::Signal::SIGTERM);
            let end = Instant::now() + DOWN_GRACE;
            while matches!(child.try_wait(), Ok(None)) && Instant::now() < end {
                std::thread::sleep(Duration::from_millis(20));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        let needle = format!("SLURM_CONF={}", self.conf.display()).into_bytes();
        let mut left = Vec::new();
        let end = Instant::now() + Duration::from_secs(3);
        loop {
            let pids = processes_with_env(&needle);
            if pids.is_empty() {
                break;
            }
            if Instant::now() > end {
                for p in pids {
                    let cmd = std::fs::read(format!("/proc/{p}/cmdline")).unwrap_or_default();
                    left.push(format!(
                        "{p} {}",
                        String::from_utf8_lossy(&cmd).replace('\0', " ")
                    ));
                    kill(p, nix::sys::signal::Signal::SIGKILL);
                }
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        left
    }

    /// Shared-memory files that appeared while the cluster ran and whose
    /// owner (the shm provider names them `<pid>:<ep>:<n>`) is gone;
    /// removes them.
    fn shm_leftovers(&self) -> Vec<String> {
        let mut v = Vec::new();
        for name in shm_names().difference(&self.shm_before) {
            let Some(pid) = name.split(':').next().and_then(|p| p.parse::<u32>().ok()) else {
                continue;
            };
            if !Path::new(&format!("/proc/{pid}")).exists() {
                let _ = std::fs::remove_file(Path::new("/dev/shm").join(name));
                v.push(name.clone());
            }
        }
        v
    }

    /// Tear down and check that nothing of the cluster or its jobs is left.
    pub(crate) fn finish(mut self) {
        let left = self.stop();
        let logs = self.logs();
        assert!(
            left.is_empty(),
            "processes of the cluster outlived its daemons: {left:?}{logs}"
        );
        let shm = self.shm_leftovers();
        assert!(shm.is_empty(), "jobs left files in /dev/shm: {shm:?}");
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.stop();
        self.shm_leftovers();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
