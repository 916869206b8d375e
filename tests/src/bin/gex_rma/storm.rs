//! The storm of `gex-rma all`: thousands of small NBI puts in one scope,
//! checked at their target.

use super::{pattern, AREA, SEG};
use conduit::client::{Client, NbiSync};
use tests::{fail, Fallible};

/// Small NBI puts in the storm.
pub(crate) const STORM_PUTS: usize = 20_000;
/// Where the storm writes (above the 1,000 blocks of 256 bytes).
const STORM_AT: usize = AREA + (1 << 20);

/// Size of the storm's put `i` (1 .. 256 bytes, most of them small).
fn storm_len(i: usize) -> usize {
    [8, 1, 24, 8, 200, 8, 3, 256][i % 8]
}

/// Every rank puts `STORM_PUTS` small NBI puts of 1 .. 256 bytes to
/// disjoint places of the next rank's segment, and a few to its own, in one
/// scope with one sync; after a barrier each checks what its predecessor
/// (and itself) wrote there.
pub(crate) fn small_put_storm(c: &Client) -> Fallible<String> {
    let (me, n) = (c.rank(), c.size());
    let (peer, pred) = ((me + 1) % n, (me + n - 1) % n);
    let mut offsets = Vec::with_capacity(STORM_PUTS);
    let mut at = STORM_AT;
    for i in 0..STORM_PUTS {
        offsets.push(at);
        at += storm_len(i);
    }
    let own = at + 64;
    assert!(own + 64 < SEG);
    c.rma_scope(|s| {
        for (i, &off) in offsets.iter().enumerate() {
            s.put_nbi(peer, off, &pattern(me * STORM_PUTS + i, storm_len(i)))?;
            if i % 5000 == 0 {
                s.put_nbi(me, own + i / 5000 * 8, &pattern(i, 8))?;
            }
        }
        s.sync_nbi(NbiSync::Puts)
    })?;
    c.barrier()?;
    let mut got = vec![0u8; at - STORM_AT];
    c.segment_read(STORM_AT, &mut got)?;
    for (i, &off) in offsets.iter().enumerate() {
        let at = off - STORM_AT;
        if got[at..at + storm_len(i)] != pattern(pred * STORM_PUTS + i, storm_len(i))[..] {
            return Err(fail(format!(
                "small NBI put {i} of {STORM_PUTS} from rank {pred} ({} bytes at {off}) differs",
                storm_len(i)
            )));
        }
    }
    let mut mine = vec![0u8; 8];
    for k in 0..STORM_PUTS.div_ceil(5000) {
        c.segment_read(own + k * 8, &mut mine)?;
        if mine != pattern(k * 5000, 8) {
            return Err(fail(format!(
                "small NBI put {k} to this rank itself differs"
            )));
        }
    }
    Ok(format!(
        "{STORM_PUTS} small NBI puts (1..256 bytes) checked at their target"
    ))
}
