//! `gex-rma bad`: out-of-segment, overflowing and negative offsets are
//! refused, and nothing is written.

use conduit::client::{Client, Error};
use tests::{fail, Fallible};

pub(crate) fn bad(c: &Client) -> Fallible<String> {
    let seg = 1 << 16;
    c.attach_segment(seg)?;
    c.barrier()?;
    let peer = (c.rank() + 1) % c.size();
    let mut n = 0;
    let mut expect = |r: Result<(), Error>, want: String| -> Fallible<()> {
        match r {
            Err(e) if e.to_string() == want => {
                n += 1;
                Ok(())
            }
            other => Err(fail(format!("expected {want:?}, got {other:?}"))),
        }
    };
    let data = vec![0xabu8; 16];
    expect(
        c.put(peer, seg - 8, &data),
        format!(
            "16 bytes at offset {} do not fit in the 65536-byte segment of rank {peer}",
            seg - 8
        ),
    )?;
    expect(
        c.put(peer, seg, &data[..1]),
        format!("1 bytes at offset {seg} do not fit in the 65536-byte segment of rank {peer}"),
    )?;
    let overflow = usize::MAX - 3;
    expect(
        c.put(peer, overflow, &data),
        format!(
            "16 bytes at offset {overflow} do not fit in the 65536-byte segment of rank {peer}"
        ),
    )?;
    let negative = (-8i64) as usize;
    expect(
        c.put(peer, negative, &data),
        format!(
            "16 bytes at offset {negative} do not fit in the 65536-byte segment of rank {peer}"
        ),
    )?;
    let mut dst = vec![0u8; 16];
    expect(
        c.get(peer, seg - 1, &mut dst),
        format!(
            "16 bytes at offset {} do not fit in the 65536-byte segment of rank {peer}",
            seg - 1
        ),
    )?;
    expect(
        c.rma_scope(|s| s.put_nbi(peer, negative, &data)),
        format!(
            "16 bytes at offset {negative} do not fit in the 65536-byte segment of rank {peer}"
        ),
    )?;
    expect(
        c.rma_scope(|s| s.put_nb(peer, seg - 4, &[1u8; 5000]).map(|_| ())),
        format!(
            "5000 bytes at offset {} do not fit in the 65536-byte segment of rank {peer}",
            seg - 4
        ),
    )?;
    // A get whose destination misses this rank's own segment names this
    // rank, and nothing is sent.
    let me = c.rank();
    expect(
        c.rma_scope(|s| s.get_nbi_to_segment(peer, 0, seg - 8, 16)),
        format!(
            "16 bytes at offset {} do not fit in the 65536-byte segment of rank {me}",
            seg - 8
        ),
    )?;
    expect(
        c.rma_scope(|s| s.get_nb_to_segment(peer, 0, negative, 16).map(|_| ())),
        format!("16 bytes at offset {negative} do not fit in the 65536-byte segment of rank {me}"),
    )?;
    c.barrier()?;
    // Nothing was written anywhere in my segment.
    let mut all = vec![0u8; seg];
    c.segment_read(0, &mut all)?;
    if all.iter().any(|&b| b != 0) {
        return Err(fail("a refused put wrote into the segment"));
    }
    c.barrier()?;
    Ok(format!(
        "ok: {n} bad requests refused and nothing was written"
    ))
}
