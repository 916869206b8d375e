//! The launcher's side of the agents' heartbeats (`crate::heartbeat`):
//! every period a heartbeat to each agent, and a host whose agent has sent
//! nothing for the silence limit while its ranks run is unreachable: the
//! job ends naming its ranks.

use super::Job;
use crate::heartbeat::{silence_limit, PERIOD};
use crate::launch::plan::{ranks_of_host, ranks_text};
use bootstrap::wire::{write_frame, Msg, RankEnd};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use std::time::Instant;

impl Job {
    /// Send the heartbeats that are due and give up on silent hosts.
    pub(super) fn liveness(&mut self, now: Instant) {
        if now >= self.next_beat {
            self.next_beat = now + PERIOD;
            for h in 0..self.hosts.len() {
                if !self.agent_open[h] {
                    continue;
                }
                if let Some(s) = &mut self.agents[h] {
                    let _ = write_frame(s, &Msg::Heartbeat.encode());
                }
            }
        }
        if self.teardown.is_some() {
            return;
        }
        let limit = silence_limit(self.timeout);
        for h in 0..self.hosts.len() {
            let Some(at) = self.heard[h] else { continue };
            if !self.agent_open[h] || now.saturating_duration_since(at) < limit {
                continue;
            }
            let waiting: Vec<usize> = ranks_of_host(&self.host_of, h)
                .into_iter()
                .filter(|&r| self.ends[r].is_none())
                .collect();
            if waiting.is_empty() {
                continue;
            }
            gex_env::eprintln_whole!(
                "gasnetrun-ofi: host {h} ({}) sent nothing for {:.1} s (the job's exit timeout, \
                 GASNET_EXITTIMEOUT): {} unreachable; terminating the job",
                self.hosts[h],
                now.saturating_duration_since(at).as_secs_f64(),
                ranks_text(&waiting)
            );
            self.code.get_or_insert(1);
            self.start_teardown(Signal::SIGTERM);
            // Nothing will come from that host: its ranks count as lost
            // now, and its ssh session is ended (its agent, cut off, ends
            // its ranks itself once the launcher has been silent as long).
            self.agent_open[h] = false;
            self.ranks_lost_with_ssh(h, RankEnd::Signal(Signal::SIGKILL as i32));
            if let Some(pid) = self.ssh_pid[h] {
                let _ = kill(Pid::from_raw(pid as i32), Signal::SIGKILL);
            }
            return;
        }
    }
}
