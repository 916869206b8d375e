//! `gex-tagged all`'s probe, matched-probe, synchronous-send and
//! truncation checks.

use super::checks::{check, pattern, World};
use conduit::client::Error;
use conduit::tagged::TaggedError;
use std::time::{Duration, Instant};
use tests::{fail, Fallible};

/// Matched probe: the first of two messages with one tag is claimed by
/// mprobe, so a plain receive gets the second; the claimed one is then
/// received through its Message. A third, claimed by improbe and dropped,
/// is discarded: nothing is left to probe. A synchronous one claimed and
/// dropped releases its sender.
pub(crate) fn mprobe(w: &World, truncate: bool) -> Fallible<()> {
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    check(w.improbe(Some(prev), Some(42))?.is_none(), || {
        "improbe found a message never sent".into()
    })?;
    w.send(b"first", next, 40)?;
    w.send(b"second!", next, 40)?;
    w.send(b"third", next, 41)?;
    let m = w.mprobe(None, Some(40))?;
    let st = m.status();
    check(st.source == prev && st.tag == 40 && st.size == 5, || {
        format!("mprobe status {st:?}")
    })?;
    let mut b = [0u8; 16];
    let st2 = w.recv(&mut b, Some(prev), Some(40))?;
    check(&b[..st2.len] == b"second!", || {
        format!("a plain receive after mprobe got {:?}", &b[..st2.len])
    })?;
    let st1 = m.recv(&mut b)?;
    check(&b[..st1.len] == b"first" && st1.source == prev, || {
        format!("the claimed message was {:?} ({st1:?})", &b[..st1.len])
    })?;
    let third = loop {
        if let Some(m) = w.improbe(Some(prev), Some(41))? {
            break m;
        }
    };
    check(third.status().size == 5, || {
        format!("improbe {:?}", third.status())
    })?;
    drop(third);
    check(w.iprobe(Some(prev), Some(41))?.is_none(), || {
        "a dropped claimed message was still there".into()
    })?;
    // A synchronous message claimed and dropped releases its sender: the
    // discard's acknowledgement goes to the claimed message's source (shm
    // 2.x's discard completion carries no CQ data, which names the source
    // in ofi_tag_full: the acknowledgement went to rank 0, and the sender
    // waited for ever).
    w.scope(|s| {
        let mut q = s.issend(w, b"claimed, then dropped", next, 44)?;
        drop(w.mprobe(Some(prev), Some(44))?);
        let t = Instant::now();
        loop {
            match s.test(q) {
                Ok(r) => return r.map(|_| ()).map_err(Into::into),
                Err(back) => q = back,
            }
            if t.elapsed() > Duration::from_secs(30) {
                let why = format!(
                    "rank {me}: an issend to rank {next} whose message rank {next} claimed and \
dropped was not complete after 30 s"
                );
                // Said now: the scope's end waits for the issend.
                eprintln!("gex-tagged: {why}");
                return Err(fail(why));
            }
        }
    })?;
    if truncate {
        // A claimed message longer than the buffer it is received into.
        let out = pattern(me, 1000);
        w.scope(|s| {
            let send = s.isend(w, &out, next, 43)?;
            let m = w.mprobe(Some(prev), Some(43))?;
            let mut area = vec![0xEEu8; 1064];
            let r = m.recv(&mut area[..50]);
            s.wait(send)?;
            match r {
                Err(Error::Tagged(TaggedError::Truncated(st))) => {
                    check(st.truncated && st.len == 50 && st.source == prev, || {
                        format!("a truncated claim's status {st:?}")
                    })?
                }
                other => {
                    return Err(fail(format!(
                        "a claimed 1000-byte message into 50 bytes gave {other:?}"
                    )))
                }
            }
            check(area[50..].iter().all(|&b| b == 0xEE), || {
                "a truncated claim wrote past its buffer".into()
            })
        })?;
    }
    w.barrier()?;
    Ok(())
}

/// iprobe finds nothing for a tag never sent; probe finds a waiting
/// message's source, tag and size, which is then received.
pub(crate) fn probes(w: &World) -> Fallible<()> {
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    check(w.iprobe(None, Some(4242))?.is_none(), || {
        "iprobe found a message never sent".into()
    })?;
    let out = pattern(me, 3000 + me as usize);
    w.send(&out, next, 77)?;
    let st = w.probe(Some(prev), Some(77))?;
    check(
        st.source == prev && st.tag == 77 && st.size == 3000 + prev as usize,
        || format!("probe: {st:?}"),
    )?;
    let again = w.iprobe(None, Some(77))?;
    check(again.is_some_and(|a| a.source == prev), || {
        format!("iprobe after probe: {again:?}")
    })?;
    let mut buf = vec![0u8; st.size];
    w.recv(&mut buf, Some(st.source), Some(77))?;
    check(buf == pattern(prev, 3000 + prev as usize), || {
        "probed message's data differ".into()
    })?;
    w.barrier()?;
    Ok(())
}

/// Rank 0 sends synchronously to rank 1, which posts its receive a second
/// late: the send must not return before. A plain send returns at once.
pub(crate) fn ssend(w: &World) -> Fallible<Duration> {
    let (me, n) = (w.rank(), w.size());
    let mut waited = Duration::ZERO;
    // Connect 0 and 1 first (shm's first send to a peer waits for it).
    if me < 2 && n > 1 {
        let mut b = [0u8; 1];
        w.send(&[0], 1 - me, 89)?;
        w.recv(&mut b, Some(1 - me), Some(89))?;
    }
    w.barrier()?;
    if me == 0 {
        let t = Instant::now();
        w.send(b"plain", 1, 90)?;
        let plain = t.elapsed();
        check(plain < Duration::from_millis(500), || {
            format!("a plain send waited {plain:?}")
        })?;
        let t = Instant::now();
        w.ssend(b"synchronous", 1, 91)?;
        waited = t.elapsed();
        check(waited >= Duration::from_millis(900), || {
            format!("ssend returned after {waited:?}, before the receive was posted (1 s)")
        })?;
        let mut b = [0u8; 8];
        w.recv(&mut b, Some(1), Some(92))?;
    } else if me == 1 {
        std::thread::sleep(Duration::from_secs(1));
        let mut b = [0u8; 16];
        w.recv(&mut b, Some(0), Some(90))?;
        let st = w.recv(&mut b, Some(0), Some(91))?;
        check(&b[..st.len] == b"synchronous", || {
            "ssend data differ".into()
        })?;
        w.send(&[1], 0, 92)?;
    }
    w.barrier()?;
    Ok(waited)
}

/// Messages of 100 B (inline on shm), 1,000 B (inject-sized), 100,000 B
/// (CMA or rendezvous) and 4 MiB (whose excess the spill gives back) into
/// a 50-byte receive, each both with
/// the message arriving before the receive is posted and with the receive
/// posted first: an error with the status, and the bytes after the buffer
/// untouched. What the 50 bytes hold is the provider's (tcp;ofi_rxm 1.17
/// may leave them unwritten), as MPI leaves it. On shm this needs the
/// conduit's spill iov (the provider crashes or hangs otherwise,
/// known-issues.md). Then synchronous sends of 100 B and 100,000 B into a
/// 50-byte wildcard receive: the sender must be released, so the receiver
/// must learn the source from the truncated message.
pub(crate) fn truncation(provider: &str, w: &World) -> Fallible<String> {
    let (me, n) = (w.rank(), w.size());
    let (next, prev) = ((me + 1) % n, (me + n - 1) % n);
    let trace = std::env::var_os("GEX_TAGGED_TRACE").is_some();
    // Larger messages must not arrive before their receive on a provider
    // whose profile names a limit (udp;ofi_rxd: known-issues.md).
    const SIZES: [usize; 4] = [100, 1000, 100_000, 4 << 20];
    let (major, minor) = conduit::ofi::runtime_version();
    let limit = conduit::profile::lookup(provider)
        .tagged_unexpected_limit(conduit::profile::Version::new(major, minor, 0))
        .filter(|&max| max < SIZES[3]);
    for len in SIZES {
        for posted_first in [false, true] {
            if !posted_first && limit.is_some_and(|max| len > max) {
                continue;
            }
            let out = pattern(me, len);
            if trace {
                gex_env::eprintln_whole!(
                    "gex-tagged: rank {me}: truncation of {len} bytes, receive posted first: \
                     {posted_first}"
                );
            }
            let mut area = vec![0xEEu8; 64 + len];
            let r = w.scope(|s| {
                // Non-blocking sends: a rendezvous send completes only once
                // the receive matches, and every rank sends.
                let r = if posted_first {
                    let recv = s.irecv(w, &mut area[..50], Some(prev), Some(33))?;
                    w.barrier()?;
                    let send = s.isend(w, &out, next, 33)?;
                    let r = s.wait(recv);
                    s.wait(send)?;
                    r
                } else {
                    let send = s.isend(w, &out, next, 33)?;
                    // The message is on its way (or buffered at the
                    // receiver) before the receive is posted.
                    w.barrier()?;
                    let r = w.recv(&mut area[..50], Some(prev), Some(33));
                    if matches!(r, Err(Error::Tagged(TaggedError::TruncationDefect { .. }))) {
                        // The connection is gone: the send may never end.
                        return Ok::<_, Error>(r);
                    }
                    s.wait(send)?;
                    r
                };
                if trace {
                    gex_env::eprintln_whole!("gex-tagged: rank {me}: received {r:?}");
                }
                Ok::<_, Error>(r)
            })?;
            match r {
                Err(Error::Tagged(TaggedError::Truncated(st))) => {
                    // size: the message's length where the provider reports
                    // it, else the buffer's (see Status::size).
                    let size_ok = st.size == len || st.size == 50;
                    check(
                        st.truncated && st.len == 50 && size_ok && st.source == prev,
                        || format!("truncation of {len} bytes: status {st:?}"),
                    )?;
                }
                Err(Error::Tagged(e @ TaggedError::TruncationDefect { .. })) => {
                    // The connection is gone: no more tagged traffic.
                    check(area[50..].iter().all(|&b| b == 0xEE), || {
                        "bytes past the receive buffer were written".into()
                    })?;
                    return Ok(format!("truncation reported as a provider defect: {e}"));
                }
                other => {
                    return Err(fail(format!(
                        "a {len}-byte message into 50 bytes gave {other:?}"
                    )))
                }
            }
            check(area[50..].iter().all(|&b| b == 0xEE), || {
                format!("a {len}-byte message wrote bytes past the 50-byte receive buffer")
            })?;
            w.barrier()?;
        }
    }
    // A synchronous send truncated by a wildcard receive: the receiver
    // must still learn the source to acknowledge it, or the sender waits
    // for ever (sockets reports the source in an unflagged CQ data word;
    // on shm the spill iov turns the truncation into a completion that
    // carries it).
    for len in [100usize, 100_000] {
        let out = pattern(me, len);
        let mut area = [0xEEu8; 64];
        let r = w.scope(|s| {
            let send = s.issend(w, &out, next, 34)?;
            w.barrier()?;
            let r = w.recv(&mut area[..50], None, Some(34));
            s.wait(send)?;
            Ok::<_, Error>(r)
        })?;
        match r {
            Err(Error::Tagged(TaggedError::Truncated(st))) => {
                check(st.truncated && st.len == 50 && st.source == prev, || {
                    format!("synchronous {len} bytes into a wildcard receive: status {st:?}")
                })?
            }
            other => {
                return Err(fail(format!(
                    "a synchronous {len}-byte message into a 50-byte wildcard receive gave \
                     {other:?}"
                )))
            }
        }
        check(area[50..].iter().all(|&b| b == 0xEE), || {
            format!("a synchronous {len}-byte message wrote past the 50-byte wildcard receive")
        })?;
        w.barrier()?;
    }
    let mut done = String::from(
        "truncation of 100 B to 4 MiB, and of synchronous sends into a wildcard receive",
    );
    if let Some(max) = limit {
        done.push_str(&format!(
            " (larger than {max} B only into a receive posted first: the {provider} profile's \
             tagged_unexpected_max)"
        ));
    }
    Ok(done)
}
