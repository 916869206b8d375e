//! `gex-rma flood`: floods of gets from the next rank, each get into its
//! own part of a process buffer, one sync per flood: 48 of 256 KiB, 24 of
//! 1 MiB, then 3 of 6 MiB + 5 bytes (larger than the default window, so
//! sent in pieces), each checked byte for byte; then the count of get
//! transfers that waited for the peer's get window (`GET_WINDOW_WAITS`)
//! and the window in effect (`GASNET_OFI_GET_WINDOW`), with the provider,
//! whether the segment was advised for huge pages
//! (`GASNET_OFI_SEGMENT_HUGEPAGES`) and how many of its bytes they back.

use super::{pattern, SEG};
use conduit::client::{Client, NbiSync};
use tests::{fail, Fallible};

/// (gets, bytes each) per flood.
const FLOODS: [(usize, usize); 3] = [(48, 256 << 10), (24, 1 << 20), (3, (6 << 20) + 5)];

pub(crate) fn flood(c: &Client) -> Fallible<String> {
    c.attach_segment(SEG)?;
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    c.segment_write(0, &pattern(me + 29, SEG))?;
    c.barrier()?;
    let want = pattern(peer + 29, SEG);
    let before = c.stats().get_window_waits;
    let mut gets = 0;
    let mut buf = vec![0u8; 24 << 20];
    for (count, len) in FLOODS {
        buf.fill(0);
        // Sources step through the peer's segment at odd offsets.
        let at = |i: usize| (i * 40_961) % (SEG - len);
        c.rma_scope(|s| {
            for (i, part) in buf.chunks_mut(len).take(count).enumerate() {
                s.get_nbi(peer, at(i), part)?;
            }
            s.sync_nbi(NbiSync::Gets)
        })?;
        for (i, part) in buf.chunks(len).take(count).enumerate() {
            if part != &want[at(i)..at(i) + len] {
                let j = (0..len).find(|&j| part[j] != want[at(i) + j]).unwrap_or(0);
                return Err(fail(format!(
                    "get {i} of {count} of {len} bytes: byte {j} differs"
                )));
            }
        }
        gets += count;
    }
    let waits = c.stats().get_window_waits - before;
    // The segment was written whole: where it is in huge pages, every
    // whole huge page of it is resident.
    let seg = c.segment()?;
    let huge = seg
        .huge_page_bytes()
        .map_err(|e| fail(format!("reading /proc/self/smaps: {e}")))?;
    c.barrier()?;
    Ok(format!(
        "ok: {gets} gets in 3 floods checked; GET_WINDOW_WAITS={waits} window={} provider={} \
segment_hugepages={} huge_bytes={huge}",
        c.get_window(),
        c.provider(),
        seg.hugepages_advised()
    ))
}
