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

/// How often a rank waiting for its children checks that the launcher is
/// still there.
const LAUNCHER_CHECK: Duration = Duration::from_millis(250);

/// Accept the children `expected` on `listener`; returns them sorted by
/// rank. Gives up when the `launcher` connection closes: the children are
/// started by the launcher, so none will come (a rank under a wrapper
/// that does not `exec` gets no parent-death signal when the launcher is
/// killed, and waited here for ever).
pub(super) fn accept_children(
    listener: TcpListener,
    secret: Secret,
    expected: &[usize],
    launcher: &TcpStream,
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
    let got = wait_for_children(&rx, expected, launcher);
    // The acceptor ends at the next connection it takes (its own).
    stop.store(true, Ordering::SeqCst);
    let _ = TcpStream::connect(laddr);
    let _ = acceptor.join();
    let mut got = got?;
    got.sort_by_key(|(r, _)| *r);
    Ok(got)
}

/// Take the authenticated connections from `rx` until every child of
/// `expected` has one; fails when the `launcher` connection closes first.
fn wait_for_children(
    rx: &mpsc::Receiver<(usize, TcpStream)>,
    expected: &[usize],
    launcher: &TcpStream,
) -> Result<Vec<(usize, TcpStream)>, BootstrapError> {
    let mut got: Vec<(usize, TcpStream)> = Vec::with_capacity(expected.len());
    while got.len() < expected.len() {
        let (r, s) = match rx.recv_timeout(LAUNCHER_CHECK) {
            Ok(c) => c,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(why) = launcher_gone(launcher) {
                    let missing: Vec<usize> = expected
                        .iter()
                        .copied()
                        .filter(|r| !got.iter().any(|(g, _)| g == r))
                        .collect();
                    return Err(BootstrapError::PeerLost(format!(
                        "the launcher's connection {why} while this rank waited for its tree children {missing:?} to connect (the launcher starts them: none will come)"
                    )));
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(BootstrapError::PeerLost("the accept thread ended".into()))
            }
        };
        if !expected.contains(&r) || got.iter().any(|(g, _)| *g == r) {
            tracing::warn!(
                "bootstrap: dropped a connection claiming to be rank {r}: not an expected child"
            );
            continue;
        }
        got.push((r, s));
    }
    Ok(got)
}

/// Why the launcher connection is over, if it is: closed (end of file) or
/// reset. Data waiting to be read (the launcher does not write before the
/// job is up) is left for later.
fn launcher_gone(launcher: &TcpStream) -> Option<String> {
    if let Err(e) = launcher.set_nonblocking(true) {
        return Some(format!("became unusable ({e})"));
    }
    let mut b = [0u8; 1];
    let r = launcher.peek(&mut b);
    let _ = launcher.set_nonblocking(false);
    match r {
        Ok(0) => Some("closed".into()),
        Ok(_) => None,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => None,
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => None,
        Err(e) => Some(format!("failed ({e})")),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    /// A connected pair: (ours, the far end).
    fn pair() -> (TcpStream, TcpStream) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    /// No child comes and the launcher's end closes: the wait ends within
    /// a few checks, naming the children still missing.
    #[test]
    fn waiting_for_children_ends_when_the_launcher_closes() {
        let (ours, launcher) = pair();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let closer = thread::spawn(move || {
            thread::sleep(Duration::from_millis(300));
            drop(launcher);
        });
        let t = Instant::now();
        let e = accept_children(listener, [7; 32], &[3, 4], &ours).unwrap_err();
        closer.join().unwrap();
        assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
        let text = e.to_string();
        assert!(
            text.contains("the launcher's connection closed")
                && text.contains("tree children [3, 4]"),
            "{text}"
        );
    }

    /// While the launcher is there, a late child is still accepted.
    #[test]
    fn a_late_child_is_accepted_while_the_launcher_stays() {
        let (ours, _launcher) = pair();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let at = listener.local_addr().unwrap();
        let secret = [9; 32];
        let child = thread::spawn(move || {
            thread::sleep(Duration::from_millis(800));
            let mut s = TcpStream::connect(at).unwrap();
            let m = Msg::ChildHello { secret, rank: 5 }.encode();
            crate::wire::write_frame(&mut s, &m).unwrap();
            s
        });
        let got = accept_children(listener, secret, &[5], &ours).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].0, 5);
        drop(child.join().unwrap());
    }
}
