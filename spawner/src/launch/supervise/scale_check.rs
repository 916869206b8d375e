//! The start-up model ([`crate::scale`]) against the real thing: the
//! launcher's acceptor and event loop with ranks that are threads running
//! the real `TcpBootstrap` over loopback.

use super::hellos::plan;
use super::*;
use crate::launch::accept::{bind_listener, start_acceptor};
use crate::new_secret;
use crate::scale::{allgather, barrier, child_hello_len, Params};
use bootstrap::tcp::{TcpBootstrap, TreeTraffic};
use bootstrap::wire::Secret;
use bootstrap::Bootstrap;
use std::net::{IpAddr, Ipv4Addr};

/// Bytes rank `r` contributes to the test's allgather (not all equal).
fn blob(r: usize) -> usize {
    10 + r % 5
}

/// What rank `r` wrote: after `connect`, after the allgather, after the
/// barrier.
type Written = [TreeTraffic; 3];

fn rank(addr: String, secret: Secret, r: usize, n: usize) -> Result<Written, String> {
    let b = TcpBootstrap::connect(&addr, secret, r, n).map_err(|e| e.to_string())?;
    let joined = b.traffic();
    let all = b
        .allgather(&vec![r as u8; blob(r)])
        .map_err(|e| e.to_string())?;
    if (0..n).any(|s| all[s] != vec![s as u8; blob(s)]) {
        return Err(format!("rank {r}: wrong allgather result"));
    }
    let gathered = b.traffic();
    b.barrier().map_err(|e| e.to_string())?;
    let w = [joined, gathered, b.traffic()];
    b.finalize(0).map_err(|e| e.to_string())?;
    Ok(w)
}

/// Run a job of `n` thread ranks on `hosts` (named) hosts under the real
/// launcher loop; returns what each rank wrote.
fn run(n: usize, hosts: usize, radix: usize) -> Vec<Written> {
    let p = plan(n, hosts, radix);
    let listener = bind_listener(IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let secret = new_secret().unwrap();
    let (tx, rx) = mpsc::channel::<Ev>();
    start_acceptor(listener, secret, n, hosts, tx.clone()).unwrap();
    let mut job = Job::new(&p);
    for r in 0..n {
        job.procs.insert(900_000 + r as u32, Proc::Rank(r));
    }
    let launcher = thread::spawn(move || {
        job.run(rx);
        job.code
    });
    let (done_tx, done_rx) = mpsc::channel();
    for r in 0..n {
        let (addr, tx, done_tx) = (addr.clone(), tx.clone(), done_tx.clone());
        thread::spawn(move || {
            let out = rank(addr, secret, r, n);
            let end = RankEnd::Code(if out.is_ok() { 0 } else { 1 });
            let _ = done_tx.send((r, out));
            let _ = tx.send(Ev::Child {
                pid: 900_000 + r as u32,
                end,
            });
        });
    }
    drop(tx);
    let mut written = vec![[TreeTraffic::default(); 3]; n];
    for _ in 0..n {
        let (r, out) = done_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("a rank did not finish within 60 s");
        written[r] = out.unwrap_or_else(|e| panic!("rank {r}: {e}"));
    }
    assert_eq!(
        launcher.join().unwrap(),
        None,
        "the job did not end cleanly"
    );
    written
}

#[test]
fn the_model_counts_the_frames_and_bytes_of_a_real_job() {
    for (n, hosts, radix) in [(8, 1, 8), (21, 2, 3), (32, 3, 8)] {
        let written = run(n, hosts, radix);
        let mut p = Params::cluster(n, hosts);
        p.radix = radix;
        p.conduit.host_name_len = 2; // "h0", "h1", ...
        let host = p.host_of();
        let zero = vec![0.0; n];
        let hm = 4 + p.conduit.host_name_len;
        let host_map = allgather(&p, &host, &zero, &|_| hm);
        let ag = allgather(&p, &host, &zero, &blob);
        let bar = barrier(&p, &host, &zero);
        for (r, w) in written.iter().enumerate() {
            let hello = if r == 0 {
                0
            } else {
                4 + child_hello_len() as u64
            };
            let expect = [
                (
                    host_map.frames[r] + u64::from(r > 0),
                    host_map.bytes[r] + hello,
                ),
                (ag.frames[r], ag.bytes[r]),
                (bar.frames[r], bar.bytes[r]),
            ];
            let got = [
                (w[0].frames, w[0].bytes),
                (w[1].frames - w[0].frames, w[1].bytes - w[0].bytes),
                (w[2].frames - w[1].frames, w[2].bytes - w[1].bytes),
            ];
            assert_eq!(
                got, expect,
                "n={n} radix={radix} rank {r}: connect, allgather, barrier"
            );
        }
    }
}
