//! The launcher's acceptor and event loop under many hellos: each rank
//! is welcomed once its parent said hello, at what rate, and a burst of
//! connections finds room in the listen queue.

use super::*;
use crate::launch::accept::{bind_listener, start_acceptor};
use crate::launch::SpawnerKind;
use crate::{block_placement, new_secret};
use bootstrap::tcp::tree_parent;
use bootstrap::wire::{read_frame, Secret, MAX_HELLO};
use std::net::{IpAddr, Ipv4Addr};

/// The plan of a job of `n` ranks on `hosts` hosts named `h0`, `h1`, ...
pub(super) fn plan(n: usize, hosts: usize, radix: usize) -> Plan {
    Plan {
        kind: SpawnerKind::Ssh,
        n,
        hosts: (0..hosts).map(|h| format!("h{h}")).collect(),
        host_of: block_placement(n, hosts),
        ssh: None,
        timeout: Duration::from_secs(60),
        radix,
        bind_ip: IpAddr::V4(Ipv4Addr::LOCALHOST),
        env: Vec::new(),
        verbose: false,
    }
}

/// The launcher loop alone (acceptor, events, welcomes) for `n` ranks on
/// 4 hosts, running until every rank is welcomed.
fn launcher_loop(n: usize) -> (std::net::SocketAddr, Secret, thread::JoinHandle<bool>) {
    let p = plan(n, 4, 8);
    let listener = bind_listener(IpAddr::V4(Ipv4Addr::LOCALHOST)).unwrap();
    let addr = listener.local_addr().unwrap();
    let secret = new_secret().unwrap();
    let (tx, rx) = mpsc::channel::<Ev>();
    start_acceptor(listener, secret, n, 4, tx).unwrap();
    let mut job = Job::new(&p);
    let h = thread::spawn(move || {
        while job.welcomed.iter().any(|w| !w) {
            match rx.recv_timeout(Duration::from_secs(30)) {
                Ok(ev) => job.handle(ev),
                Err(_) => return false,
            }
        }
        true
    });
    (addr, secret, h)
}

fn listen_addr(r: usize) -> String {
    format!("10.1.{}.{}:{}", r / 256, r % 256, 20_000 + r)
}

fn hello(addr: std::net::SocketAddr, secret: Secret, r: usize, n: usize) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    let m = Msg::RankHello {
        secret,
        rank: r as u32,
        size: n as u32,
        listen: listen_addr(r),
    };
    write_frame(&mut s, &m.encode()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    s
}

fn check_welcome(s: &mut TcpStream, r: usize, n: usize) {
    let w = Msg::decode(&read_frame(s, MAX_HELLO).unwrap()).unwrap();
    let Msg::Welcome {
        parent, host_index, ..
    } = w
    else {
        panic!("rank {r}: {w:?}");
    };
    assert_eq!(parent, tree_parent(r, 8).map(listen_addr), "rank {r}");
    assert_eq!(host_index as usize, block_placement(n, 4)[r], "rank {r}");
}

#[test]
fn launcher_welcomes_each_rank_once_its_parent_said_hello() {
    // Hellos in an order unrelated to the tree (a stride through the
    // ranks), fewer than the listen backlog: each rank is welcomed with its
    // parent's address.
    let n = 120;
    let (addr, secret, launcher) = launcher_loop(n);
    let mut conns: Vec<(usize, TcpStream)> = (0..n)
        .map(|i| (i * 37) % n) // 37 is prime to 120: every rank once
        .map(|r| (r, hello(addr, secret, r, n)))
        .collect();
    for (r, s) in conns.iter_mut() {
        check_welcome(s, *r, n);
    }
    assert!(launcher.join().unwrap(), "the launcher loop stalled");
}

/// Make room for `fds` more descriptors if the soft limit allows less.
fn room_for(fds: u64) -> u64 {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 1024;
    };
    if soft < fds + 256 {
        let _ = setrlimit(Resource::RLIMIT_NOFILE, (fds + 256).min(hard), hard);
    }
    getrlimit(Resource::RLIMIT_NOFILE).map_or(soft, |l| l.0)
}

/// Up to 1,000 ranks, as many as RLIMIT_NOFILE leaves room for (two
/// descriptors each: the rank's end and the launcher's), at least 200.
fn ranks_the_limit_allows() -> usize {
    let limit = room_for(2 * 1000);
    let n = 1000.min(limit.saturating_sub(256) as usize / 2);
    assert!(
        n >= 200,
        "RLIMIT_NOFILE {limit} leaves room for {n} connections"
    );
    n
}

#[test]
fn launcher_rate_of_hellos() {
    // Ranks in order, at most 64 hellos not yet welcomed (below any listen
    // backlog, so no connection waits for a SYN retransmission); prints the
    // time per hello (`--nocapture`; docs/launching.md, "Scaling model").
    let n = ranks_the_limit_allows();
    let (addr, secret, launcher) = launcher_loop(n);
    let start = std::time::Instant::now();
    let mut conns: Vec<TcpStream> = Vec::with_capacity(n);
    for r in 0..n {
        conns.push(hello(addr, secret, r, n));
        if r >= 64 {
            check_welcome(&mut conns[r - 64], r - 64, n);
        }
    }
    for (r, s) in conns.iter_mut().enumerate().skip(n.saturating_sub(64)) {
        check_welcome(s, r, n);
    }
    let took = start.elapsed().as_secs_f64();
    assert!(launcher.join().unwrap(), "the launcher loop stalled");
    eprintln!(
        "launcher: {n} hellos welcomed in {:.1} ms, {:.1} us per hello (client included)",
        took * 1e3,
        took * 1e6 / n as f64
    );
}

/// Segments (SYNs included) the kernel sent again on `s`.
fn retransmissions(s: &TcpStream) -> u32 {
    use std::os::fd::AsRawFd;
    let mut info: libc::tcp_info = unsafe_zeroed();
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: `info` is a writable tcp_info of `len` bytes; the descriptor
    // is an open TCP socket for the duration of the call.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    assert_eq!(
        rc,
        0,
        "getsockopt(TCP_INFO): {}",
        std::io::Error::last_os_error()
    );
    info.tcpi_total_retrans
}

/// An all-zero `tcp_info` (plain integers: zero is a valid value).
fn unsafe_zeroed() -> libc::tcp_info {
    // SAFETY: tcp_info is a C struct of integers, for which all-zero bytes
    // are a valid value.
    unsafe { std::mem::zeroed() }
}

#[test]
fn a_burst_of_hellos_waits_for_no_syn_retransmission() {
    // 1,000 ranks connecting at once, faster than the launcher accepts:
    // the listen queue must hold them. A SYN dropped by a full queue is
    // sent again after 1 s; with Rust's default backlog of 128 this burst
    // took 5-6 s here.
    let n = ranks_the_limit_allows();
    let (addr, secret, launcher) = launcher_loop(n);
    let start = std::time::Instant::now();
    let mut conns: Vec<(usize, TcpStream)> = (0..n)
        .map(|i| (i * 389) % n) // 389 is prime: every rank once
        .map(|r| (r, hello(addr, secret, r, n)))
        .collect();
    for (r, s) in conns.iter_mut() {
        check_welcome(s, *r, n);
    }
    assert!(launcher.join().unwrap(), "the launcher loop stalled");
    let again: u32 = conns.iter().map(|(_, s)| retransmissions(s)).sum();
    assert_eq!(
        again,
        0,
        "{n} hellos took {:.2} s with {again} retransmissions",
        start.elapsed().as_secs_f64()
    );
}
