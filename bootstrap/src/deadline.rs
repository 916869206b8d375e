//! Reading a hello within one deadline: a read timeout alone bounds each
//! read, so a peer sending one byte just before every timeout could hold
//! a connection (and its thread) for as long as it liked.

use std::io::{self, Read};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Reads from a socket that fail once `end` has passed.
pub struct ByDeadline<'a> {
    s: &'a TcpStream,
    end: Instant,
}

impl<'a> ByDeadline<'a> {
    /// Reads from `s` that must all be done within `within` from now.
    pub fn new(s: &'a TcpStream, within: Duration) -> Self {
        ByDeadline {
            s,
            end: Instant::now() + within,
        }
    }
}

impl Read for ByDeadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the peer did not finish its hello in time",
            ));
        }
        self.s.set_read_timeout(Some(left))?;
        let mut s = self.s;
        s.read(buf)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::net::TcpListener;

    #[test]
    fn a_trickle_of_bytes_does_not_extend_the_deadline() {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        let writer = std::thread::spawn(move || {
            let mut c = TcpStream::connect(addr).unwrap();
            // A frame announcing 100 bytes, then one byte every 100 ms.
            c.write_all(&100u32.to_be_bytes()).unwrap();
            for _ in 0..30 {
                if c.write_all(&[7]).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        });
        let (s, _) = l.accept().unwrap();
        let t = Instant::now();
        let r = crate::wire::read_frame(&mut ByDeadline::new(&s, Duration::from_millis(500)), 1000);
        let took = t.elapsed();
        assert!(
            r.is_err(),
            "a frame of 100 bytes cannot arrive in 0.5 s here"
        );
        assert!(took < Duration::from_secs(2), "{took:?}");
        drop(s);
        writer.join().unwrap();
    }
}
