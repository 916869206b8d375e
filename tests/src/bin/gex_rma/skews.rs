//! `gex-rma skews`: gets whose destination starts 0 to 64 bytes after the
//! source within a page, by every get form, at sizes around the get bounce
//! path's threshold and chunk, checked byte for byte with the bytes around
//! the destination untouched; the count of gets that took the get bounce
//! buffers (`GET_BOUNCE`) beside the count that were eligible (destination
//! 1 to 63 bytes after the source, at least 4 KiB, the peer reached through
//! the provider), which `GASNET_OFI_GET_BOUNCE=on` makes equal and `off`
//! makes 0.

use super::{pattern, SEG};
use conduit::client::{Client, NbiSync};
use tests::{fail, Fallible};

/// Sizes: below the threshold, at it, one chunk and a byte, several chunks.
const SIZES: [usize; 6] = [4095, 4096, 65_537, (256 << 10) + 5, (1 << 20) + 3, 3 << 20];
/// Offsets of the destination after the source within a page.
const SKEWS: [usize; 7] = [0, 1, 8, 16, 63, 64, 2048];
/// Where in the peer's segment the source starts: a page boundary plus
/// this.
const SRC_IN_PAGE: usize = 40;
/// Bytes of guard on each side of the destination.
const GUARD: usize = 64;

pub(crate) fn skews(c: &Client) -> Fallible<String> {
    c.attach_segment(SEG)?;
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    let src = 4096 + SRC_IN_PAGE;
    let largest = SIZES[SIZES.len() - 1];
    assert!(src + largest < SEG);
    // Every rank fills its own segment's source range.
    let data = pattern(me + 11, largest);
    c.segment_write(src, &data)?;
    c.barrier()?;
    let want = pattern(peer + 11, largest);
    let mut buf = vec![0u8; largest + 3 * 4096];
    let (mut gets, mut eligible) = (0u64, 0u64);
    let before = c.stats().get_bounce;
    for &len in &SIZES {
        for &skew in &SKEWS {
            for form in 0..3 {
                // The destination's offset in its page: the source's plus
                // the skew (the segment starts at a page boundary).
                let base = buf.as_ptr() as usize;
                let want_in_page = (SRC_IN_PAGE + skew) % 4096;
                let at = GUARD + ((want_in_page + 4096 - (base + GUARD) % 4096) % 4096);
                buf.fill(0xA5);
                let dst = &mut buf[at..at + len];
                match form {
                    0 => c.get(peer, src, dst)?,
                    1 => c.rma_scope(|s| {
                        let ev = s.get_nb(peer, src, dst)?;
                        s.wait(ev)
                    })?,
                    _ => c.rma_scope(|s| {
                        s.get_nbi(peer, src, dst)?;
                        s.sync_nbi(NbiSync::Gets)
                    })?,
                }
                gets += 1;
                if (1..64).contains(&skew) && len >= 4096 && !c.is_shared(peer) {
                    eligible += 1;
                }
                let what = || format!("get form {form} of {len} bytes at skew {skew}");
                if buf[at..at + len] != want[..len] {
                    let j = (0..len).find(|&j| buf[at + j] != want[j]).unwrap_or(0);
                    return Err(fail(format!("{}: byte {j} differs", what())));
                }
                if buf[..at].iter().chain(&buf[at + len..]).any(|&b| b != 0xA5) {
                    return Err(fail(format!(
                        "{}: a byte outside the destination changed",
                        what()
                    )));
                }
            }
        }
    }
    let bounced = c.stats().get_bounce - before;
    c.barrier()?;
    Ok(format!(
        "ok: {gets} gets at in-page offsets 0..2048 after their source checked; eligible {eligible} GET_BOUNCE={bounced} (get bounce buffers {})",
        if c.bounces_gets() { "on" } else { "off" }
    ))
}
