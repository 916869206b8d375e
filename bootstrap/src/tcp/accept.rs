//! The rank's side of the tree wiring: accept the expected children, each
//! of which must present the job's secret in a `ChildHello` first.

use crate::wire::{read_frame, secret_eq, Msg, Secret, MAX_HELLO};
use crate::BootstrapError;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

/// How long a connecting peer has to present the secret.
const AUTH_TIMEOUT: Duration = Duration::from_secs(5);

/// Accept the children `expected` on `listener`; returns them sorted by rank.
pub(super) fn accept_children(
    listener: TcpListener,
    secret: Secret,
    expected: &[usize],
) -> Result<Vec<(usize, TcpStream)>, BootstrapError> {
    if expected.is_empty() {
        return Ok(Vec::new());
    }
    let laddr = listener
        .local_addr()
        .map_err(|e| BootstrapError::io("reading the listener address", e))?;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel::<(usize, TcpStream)>();
    let stop2 = stop.clone();
    let acceptor = thread::Builder::new()
        .name("bootstrap-accept".into())
        .stack_size(128 * 1024)
        .spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(s) = conn else { continue };
                let tx = tx.clone();
                let _ = thread::Builder::new()
                    .stack_size(128 * 1024)
                    .spawn(move || {
                        let peer = s
                            .peer_addr()
                            .map(|a| a.to_string())
                            .unwrap_or_else(|_| "?".into());
                        let why = match read_frame(
                            &mut crate::deadline::ByDeadline::new(&s, AUTH_TIMEOUT),
                            MAX_HELLO,
                        )
                        .map_err(|e| e.to_string())
                        .and_then(|f| Msg::decode(&f).map_err(|e| e.to_string()))
                        {
                            Ok(Msg::ChildHello { secret: s2, rank }) if secret_eq(&s2, &secret) => {
                                let _ = s.set_read_timeout(None);
                                let _ = s.set_nodelay(true);
                                let _ = tx.send((rank as usize, s));
                                return;
                            }
                            Ok(Msg::ChildHello { .. }) => "wrong secret".to_string(),
                            Ok(m) => format!("unexpected message {}", short(&m)),
                            Err(e) => e,
                        };
                        tracing::warn!("bootstrap: dropped a connection from {peer}: {why}");
                    });
            }
        })
        .map_err(|e| BootstrapError::io("starting the accept thread", e))?;
    let mut got: Vec<(usize, TcpStream)> = Vec::with_capacity(expected.len());
    while got.len() < expected.len() {
        let (r, s) = rx
            .recv()
            .map_err(|_| BootstrapError::PeerLost("the accept thread ended".into()))?;
        if !expected.contains(&r) || got.iter().any(|(g, _)| *g == r) {
            tracing::warn!(
                "bootstrap: dropped a connection claiming to be rank {r}: not an expected child"
            );
            continue;
        }
        got.push((r, s));
    }
    stop.store(true, Ordering::SeqCst);
    let _ = TcpStream::connect(laddr);
    let _ = acceptor.join();
    got.sort_by_key(|(r, _)| *r);
    Ok(got)
}

fn short(m: &Msg) -> &'static str {
    match m {
        Msg::RankHello { .. } => "RankHello",
        Msg::AgentHello { .. } => "AgentHello",
        Msg::Welcome { .. } => "Welcome",
        Msg::ChildHello { .. } => "ChildHello",
        Msg::Abort { .. } => "Abort",
        Msg::Finalize { .. } => "Finalize",
        Msg::RankExit { .. } => "RankExit",
        Msg::Kill { .. } => "Kill",
        Msg::Heartbeat => "Heartbeat",
        Msg::SshEnded { .. } => "SshEnded",
    }
}
