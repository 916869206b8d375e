//! One step of `gex-rma all`: a put with one of the forms, checked at the
//! target, and a get back with the matching form, checked at the
//! initiator (and into its own segment for the NB and NBI forms).

use super::{pattern, SEG};
use conduit::client::{Client, NbiSync};
use tests::{fail, Fallible};

pub(crate) const FORMS: [&str; 7] = [
    "blocking",
    "nb-now",
    "nb-deferred",
    "nb-lc",
    "nbi-now",
    "nbi-deferred",
    "value",
];

/// One step: rank r puts `len` bytes into rank r+1's segment with `form`,
/// the target checks its segment, the initiator gets the bytes back with
/// the matching get form and compares.
pub(crate) fn step(c: &Client, form: usize, len: usize, seed: usize) -> Fallible<()> {
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    let pred = (me + n - 1) % n;
    let off = 1 + (len * 7 + form) % 13 + (form * 977) % 4096;
    let data = pattern(seed * 31 + me, len);
    // Put.
    match FORMS[form] {
        "blocking" => c.put(peer, off, &data)?,
        "nb-now" => c.rma_scope(|s| {
            let ev = s.put_nb(peer, off, &data)?;
            s.wait(ev)
        })?,
        "nb-deferred" => c.rma_scope(|s| {
            let ev = s.put_nb_deferred(peer, off, &data)?;
            let mut e = Some(ev);
            while !s.test(&mut e)? {}
            Ok(())
        })?,
        "nb-lc" => c.rma_scope(|s| {
            let (remote, local) = s.put_nb_lc(peer, off, &data)?;
            s.wait(local)?;
            s.wait(remote)
        })?,
        "nbi-now" => c.rma_scope(|s| {
            s.put_nbi(peer, off, &data)?;
            s.sync_nbi(NbiSync::Puts)
        })?,
        "nbi-deferred" => c.rma_scope(|s| {
            s.put_nbi_deferred(peer, off, &data)?;
            s.sync_nbi(NbiSync::All)
        })?,
        _ => {
            // Value form: 8-byte words (len rounded down, at least one).
            for (i, w) in data.chunks_exact(8).enumerate() {
                c.put_u64(
                    peer,
                    off + 8 * i,
                    u64::from_ne_bytes(w.try_into().unwrap_or([0; 8])),
                )?;
            }
        }
    }
    let checked = if FORMS[form] == "value" {
        len / 8 * 8
    } else {
        len
    };
    c.barrier()?;
    // Target side: my predecessor wrote into my segment.
    let mut mine = vec![0u8; checked];
    c.segment_read(off_for(pred, form, len), &mut mine)?;
    let want = pattern(seed * 31 + pred, len);
    if mine[..] != want[..checked] {
        let j = (0..checked).find(|&j| mine[j] != want[j]).unwrap_or(0);
        return Err(fail(format!(
            "{} put of {len} bytes: target byte {j} differs",
            FORMS[form]
        )));
    }
    c.barrier()?;
    // Initiator side: get it back with the matching form.
    let mut back = vec![0u8; checked];
    match FORMS[form] {
        "blocking" | "nb-lc" => c.get(peer, off, &mut back)?,
        "nb-now" | "nb-deferred" => c.rma_scope(|s| {
            let ev = s.get_nb(peer, off, &mut back)?;
            s.wait(ev)
        })?,
        "nbi-now" | "nbi-deferred" => c.rma_scope(|s| {
            s.get_nbi(peer, off, &mut back)?;
            s.sync_nbi(NbiSync::Gets)
        })?,
        _ => {
            for i in 0..checked / 8 {
                let v = c.get_u64(peer, off + 8 * i)?;
                back[8 * i..8 * i + 8].copy_from_slice(&v.to_ne_bytes());
            }
        }
    }
    if back[..] != data[..checked] {
        let j = (0..checked).find(|&j| back[j] != data[j]).unwrap_or(0);
        return Err(fail(format!(
            "{} get of {len} bytes: byte {j} differs",
            FORMS[form]
        )));
    }
    // The NB and NBI forms also get into this rank's own segment, at an odd
    // offset near its end (nobody writes there during the steps).
    let local = SEG - checked - 5;
    match FORMS[form] {
        "nb-now" | "nb-deferred" => c.rma_scope(|s| {
            let ev = s.get_nb_to_segment(peer, off, local, checked)?;
            s.wait(ev)
        })?,
        "nbi-now" | "nbi-deferred" => c.rma_scope(|s| {
            s.get_nbi_to_segment(peer, off, local, checked)?;
            s.sync_nbi(NbiSync::Gets)
        })?,
        _ => return Ok(c.barrier()?),
    }
    c.segment_read(local, &mut back)?;
    if back[..] != data[..checked] {
        let j = (0..checked).find(|&j| back[j] != data[j]).unwrap_or(0);
        return Err(fail(format!(
            "{} get of {len} bytes into the own segment: byte {j} differs",
            FORMS[form]
        )));
    }
    Ok(c.barrier()?)
}

fn off_for(_rank: usize, form: usize, len: usize) -> usize {
    1 + (len * 7 + form) % 13 + (form * 977) % 4096
}
