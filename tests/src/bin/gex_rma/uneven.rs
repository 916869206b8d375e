//! `attach-uneven`: rank 0 asks for a segment of 2 MiB (run with
//! `GASNET_MAX_SEGSIZE=1M`, so it is refused there), the others for
//! 64 KiB. Every rank must return an error (rank 0 its own, the others
//! one naming rank 0), none may hang in the exchange; then all attach
//! 64 KiB and a put from every rank to the next is read back.

use conduit::client::Client;
use nix::sys::resource::{getrlimit, setrlimit, Resource};
use tests::{fail, Fallible};

pub fn uneven(c: &Client) -> Fallible<String> {
    let me = c.rank();
    let ask = if me == 0 { 2 << 20 } else { 64 << 10 };
    let want = if me == 0 {
        "segment size 2097152 exceeds the limit of 1048576 bytes set by GASNET_MAX_SEGSIZE=1M"
            .to_string()
    } else {
        "rank 0 could not attach its segment (its own error says why), so no rank attached one"
            .to_string()
    };
    tests::program::expect_err("an attach refused on rank 0", c.attach_segment(ask), &want)?;
    attach_and_check(c)?;
    Ok("ok: an attach refused on rank 0 failed on every rank, then all attached".into())
}

/// `attach-unmappable` (3 or more ranks of one host, the shared-memory
/// path on): rank 1 has one descriptor left when it attaches, so its
/// segment's file opens and the mapping of a peer's segment does not.
/// Every rank's attach must fail (rank 1 with its own error, the others
/// naming rank 1), none may hang; then all attach and a ring of puts is
/// read back (nothing of the failed attach stays).
pub fn unmappable(c: &Client) -> Fallible<String> {
    let me = c.rank();
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE)?;
    if me == 1 {
        // With the limit just above the lowest free descriptor, one more
        // file opens (the segment's), then none.
        let lowest = std::os::fd::AsRawFd::as_raw_fd(&std::fs::File::open("/dev/null")?) as u64;
        setrlimit(Resource::RLIMIT_NOFILE, lowest + 1, hard)?;
    }
    let r = c.attach_segment(64 << 10);
    if me == 1 {
        setrlimit(Resource::RLIMIT_NOFILE, soft, hard)?;
        match r {
            Err(e)
                if e.report().contains("rank 1 cannot map the segment of rank")
                    && e.report().contains("Too many open files") => {}
            other => {
                return Err(fail(format!(
                    "an attach that cannot map a peer's segment: {:?}, expected an error \
                     naming the mapping and 'Too many open files'",
                    other.map_err(|e| e.report())
                )))
            }
        }
    } else {
        tests::program::expect_err(
            "an attach whose rank 1 could not map",
            r,
            "rank 1 could not attach its segment (its own error says why), so no rank attached one",
        )?;
    }
    attach_and_check(c)?;
    Ok("ok: an attach that rank 1 could not map failed on every rank, then all attached".into())
}

/// Attach 64 KiB, put a word to the next rank, read the own back.
fn attach_and_check(c: &Client) -> Fallible<()> {
    let me = c.rank();
    c.attach_segment(64 << 10)?;
    let next = (me + 1) % c.size();
    let word = (me as u64 + 1) * 0x0101_0101;
    c.put(next, 8, &word.to_ne_bytes())?;
    c.barrier()?;
    let mut got = [0u8; 8];
    c.get(me, 8, &mut got)?;
    let prev = (me + c.size() - 1) % c.size();
    if u64::from_ne_bytes(got) != (prev as u64 + 1) * 0x0101_0101 {
        return Err(fail(format!(
            "after the second attach, rank {prev}'s put read back as {got:?}"
        )));
    }
    Ok(())
}
