//! `gex-vis window`: strided transfers of millions of one-byte pieces,
//! whose plans are made a window at a time: the peak resident set may
//! grow by at most `GROWTH_MAX` over the whole exchange (a whole plan of
//! `PIECES` pieces took 24 bytes each, and as much again over a provider
//! for its RMA batches).

use conduit::client::Client;
use tests::{fail, Fallible};

/// Pieces of each transfer.
const PIECES: usize = 2 << 20;
/// Where the peer's pattern is read from (every second byte), and where
/// this rank's pieces are written to in the peer's segment.
const SRC: usize = 0;
const DST: usize = 2 * PIECES;
/// Segment bytes the mode needs.
pub const SEG: usize = 4 * PIECES;
/// Allowed growth of the peak resident set, in KiB (one whole plan of
/// `PIECES` pieces is 48 MiB).
const GROWTH_MAX: u64 = 16 << 10;

fn byte(rank: usize, i: usize) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 9) ^ rank.wrapping_mul(101)) as u8
}

/// This process's peak resident set (`VmHWM`), in KiB.
fn peak_kib() -> Fallible<u64> {
    let s = std::fs::read_to_string("/proc/self/status")?;
    s.lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .ok_or_else(|| fail("no VmHWM line in /proc/self/status"))
}

pub fn window(c: &Client) -> Fallible<String> {
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    let from = (me + n - 1) % n;
    // The pattern the peer reads, every second byte of the area.
    let mine: Vec<u8> = (0..2 * PIECES).map(|i| byte(me, i)).collect();
    c.put(me, SRC, &mine)?;
    c.put(me, DST, &vec![0u8; 2 * PIECES])?;
    let send: Vec<u8> = (0..PIECES).map(|i| !byte(me, 7 * i)).collect();
    let mut got = vec![1u8; PIECES];
    let mut back = vec![0u8; 2 * PIECES];
    drop(mine);
    c.barrier()?;
    let before = peak_kib()?;
    // PIECES one-byte pieces: contiguous here, every second byte there.
    c.get_strided(peer, &mut got, 0, &[1], SRC, &[2], 1, &[PIECES])?;
    c.put_strided(peer, DST, &[2], &send, 0, &[1], 1, &[PIECES])?;
    let after = peak_kib()?;
    c.barrier()?;
    if let Some(i) = (0..PIECES).find(|&i| got[i] != byte(peer, 2 * i)) {
        return Err(fail(format!(
            "strided get from rank {peer}: piece {i} is {:#04x}, expected {:#04x}",
            got[i],
            byte(peer, 2 * i)
        )));
    }
    c.get(me, DST, &mut back)?;
    for (i, &b) in back.iter().enumerate() {
        let want = if i % 2 == 0 {
            !byte(from, 7 * (i / 2))
        } else {
            0
        };
        if b != want {
            return Err(fail(format!(
                "strided put from rank {from}: byte {i} is {b:#04x}, expected {want:#04x}"
            )));
        }
    }
    let growth = after.saturating_sub(before);
    if growth > GROWTH_MAX {
        return Err(fail(format!(
            "a strided get and put of {PIECES} pieces raised the peak resident set by {growth} KiB (from {before} KiB), more than {GROWTH_MAX} KiB"
        )));
    }
    Ok(format!(
        "a strided get and put of {PIECES} one-byte pieces each, checked; peak resident set grew by at most {GROWTH_MAX} KiB"
    ))
}
