//! The launcher's bootstrap listener: every connection must first prove it
//! belongs to the job (the secret), as a rank or as an ssh agent; what it
//! sends then becomes events of the supervision loop.

use crate::SpawnError;
use bootstrap::wire::{read_frame, secret_eq, Msg, RankEnd, Secret, MAX_HELLO};
use std::net::{IpAddr, TcpListener, TcpStream};
use std::sync::mpsc::Sender;
use std::thread;
use std::time::Duration;

/// How long a connection to the launcher has to present the secret.
const AUTH_TIMEOUT: Duration = Duration::from_secs(10);

pub(super) enum Ev {
    Hello {
        rank: usize,
        listen: String,
        stream: TcpStream,
    },
    Agent {
        host: usize,
        stream: TcpStream,
    },
    RankMsg {
        rank: usize,
        msg: Msg,
    },
    AgentMsg {
        host: usize,
        msg: Msg,
    },
    /// The agent's control stream reached its end: every report the agent
    /// sent has been delivered before this event.
    AgentGone {
        host: usize,
    },
    Child {
        pid: u32,
        end: RankEnd,
    },
    Signal(i32),
}

/// The bootstrap listener on `ip`, with the longest listen queue the
/// system allows (`net.core.somaxconn`, 4096 by default) instead of Rust's
/// 128: every rank connects once at start-up, and a connection that finds
/// the queue full has its SYN dropped and sent again only after 1 s.
pub(super) fn bind_listener(ip: IpAddr) -> std::io::Result<TcpListener> {
    use nix::sys::socket::{listen, Backlog};
    let l = TcpListener::bind((ip, 0))?;
    listen(&l, Backlog::MAXALLOWABLE).map_err(std::io::Error::from)?;
    Ok(l)
}

pub(super) fn start_acceptor(
    listener: TcpListener,
    secret: Secret,
    n: usize,
    nhosts: usize,
    tx: Sender<Ev>,
) -> Result<(), SpawnError> {
    thread::Builder::new()
        .name("bootstrap-accept".into())
        .spawn(move || {
            for conn in listener.incoming() {
                let Ok(s) = conn else { continue };
                let tx = tx.clone();
                let _ = thread::Builder::new()
                    .stack_size(128 * 1024)
                    .spawn(move || serve_conn(s, secret, n, nhosts, tx));
            }
        })
        .map(|_| ())
        .map_err(|e| SpawnError::io("starting the accept thread", e))
}

fn serve_conn(s: TcpStream, secret: Secret, n: usize, nhosts: usize, tx: Sender<Ev>) {
    let peer = s
        .peer_addr()
        .map(|a| a.to_string())
        .unwrap_or_else(|_| "?".into());
    // One deadline for the whole hello (not per read).
    let first = read_frame(
        &mut bootstrap::deadline::ByDeadline::new(&s, AUTH_TIMEOUT),
        MAX_HELLO,
    )
    .map_err(|e| e.to_string())
    .and_then(|f| Msg::decode(&f).map_err(|e| e.to_string()));
    let drop_it =
        |why: String| tracing::warn!("bootstrap: dropped a connection from {peer}: {why}");
    let reader = |s: &TcpStream| {
        let _ = s.set_read_timeout(None);
        let _ = s.set_nodelay(true);
        s.try_clone().ok()
    };
    match first {
        Ok(Msg::RankHello {
            secret: s2,
            rank,
            size,
            listen,
        }) if secret_eq(&s2, &secret) => {
            let rank = rank as usize;
            if rank >= n || size as usize != n {
                return drop_it(format!("rank {rank} of {size} does not fit a job of {n}"));
            }
            let Some(mut r) = reader(&s) else { return };
            if tx
                .send(Ev::Hello {
                    rank,
                    listen,
                    stream: s,
                })
                .is_err()
            {
                return;
            }
            while let Ok(f) = read_frame(&mut r, MAX_HELLO) {
                match Msg::decode(&f) {
                    Ok(msg) => {
                        if tx.send(Ev::RankMsg { rank, msg }).is_err() {
                            return;
                        }
                    }
                    Err(e) => tracing::warn!("bootstrap: rank {rank} sent a bad message: {e}"),
                }
            }
        }
        Ok(Msg::AgentHello { secret: s2, host }) if secret_eq(&s2, &secret) => {
            let host = host as usize;
            if host >= nhosts {
                return drop_it(format!("agent for host {host} of {nhosts}"));
            }
            let Some(mut r) = reader(&s) else { return };
            if tx.send(Ev::Agent { host, stream: s }).is_err() {
                return;
            }
            while let Ok(f) = read_frame(&mut r, MAX_HELLO) {
                if let Ok(msg) = Msg::decode(&f) {
                    if tx.send(Ev::AgentMsg { host, msg }).is_err() {
                        return;
                    }
                }
            }
            let _ = tx.send(Ev::AgentGone { host });
        }
        Ok(Msg::RankHello { .. }) | Ok(Msg::AgentHello { .. }) => drop_it("wrong secret".into()),
        Ok(_) => drop_it("unexpected first message".into()),
        Err(e) => drop_it(e),
    }
}
