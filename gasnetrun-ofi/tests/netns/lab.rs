//! The network-namespace "hosts" of the netns tests: a hub namespace with
//! a bridge, one namespace per host with `veth0` on it (10.231.0.N/24) and
//! an sshd of its own (throwaway keys); all removed on drop.

use super::common::*;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const DEADLINE: Duration = Duration::from_secs(120);
const SUBNET: &str = "10.231.0";

pub fn run(what: &str, cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!(
            "{what}: cannot run {cmd:?}: {e}; this test needs root and iproute2 \
             (apt-get install iproute2 openssh-server)"
        )
    });
    assert!(
        out.status.success(),
        "{what}: {cmd:?} failed ({}): {}; this test needs root (CAP_NET_ADMIN) and iproute2",
        out.status,
        String::from_utf8_lossy(&out.stderr).trim()
    );
}

pub fn ip(args: &[&str]) -> Command {
    let mut c = Command::new("ip");
    c.args(args);
    c
}

/// The namespaces, their sshds and the key directory; all removed on drop.
pub struct Lab {
    hosts: usize,
    tag: String,
    made: Vec<String>,
    sshd: Vec<Child>,
    dir: PathBuf,
}

impl Lab {
    pub fn ns(&self, h: usize) -> String {
        format!("{}{}", self.tag, (b'a' + h as u8) as char)
    }
    pub fn hub(&self) -> String {
        format!("{}hub", self.tag)
    }
    pub fn addr(h: usize) -> String {
        format!("{SUBNET}.{}", h + 1)
    }

    pub fn add_ns(&mut self, name: &str) {
        run(
            "creating a network namespace",
            &mut ip(&["netns", "add", name]),
        );
        self.made.push(name.to_string());
        run(
            "bringing lo up",
            &mut ip(&["-n", name, "link", "set", "lo", "up"]),
        );
    }

    /// Three hosts.
    pub fn new() -> Lab {
        Lab::with_hosts(3)
    }

    pub fn with_hosts(hosts: usize) -> Lab {
        let tag = format!("gx{}", std::process::id());
        let dir = std::env::temp_dir().join(format!("netns-lab-{}", std::process::id()));
        let mut lab = Lab {
            hosts,
            tag,
            made: Vec::new(),
            sshd: Vec::new(),
            dir,
        };
        let hub = lab.hub();
        lab.add_ns(&hub);
        run(
            "creating the bridge",
            &mut ip(&["-n", &hub, "link", "add", "br0", "type", "bridge"]),
        );
        run(
            "bridge up",
            &mut ip(&["-n", &hub, "link", "set", "br0", "up"]),
        );
        for h in 0..lab.hosts {
            let ns = lab.ns(h);
            lab.add_ns(&ns);
            let port = format!("p{h}");
            run(
                "creating a veth pair",
                &mut ip(&[
                    "-n", &hub, "link", "add", &port, "type", "veth", "peer", "name", "veth0",
                    "netns", &ns,
                ]),
            );
            run(
                "attaching the veth to the bridge",
                &mut ip(&["-n", &hub, "link", "set", &port, "master", "br0", "up"]),
            );
            let cidr = format!("{}/24", Lab::addr(h));
            run(
                "addressing veth0",
                &mut ip(&["-n", &ns, "addr", "add", &cidr, "dev", "veth0"]),
            );
            run(
                "veth0 up",
                &mut ip(&["-n", &ns, "link", "set", "veth0", "up"]),
            );
        }
        lab.start_sshds();
        lab
    }

    pub fn start_sshds(&mut self) {
        let sshd = "/usr/sbin/sshd";
        assert!(
            Path::new(sshd).exists(),
            "{sshd} not found: install openssh-server"
        );
        let _ = std::fs::remove_dir_all(&self.dir);
        std::fs::create_dir_all(&self.dir).unwrap();
        let _ = std::fs::create_dir_all("/run/sshd");
        for k in ["host_key", "client_key"] {
            run(
                "making throwaway ssh keys",
                Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-f"])
                    .arg(self.dir.join(k)),
            );
        }
        std::fs::copy(
            self.dir.join("client_key.pub"),
            self.dir.join("authorized_keys"),
        )
        .unwrap();
        let d = self.dir.display();
        for h in 0..self.hosts {
            let conf = format!(
                "Port 22\nListenAddress {}\nHostKey {d}/host_key\nPermitRootLogin yes\n\
                 AuthorizedKeysFile {d}/authorized_keys\nStrictModes no\nUsePAM no\n\
                 PidFile {d}/pid{h}\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nLogLevel ERROR\n",
                Lab::addr(h)
            );
            let cf = self.dir.join(format!("sshd_config{h}"));
            std::fs::write(&cf, conf).unwrap();
            let child = ip(&["netns", "exec", &self.ns(h), sshd, "-D", "-e", "-f"])
                .arg(&cf)
                .stdin(Stdio::null())
                .stderr(std::fs::File::create(self.dir.join(format!("sshd{h}.log"))).unwrap())
                .spawn()
                .unwrap_or_else(|e| panic!("cannot start sshd in {}: {e}", self.ns(h)));
            self.sshd.push(child);
        }
        // Wait until each sshd listens (checked inside its namespace).
        let end = Instant::now() + Duration::from_secs(10);
        for h in 0..self.hosts {
            loop {
                let out = ip(&["netns", "exec", &self.ns(h), "ss", "-Hltn", "sport = :22"])
                    .output()
                    .expect("running ss (iproute2)");
                if !String::from_utf8_lossy(&out.stdout).trim().is_empty() {
                    break;
                }
                if let Ok(Some(st)) = self.sshd[h].try_wait() {
                    panic!(
                        "sshd in {} exited ({st}): {}",
                        self.ns(h),
                        std::fs::read_to_string(self.dir.join(format!("sshd{h}.log")))
                            .unwrap_or_default()
                    );
                }
                assert!(
                    Instant::now() < end,
                    "sshd in {} did not listen within 10 s",
                    self.ns(h)
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }

    pub fn ssh_options(&self) -> String {
        format!(
            "-i {} -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR -o ConnectTimeout=10",
            self.dir.join("client_key").display()
        )
    }

    pub fn servers(&self) -> String {
        (0..self.hosts).map(Lab::addr).collect::<Vec<_>>().join(" ")
    }

    /// `gasnetrun-ofi args...` in the first host's namespace, ssh spawner.
    pub fn launch(&self, t: &str, args: &[&str], envs: &[(&str, &str)]) -> Done {
        self.start(t, args, envs).wait(DEADLINE)
    }

    /// [`Lab::launch`] without waiting.
    pub fn start(&self, t: &str, args: &[&str], envs: &[(&str, &str)]) -> Job {
        let mut cmd = ip(&["netns", "exec", &self.ns(0)]);
        cmd.arg(launcher()).args(args);
        cmd.env("GASNET_SSH_SERVERS", self.servers())
            .env("GASNET_SSH_OPTIONS", self.ssh_options())
            .env("GASNET_OFI_BOOTSTRAP_HOST", Lab::addr(0))
            .env("GASNET_OFI_SPAWNER", "ssh")
            .envs(envs.iter().copied());
        Job::start_cmd(t, cmd)
    }

    /// Take host `h`'s link down (its port on the hub's bridge): a
    /// partition, no connection closed.
    pub fn cut(&self, h: usize) {
        run(
            "taking a host's link down",
            &mut ip(&["-n", &self.hub(), "link", "set", &format!("p{h}"), "down"]),
        );
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for c in &mut self.sshd {
            let _ = c.kill();
            let _ = c.wait();
        }
        // Deleting a namespace deletes its interfaces (and the veth peers).
        for ns in self.made.iter().rev() {
            let _ = ip(&["netns", "del", ns]).output();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
