//! The benchmark's measurements: ping-pong latency and windowed bandwidth
//! between ranks 0 and 1 (other ranks wait in the final barrier).

use conduit::client::Client;
use std::time::Instant;
use tests::{fail, Fallible};

/// One-way latency of `bytes`-byte blocking send/receive pairs, after a
/// tenth of `iters` as warm-up: `lat <bytes> <usec>`.
pub fn pingpong(c: &Client, bytes: usize, iters: usize) -> Fallible<String> {
    let w = c.tagged_world()?;
    if w.size() < 2 {
        return Err(fail("pingpong needs 2 ranks"));
    }
    let me = w.rank();
    let out = vec![1u8; bytes];
    let mut buf = vec![0u8; bytes];
    let warm = iters / 10 + 1;
    let mut t0 = Instant::now();
    if me < 2 {
        for i in 0..warm + iters {
            if i == warm {
                t0 = Instant::now();
            }
            if me == 0 {
                w.send(&out, 1, 1)?;
                w.recv(&mut buf, Some(1), Some(1))?;
            } else {
                w.recv(&mut buf, Some(0), Some(1))?;
                w.send(&out, 0, 1)?;
            }
        }
    }
    let usec = t0.elapsed().as_secs_f64() * 1e6 / (2 * iters) as f64;
    Ok(format!("lat {bytes} {usec:.3}"))
}

/// Bandwidth: `window` non-blocking sends of `bytes` each, received into
/// `window` posted receives, then a one-byte acknowledgement; `iters`
/// windows after one warm-up: `bw <bytes> <MB/s>` (10^6 bytes per second).
pub fn bandwidth(c: &Client, bytes: usize, window: usize, iters: usize) -> Fallible<String> {
    let w = c.tagged_world()?;
    if w.size() < 2 {
        return Err(fail("bandwidth needs 2 ranks"));
    }
    let me = w.rank();
    let out = vec![1u8; bytes];
    let mut bufs = vec![vec![0u8; bytes]; window];
    let mut ack = [0u8; 1];
    let mut t0 = Instant::now();
    if me < 2 {
        for i in 0..iters + 1 {
            if i == 1 {
                t0 = Instant::now();
            }
            if me == 0 {
                w.scope(|s| {
                    let mut reqs = Vec::with_capacity(window);
                    for _ in 0..window {
                        reqs.push(s.isend(&w, &out, 1, 2)?);
                    }
                    for r in s.wait_all(reqs) {
                        r?;
                    }
                    Ok::<(), conduit::client::Error>(())
                })?;
                w.recv(&mut ack, Some(1), Some(3))?;
            } else {
                w.scope(|s| {
                    let mut reqs = Vec::with_capacity(window);
                    for b in bufs.iter_mut() {
                        reqs.push(s.irecv(&w, b, Some(0), Some(2))?);
                    }
                    for r in s.wait_all(reqs) {
                        r?;
                    }
                    Ok::<(), conduit::client::Error>(())
                })?;
                w.send(&[1], 0, 3)?;
            }
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let mbs = (bytes * window * iters) as f64 / secs / 1e6;
    Ok(format!("bw {bytes} {mbs:.1}"))
}
