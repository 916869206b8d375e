//! A gather by AM Long: every rank (rank 0 too) sends `blocks` Longs of
//! `len` bytes into its own slots of rank 0's segment. Rank 0's handler
//! reads each payload where it landed through its `Payload` (others may be
//! writing other slots of the segment meanwhile, so the handler copies
//! instead of holding a slice): the 8-byte header by `read`, the whole
//! block by `equals`; then rank 0 checks the gathered segment.
//!
//! `gasnetrun-ofi -n 4 target/release/examples/long_gather [blocks] [len]`

#![forbid(unsafe_code)]

use conduit::client::{Client, Payload, Token};
use gex_examples::Outcome;
use std::cell::Cell;

const H_BLOCK: u8 = 201;

/// Rank 0's tally of the blocks its handler checked.
#[derive(Default)]
struct Tally {
    good: Cell<usize>,
    bad: Cell<usize>,
}

/// Block `k` of rank `src`: an 8-byte header (src, k) then a pattern.
fn block(src: usize, k: usize, len: usize) -> Vec<u8> {
    let mut b: Vec<u8> = (0..len)
        .map(|i| (i as u8).wrapping_mul(13) ^ (src as u8).wrapping_add(k as u8))
        .collect();
    b[..4].copy_from_slice(&(src as u32).to_le_bytes());
    b[4..8].copy_from_slice(&(k as u32).to_le_bytes());
    b
}

fn on_block(tok: &mut Token<'_, Tally>, args: &[u32], p: Payload<'_>) {
    let (src, k) = (tok.source(), args[0] as usize);
    let mut head = [0u8; 8];
    let head_ok = p.read(0, &mut head).is_ok()
        && head[..4] == (src as u32).to_le_bytes()
        && head[4..] == (k as u32).to_le_bytes();
    let t = tok.state();
    if head_ok && p.equals(&block(src, k, p.len())) {
        t.good.set(t.good.get() + 1);
    } else {
        t.bad.set(t.bad.get() + 1);
    }
}

fn run(c: &Client<Tally>, (blocks, len): (usize, usize)) -> Outcome {
    let (me, n) = (c.rank(), c.size());
    if len > c.max_long() {
        return Err(format!(
            "len={len} is more than the largest Long ({} bytes)",
            c.max_long()
        )
        .into());
    }
    c.on_request_long(H_BLOCK, 1, on_block)?;
    c.attach_segment(gex_examples::segment_bytes(
        "ranks x blocks x len",
        &[n, blocks, len],
    )?)?;
    c.barrier()?;
    for k in 0..blocks {
        let at = (me * blocks + k) * len;
        c.request_long(0, H_BLOCK, &[k as u32], &block(me, k, len), at)?;
    }
    if me != 0 {
        return Ok(None);
    }
    let want = n * blocks;
    let t = c.state();
    c.block_until(|| t.good.get() + t.bad.get() == want)?;
    if t.bad.get() > 0 {
        return Err(format!("{} of {want} blocks were wrong in the handler", t.bad.get()).into());
    }
    let mut got = vec![0u8; len];
    for src in 0..n {
        for k in 0..blocks {
            c.segment_read((src * blocks + k) * len, &mut got)?;
            if got != block(src, k, len) {
                return Err(format!("block {k} of rank {src} is wrong in the segment").into());
            }
        }
    }
    Ok(Some(format!(
        "long_gather: ok: {want} Longs of {len} bytes from {n} ranks, checked in the handler and in the segment"
    )))
}

fn main() {
    gex_examples::run_example(
        "long_gather",
        || {
            let blocks = gex_examples::count_arg("long_gather", 1, "blocks", 16, 1)?;
            let len = gex_examples::count_arg("long_gather", 2, "len", 4096, 8)?;
            Ok((blocks, len))
        },
        Tally::default(),
        run,
    )
}
