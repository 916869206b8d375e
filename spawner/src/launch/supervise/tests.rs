use super::*;
use crate::launch::SpawnerKind;
use std::net::{IpAddr, Ipv4Addr, TcpListener};
use std::time::Duration;

/// A job of two ranks on one ssh host whose agent is connected (the
/// stream is a real loopback connection, only written to on teardown).
fn ssh_job_with_agent() -> (Job, TcpStream) {
    let plan = Plan {
        kind: SpawnerKind::Ssh,
        n: 2,
        hosts: vec!["h0".into()],
        host_of: vec![0, 0],
        ssh: None,
        timeout: Duration::from_secs(10),
        radix: 8,
        bind_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
        env: Vec::new(),
        verbose: false,
    };
    let mut job = Job::new(&plan);
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let ours = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (theirs, _) = l.accept().unwrap();
    job.procs.insert(4242, Proc::Ssh(0));
    job.ssh_pid[0] = Some(4242);
    job.ssh_running = 1;
    job.handle(Ev::Agent {
        host: 0,
        stream: ours,
    });
    (job, theirs)
}

fn rank_exit(rank: u32) -> Ev {
    Ev::AgentMsg {
        host: 0,
        msg: Msg::RankExit {
            rank,
            end: RankEnd::Code(0),
        },
    }
}

#[test]
fn ssh_end_overtaking_the_agents_last_reports_is_not_a_lost_host() {
    // The reaper's event for the ssh process can reach the loop before
    // the agent stream's reader has passed on the ranks' exits (CI saw
    // "the ssh session ... exited with code 0 while ranks 0-1 were
    // running"): the reports that follow must still count.
    let (mut job, _peer) = ssh_job_with_agent();
    job.handle(Ev::Child {
        pid: 4242,
        end: RankEnd::Code(0),
    });
    assert_eq!(job.running, 2);
    assert!(job.teardown.is_none() && job.code.is_none());
    job.handle(rank_exit(0));
    job.handle(rank_exit(1));
    job.handle(Ev::AgentGone { host: 0 });
    assert_eq!(job.running, 0);
    assert!(job.teardown.is_none(), "an orderly end was torn down");
    assert_eq!(job.code, None);
    assert_eq!(job.ssh_running, 0);
}

#[test]
fn ranks_not_reported_when_the_agent_stream_ends_are_lost() {
    let (mut job, _peer) = ssh_job_with_agent();
    job.handle(rank_exit(0));
    job.handle(Ev::Child {
        pid: 4242,
        end: RankEnd::Code(0),
    });
    assert!(job.teardown.is_none());
    job.handle(Ev::AgentGone { host: 0 });
    assert_eq!(job.ends[1], Some(RankEnd::Code(0)));
    assert_eq!(job.running, 0);
    assert_eq!(job.code, Some(1), "a lost rank must fail the job");
    assert!(job.teardown.is_some());
}

#[test]
fn agent_stream_ending_first_lets_the_ssh_end_be_judged_at_once() {
    let (mut job, _peer) = ssh_job_with_agent();
    job.handle(Ev::AgentGone { host: 0 });
    job.handle(Ev::Child {
        pid: 4242,
        end: RankEnd::Signal(9),
    });
    assert_eq!(job.running, 0);
    assert_eq!(job.code, Some(137));
    assert!(job.teardown.is_some());
}
