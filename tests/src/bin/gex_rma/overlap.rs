//! `overlap`: puts and gets between a rank's segment and itself whose two
//! ranges overlap, blocking and deferred (the raw entry points, which take
//! a pointer into the segment as the local side, as GASNet-EX's C API
//! does). A transfer within a rank is a copy with `memmove`'s result,
//! whatever the shared-memory path and the provider (it used to go
//! through the provider with the path off, and shm copied forwards).
//! The one module of gex-rma allowed `unsafe`: the local side is a raw
//! pointer into the segment.
#![allow(unsafe_code)]

use conduit::client::{Client, RawLocal};
use tests::{fail, Fallible};

const SEG: usize = 1 << 20;

fn pattern(len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (j.wrapping_mul(31) ^ (j >> 7)) as u8)
        .collect()
}

pub fn overlap(c: &Client) -> Fallible<String> {
    c.attach_segment(SEG)?;
    let me = c.rank();
    let base = c.segment()?.as_ptr();
    let mut checks = 0;
    // (from, to, len): the local side at `from`, the remote side at `to`.
    // Copies of 2 KiB and more whose destination starts 1 to 63 bytes
    // after the source modulo 4096 take the conduit's backward copy
    // (conduit/src/copy.rs) where it may: the destination above the
    // source (0 -> 8, 0 -> 4112), or below it without overlap (4080 -> 0
    // for 3000 bytes); below it with overlap (4080 -> 0 for 5000) they
    // must not.
    let cases: [(usize, usize, usize); 9] = [
        (0, 1000, 5000),
        (1000, 0, 5000),
        (0, 8, 40000),
        (8, 0, 40000),
        (3, 5, 100),
        (4096, 0, 200_000),
        (0, 4112, 5000),
        (4080, 0, 3000),
        (4080, 0, 5000),
    ];
    for (from, to, len) in cases {
        for (what, get) in [("put", false), ("get", true)] {
            for local in [RawLocal::Now, RawLocal::Deferred] {
                if get && local == RawLocal::Now {
                    continue;
                }
                let init = pattern(from.max(to) + len);
                c.segment_write(0, &init)?;
                // A get moves remote (`to`) into local (`from`).
                let (src, dst) = if get { (to, from) } else { (from, to) };
                let mut want = init.clone();
                want.copy_within(src..src + len, dst);
                // SAFETY: `base + from .. + len` lies in this rank's
                // segment, which stays mapped; nothing else touches it
                // until the operation is waited for below.
                let op = unsafe {
                    if get {
                        c.raw_get(me, to, base.add(from), len, false)?
                    } else {
                        c.raw_put(me, to, base.add(from), len, local, false)?
                    }
                };
                if let Some(op) = op {
                    c.raw_wait(op)?;
                }
                let mut got = vec![0u8; want.len()];
                c.segment_read(0, &mut got)?;
                if got != want {
                    let first = got.iter().zip(&want).position(|(a, b)| a != b);
                    return Err(fail(format!(
                        "a {what} to self ({local:?}) of {len} bytes from offset {from} to {to}: \
                         first wrong byte at {first:?}"
                    )));
                }
                checks += 1;
            }
        }
    }
    c.barrier()?;
    Ok(format!(
        "ok: {checks} overlapping puts and gets within a rank's own segment have memmove's result"
    ))
}
