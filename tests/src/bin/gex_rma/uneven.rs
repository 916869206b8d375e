//! `attach-uneven`: rank 0 asks for a segment of 2 MiB (run with
//! `GASNET_MAX_SEGSIZE=1M`, so it is refused there), the others for
//! 64 KiB. Every rank must return an error (rank 0 its own, the others
//! one naming rank 0), none may hang in the exchange; then all attach
//! 64 KiB and a put from every rank to the next is read back.

use conduit::client::Client;
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
    Ok("ok: an attach refused on rank 0 failed on every rank, then all attached".into())
}
