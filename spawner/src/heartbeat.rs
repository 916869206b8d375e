//! Liveness between the launcher and its ssh agents.
//!
//! A network partition sends no error: a TCP connection to a host whose
//! link is down stays open, and the ssh session too until OpenSSH's
//! ServerAlive probes give up. So each side sends a
//! [`Msg::Heartbeat`] every [`PERIOD`] on
//! the agent's control connection, and each takes the other as unreachable
//! when it has heard nothing for [`silence_limit`] (the job's exit timeout,
//! at least three periods): the launcher ends the job naming the host's
//! ranks, the agent kills its ranks and ends.

use bootstrap::wire::{write_frame, Msg};
use std::net::TcpStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How often each side says it is alive.
pub const PERIOD: Duration = Duration::from_secs(1);

/// How long a side may be silent before the other gives up on it: the
/// job's exit timeout, but never less than three heartbeats.
pub fn silence_limit(exit_timeout: Duration) -> Duration {
    exit_timeout.max(3 * PERIOD)
}

/// When a side was last heard from (shared between threads).
#[derive(Clone)]
pub struct Heard {
    start: Instant,
    millis: Arc<AtomicU64>,
}

impl Heard {
    /// Heard from now.
    pub fn new() -> Heard {
        Heard {
            start: Instant::now(),
            millis: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Something arrived just now.
    pub fn touch(&self) {
        let ms = self.start.elapsed().as_millis() as u64;
        self.millis.store(ms, Ordering::Relaxed);
    }

    /// How long since something last arrived.
    pub fn silent_for(&self) -> Duration {
        let last = Duration::from_millis(self.millis.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
}

impl Default for Heard {
    fn default() -> Self {
        Heard::new()
    }
}

/// The agent's side: a thread that sends a heartbeat every period on
/// `ctl` and calls `gone` once the launcher has been silent for `limit`
/// (or the connection fails).
pub(crate) fn agent_side(
    ctl: Arc<Mutex<TcpStream>>,
    heard: Heard,
    limit: Duration,
    gone: impl FnOnce(String) + Send + 'static,
) {
    std::thread::spawn(move || loop {
        std::thread::sleep(PERIOD);
        let sent = {
            let mut s = ctl.lock().unwrap_or_else(|e| e.into_inner());
            write_frame(&mut *s, &Msg::Heartbeat.encode())
        };
        if let Err(e) = sent {
            gone(format!("the control connection failed: {e}"));
            return;
        }
        let silent = heard.silent_for();
        if silent >= limit {
            gone(format!(
                "no word from the launcher for {:.1} s (the job's exit timeout)",
                silent.as_secs_f64()
            ));
            return;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limit_is_the_exit_timeout_but_at_least_three_periods() {
        assert_eq!(
            silence_limit(Duration::from_secs(11)),
            Duration::from_secs(11)
        );
        assert_eq!(silence_limit(Duration::from_millis(10)), 3 * PERIOD);
    }

    #[test]
    fn heard_counts_silence_from_the_last_touch() {
        let h = Heard::new();
        std::thread::sleep(Duration::from_millis(30));
        assert!(h.silent_for() >= Duration::from_millis(30));
        h.touch();
        assert!(h.silent_for() < Duration::from_millis(30));
    }

    /// An agent whose launcher accepts the connection and then says
    /// nothing gives up after the limit.
    #[test]
    fn agent_side_gives_up_on_a_silent_launcher() {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let _server = l.accept().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let t = Instant::now();
        agent_side(
            Arc::new(Mutex::new(c)),
            Heard::new(),
            Duration::from_millis(1500),
            move |why| {
                let _ = tx.send(why);
            },
        );
        let why = rx.recv_timeout(Duration::from_secs(10)).unwrap();
        assert!(why.starts_with("no word from the launcher for "), "{why}");
        assert!(t.elapsed() >= Duration::from_millis(1500));
    }
}
