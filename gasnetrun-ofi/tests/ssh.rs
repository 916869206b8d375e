//! Tests of the ssh spawner against a real OpenSSH server on 127.0.0.1,
//! started for each test with throwaway keys and torn down afterwards.
//! If sshd cannot be started the tests FAIL (install openssh-server).

mod common;

use common::*;
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const DEADLINE: Duration = Duration::from_secs(60);

struct Sshd {
    dir: PathBuf,
    port: u16,
    child: Child,
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {cmd:?}: {e}; install openssh-server and openssh-client")
    });
    assert!(out.status.success(), "{cmd:?} failed: {out:?}");
}

impl Sshd {
    fn start(name: &str) -> Sshd {
        let sshd = "/usr/sbin/sshd";
        assert!(
            std::path::Path::new(sshd).exists(),
            "{sshd} not found: install openssh-server (apt-get install openssh-server)"
        );
        let dir = std::env::temp_dir().join(format!("sshd-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // sshd refuses to start without its privilege-separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        for k in ["host_key", "client_key"] {
            run(Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                .arg(dir.join(k)));
        }
        std::fs::copy(dir.join("client_key.pub"), dir.join("authorized_keys")).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let d = dir.display();
        let conf = format!(
            "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPermitRootLogin yes\n\
             AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\nPidFile {d}/pid\n\
             PasswordAuthentication no\nKbdInteractiveAuthentication no\nLogLevel ERROR\n"
        );
        std::fs::write(dir.join("sshd_config"), conf).unwrap();
        let child = Command::new(sshd)
            .args(["-D", "-e", "-f"])
            .arg(dir.join("sshd_config"))
            .args(["-p", &port.to_string()])
            .stdin(Stdio::null())
            .stderr(std::fs::File::create(dir.join("sshd.log")).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {sshd}: {e}; install openssh-server"));
        let mut s = Sshd { dir, port, child };
        let end = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Ok(Some(st)) = s.child.try_wait() {
                panic!(
                    "sshd exited ({st}) at start: {}; is openssh-server installed and usable?",
                    std::fs::read_to_string(s.dir.join("sshd.log")).unwrap_or_default()
                );
            }
            assert!(
                Instant::now() < end,
                "sshd did not listen on port {port} within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        s
    }

    /// `GASNET_SSH_OPTIONS` for this server.
    fn options(&self) -> String {
        format!(
            "-p {} -i {} -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
            self.port,
            self.dir.join("client_key").display()
        )
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn bc() -> String {
    bootcheck().to_string_lossy().into_owned()
}

#[test]
fn four_ranks_over_two_ssh_hosts_with_env() {
    let _g = serial();
    let sshd = Sshd::start("four");
    let t = token("ssh4");
    let b = bc();
    let opts = sshd.options();
    let d = Job::start(
        &t,
        &[
            "-n",
            "4",
            "-E",
            "MY_EXTRA",
            "--",
            &b,
            &t,
            "check",
            "2",
            "GASNET_FOO=remote $value; 'q'",
            "FI_BAR=2",
            "MY_EXTRA=3",
            "NOT_PASSED=!",
        ],
        &[
            ("GASNET_SSH_SERVERS", "127.0.0.1 127.0.0.1"),
            ("GASNET_SSH_OPTIONS", &opts),
            ("GASNET_FOO", "remote $value; 'q'"),
            ("FI_BAR", "2"),
            ("MY_EXTRA", "3"),
            ("NOT_PASSED", "1"),
        ],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(0), "stderr: {}", d.err_text());
    for r in 0..4 {
        let want = format!("bootcheck rank {r} ok host {} local {}/2", r / 2, r % 2);
        assert!(d.out.contains(&want), "missing {want:?} in {:?}", d.out);
    }
}

#[test]
fn ssh_arguments_reach_the_ranks_intact() {
    let _g = serial();
    let sshd = Sshd::start("args");
    let t = token("sshargs");
    let b = bc();
    let opts = sshd.options();
    let tricky = [
        "a b",
        "$HOME;x",
        "q'\"z",
        "l1\nl2",
        "",
        "`id` && echo",
        "\\",
    ];
    let mut args = vec!["-spawner=ssh", "-n", "2", "--", &b, &t, "args"];
    args.extend(tricky.iter());
    let d = Job::start(
        &t,
        &args,
        &[
            ("GASNET_SSH_SERVERS", "127.0.0.1"),
            ("GASNET_SSH_OPTIONS", &opts),
        ],
    )
    .wait(DEADLINE);
    d.assert_args_intact(&tricky, 2);
}

#[test]
fn ssh_exit_code_and_teardown() {
    let _g = serial();
    let sshd = Sshd::start("exit");
    let t = token("sshexit");
    let b = bc();
    let opts = sshd.options();
    let d = Job::start(
        &t,
        &["-n", "4", &b, &t, "exit", "3", "3"],
        &[
            ("GASNET_SSH_SERVERS", "127.0.0.1,127.0.0.1"),
            ("GASNET_SSH_OPTIONS", &opts),
        ],
    )
    .wait(DEADLINE);
    assert_eq!(d.code, Some(3), "stderr: {}", d.err_text());
    assert!(
        d.err_text()
            .contains("rank 3 on host 127.0.0.1 exited with code 3"),
        "{}",
        d.err_text()
    );
}

#[test]
fn ssh_secret_is_on_no_command_line_and_sigterm_ends_everything() {
    let _g = serial();
    let sshd = Sshd::start("secret");
    let t = token("sshsecret");
    let b = bc();
    let opts = sshd.options();
    let mut job = Job::start(
        &t,
        &["-v", "-n", "2", &b, &t, "hang"],
        &[
            ("GASNET_SSH_SERVERS", "127.0.0.1"),
            ("GASNET_SSH_OPTIONS", &opts),
        ],
    );
    let ready = job.wait_stdout(2, DEADLINE, |l| l.contains("] ready "));
    let pid = ready[0].rsplit(' ').next().unwrap().to_string();
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap();
    let secret = environ
        .split(|&c| c == 0)
        .find_map(|kv| kv.strip_prefix(b"GASNET_OFI_BOOTSTRAP_SECRET="))
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .expect("the rank has the secret in its environment");
    assert_eq!(secret.len(), 64);
    let shown = processes_with(&secret);
    assert!(
        shown.is_empty(),
        "the secret is on the command line of {shown:?}"
    );
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.code, Some(128 + 15), "stderr: {}", d.err_text());
    assert_eq!(
        d.out
            .iter()
            .filter(|l| l.ends_with("bootcheck got SIGTERM"))
            .count(),
        2,
        "{:?}",
        d.out
    );
}

#[test]
fn ssh_launcher_killed_leaves_no_remote_rank() {
    let _g = serial();
    let sshd = Sshd::start("orphan");
    let t = token("sshorphan");
    let b = bc();
    let opts = sshd.options();
    let mut job = Job::start(
        &t,
        &["-n", "2", &b, &t, "hang"],
        &[
            ("GASNET_SSH_SERVERS", "127.0.0.1"),
            ("GASNET_SSH_OPTIONS", &opts),
        ],
    );
    job.wait_stdout(2, DEADLINE, |l| l.starts_with("ready "));
    // SIGKILL the launcher alone: ssh dies with it (PDEATHSIG), the agent
    // sees its stdin close and kills its ranks.
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(job.child.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
    let d = job.wait(DEADLINE);
    assert_eq!(d.signal, Some(9));
}

/// A "host" whose ssh port accepts connections and never says a word (a
/// hung sshd, a host behind a black hole): it holds every connection until
/// dropped.
struct SilentHost {
    port: u16,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

impl SilentHost {
    fn start() -> SilentHost {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        l.set_nonblocking(true).unwrap();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let s2 = stop.clone();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            while !s2.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((c, _)) = l.accept() {
                    held.push(c);
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        });
        SilentHost { port, stop }
    }
}

impl Drop for SilentHost {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

/// A host that never answers ends the job within seconds naming it: by
/// ssh's ConnectTimeout (the launcher's default is 10 s; 2 s here), or by
/// the launcher's start-up deadline (GASNET_SSH_STARTUP_TIMEOUT) when ssh
/// itself would wait longer. Nothing of the job survives.
#[test]
fn ssh_host_that_never_answers_ends_the_job_naming_it() {
    let _g = serial();
    let host = SilentHost::start();
    for (ssh_timeout, startup, want) in [
        (
            "2",
            "30",
            "gasnetrun-ofi: the ssh session to host 0 (127.0.0.1) exited with code 255 before \
             ranks 0-1 ended (started or not); terminating the job",
        ),
        (
            "60",
            "2",
            "gasnetrun-ofi: host(s) 0 (127.0.0.1) did not answer within 2.0s of the start (the \
             ssh session or its agent never reported; GASNET_SSH_STARTUP_TIMEOUT); terminating \
             the job",
        ),
    ] {
        let t = token("silent");
        let opts = format!(
            "-p {} -o ConnectTimeout={ssh_timeout} -o SetEnv=TOKEN={t}",
            host.port
        );
        let d = Job::start(
            &t,
            &["-n", "2", "-spawner=ssh", "true", &t],
            &[
                ("GASNET_SSH_SERVERS", "127.0.0.1"),
                ("GASNET_SSH_OPTIONS", &opts),
                ("GASNET_SSH_STARTUP_TIMEOUT", startup),
            ],
        )
        .wait(DEADLINE);
        assert_ne!(d.code, Some(0), "{:?}", d.err);
        assert!(d.err.iter().any(|l| l == want), "{:?}", d.err);
        assert!(
            d.elapsed < Duration::from_secs(8),
            "took {:?}: {:?}",
            d.elapsed,
            d.err
        );
        assert_no_survivors(&t);
    }
}

/// Environment values that are not UTF-8 reach remote ranks byte for byte,
/// as local ones (a propagated `GASNET_*` variable and one named by `-E`):
/// the ssh frame carried them read lossily, U+FFFD for each bad byte.
#[test]
fn ssh_environment_values_reach_the_ranks_byte_for_byte() {
    use std::os::unix::ffi::OsStrExt;
    let _g = serial();
    let sshd = Sshd::start("envbytes");
    let t = token("sshenv");
    let opts = sshd.options();
    let out = Command::new(launcher())
        .args([
            "-spawner=ssh",
            "-n",
            "1",
            "-E",
            "MY_BYTES",
            "--",
            "sh",
            "-c",
        ])
        .arg("printf '%s|%s' \"$GASNET_BYTES\" \"$MY_BYTES\"")
        .arg(&t)
        .env("GASNET_SSH_SERVERS", "127.0.0.1")
        .env("GASNET_SSH_OPTIONS", &opts)
        .env("GASNET_BYTES", std::ffi::OsStr::from_bytes(b"a\xffb"))
        .env("MY_BYTES", std::ffi::OsStr::from_bytes(b"c\xfed"))
        .stdin(Stdio::null())
        .output()
        .expect("run gasnetrun-ofi");
    assert_no_survivors(&t);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // The launcher ends a last line without a newline with one.
    assert_eq!(out.stdout, b"a\xffb|c\xfed\n", "{out:?}");
}
