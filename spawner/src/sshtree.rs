//! The ssh spawner's tree (`GASNET_SSH_OUT_DEGREE`, as GASNet's
//! ssh-spawner): no process starts more than `degree` ssh sessions. The
//! launcher starts the agents of hosts `0..degree`; the agent of host `h`
//! starts those of hosts `(h + 1) * degree ..= (h + 1) * degree + degree - 1`
//! (a `degree`-ary tree over the host indices, the launcher at its root).
//! Every agent still reports to the launcher on a control connection of
//! its own; an agent reports the end of each ssh session it started
//! ([`Msg::SshEnded`](bootstrap::wire::Msg::SshEnded)).

use crate::proc::{forward_output, own_group_and_pdeathsig};
use crate::SpawnError;
use bootstrap::wire::write_frame;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};

/// The variable that sets the out-degree.
pub const ENV_OUT_DEGREE: &str = "GASNET_SSH_OUT_DEGREE";

/// GASNet's default out-degree.
pub const DEFAULT_OUT_DEGREE: u64 = 32;

/// The hosts whose agents `parent` starts (`None`: the launcher).
pub fn children(parent: Option<usize>, hosts: usize, degree: usize) -> Vec<usize> {
    let first = match parent {
        None => 0,
        Some(h) => (h + 1).saturating_mul(degree),
    };
    (first..first.saturating_add(degree).min(hosts)).collect()
}

/// The host whose agent starts host `h`'s (`None`: the launcher); the
/// inverse of [`children`].
pub fn parent(h: usize, degree: usize) -> Option<usize> {
    (h >= degree).then(|| h / degree - 1)
}

/// The level of host `h` in the tree (1: started by the launcher).
pub fn level(h: usize, degree: usize) -> usize {
    match parent(h, degree) {
        None => 1,
        Some(p) => level(p, degree) + 1,
    }
}

/// How to start an agent: the ssh command's words before the host name,
/// and the remote command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshCommand {
    /// `ssh` and its options.
    pub prefix: Vec<String>,
    /// What runs on the host (`cd DIR && exec .../gasnetrun-ofi --ssh-agent`).
    pub remote_cmd: String,
}

/// Start `ssh HOST remote_cmd` with the agent's job `frame` on its stdin
/// (written from a thread: ssh may not read before it connects; the stdin
/// is then kept in `keep`, so the agent sees it close only when this
/// process ends or drops it). Its output is forwarded a line at a time.
/// Returns the ssh process's pid.
pub(crate) fn start_agent(
    ssh: &SshCommand,
    host: &str,
    frame: Vec<u8>,
    keep: &Arc<Mutex<Vec<ChildStdin>>>,
    forwarders: &mut Vec<JoinHandle<()>>,
) -> Result<u32, SpawnError> {
    let mut cmd = Command::new(&ssh.prefix[0]);
    cmd.args(&ssh.prefix[1..]).arg(host).arg(&ssh.remote_cmd);
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    own_group_and_pdeathsig(&mut cmd);
    let mut child = cmd.spawn().map_err(|e| SpawnError::Spawn {
        what: format!("{} for host {host}", ssh.prefix[0]),
        source: e,
    })?;
    forward_output(&mut child, None, forwarders);
    if let Some(mut stdin) = child.stdin.take() {
        let keep = keep.clone();
        thread::spawn(move || {
            if write_frame(&mut stdin, &frame).is_ok() {
                if let Ok(mut k) = keep.lock() {
                    k.push(stdin);
                }
            }
        });
    }
    Ok(child.id())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_host_has_one_parent_and_no_process_more_than_degree_children() {
        for hosts in 1..40 {
            for degree in 1..6 {
                let mut parent_of = vec![None; hosts];
                let mut queue = vec![None];
                while let Some(p) = queue.pop() {
                    let c = children(p, hosts, degree);
                    assert!(c.len() <= degree);
                    for h in c {
                        assert!(parent_of[h].is_none(), "{h} started twice");
                        assert_eq!(parent(h, degree), p);
                        parent_of[h] = Some(p);
                        queue.push(Some(h));
                    }
                }
                assert!(parent_of.iter().all(Option::is_some), "{hosts} {degree}");
            }
        }
    }

    #[test]
    fn six_hosts_degree_two() {
        assert_eq!(children(None, 6, 2), vec![0, 1]);
        assert_eq!(children(Some(0), 6, 2), vec![2, 3]);
        assert_eq!(children(Some(1), 6, 2), vec![4, 5]);
        assert_eq!(children(Some(2), 6, 2), Vec::<usize>::new());
        let levels: Vec<usize> = (0..6).map(|h| level(h, 2)).collect();
        assert_eq!(levels, vec![1, 1, 2, 2, 2, 2]);
        assert_eq!(children(None, 6, 32), (0..6).collect::<Vec<_>>());
        assert_eq!(level(5, 32), 1);
    }
}
