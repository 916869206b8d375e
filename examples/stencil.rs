//! A 1-D heat stencil: each rank owns `cells` points of a rod in its
//! segment, with one halo cell on each side. Every step a rank puts its
//! boundary values into its neighbours' halos with NBI puts, syncs, meets
//! the others at a barrier, and updates. Rank 0 gathers the result with
//! gets and compares it with the same computation done serially.
//!
//! `gasnetrun-ofi -n 4 target/release/examples/stencil [cells] [steps]`

#![forbid(unsafe_code)]

use conduit::client::{Client, Error, NbiSync};
use gex_examples::Outcome;

/// Segment layout (f64 each): [left halo][cells...][right halo].
fn off(i: usize) -> usize {
    8 * i
}

fn initial(global: usize, total: usize) -> f64 {
    // A hot spot in the middle, cold elsewhere.
    if global * 3 >= total && global * 3 < 2 * total {
        100.0
    } else {
        0.0
    }
}

fn step_serial(u: &[f64]) -> Vec<f64> {
    let n = u.len();
    (0..n)
        .map(|i| {
            let l = if i == 0 { 0.0 } else { u[i - 1] };
            let r = if i + 1 == n { 0.0 } else { u[i + 1] };
            u[i] + 0.25 * (l - 2.0 * u[i] + r)
        })
        .collect()
}

/// Cell `i` of this rank's segment (halos are written by the neighbours'
/// puts, read after the barrier that follows them).
fn read(c: &Client, i: usize) -> Result<f64, Error> {
    let seg = c.segment()?;
    Ok(f64::from_bits(seg.read_volatile_u64(off(i))?))
}

fn run(c: &Client, cells: usize, steps: usize) -> Outcome {
    let (me, n) = (c.rank(), c.size());
    let too_many = || format!("cells={cells} per rank on {n} ranks is too many");
    let total = cells.checked_mul(n).ok_or_else(too_many)?;
    c.attach_segment(gex_examples::segment_bytes(
        "8 x (cells + 2)",
        &[8, cells.checked_add(2).ok_or_else(too_many)?],
    )?)?;
    let mut u: Vec<f64> = (0..cells).map(|i| initial(me * cells + i, total)).collect();
    // Halos at the rod's ends stay 0 (fixed boundary).
    c.segment_write(off(0), &0f64.to_ne_bytes())?;
    c.segment_write(off(cells + 1), &0f64.to_ne_bytes())?;
    c.barrier()?;
    for _ in 0..steps {
        let first = u[0].to_ne_bytes();
        let last = u[cells - 1].to_ne_bytes();
        c.rma_scope(|s| {
            if me > 0 {
                // My first cell is the right halo of my left neighbour.
                s.put_nbi(me - 1, off(cells + 1), &first)?;
            }
            if me + 1 < n {
                s.put_nbi(me + 1, off(0), &last)?;
            }
            s.sync_nbi(NbiSync::Puts)
        })?;
        c.barrier()?;
        let left = read(c, 0)?;
        let right = read(c, cells + 1)?;
        let mut next = vec![0.0; cells];
        for i in 0..cells {
            let l = if i == 0 { left } else { u[i - 1] };
            let r = if i + 1 == cells { right } else { u[i + 1] };
            next[i] = u[i] + 0.25 * (l - 2.0 * u[i] + r);
        }
        u = next;
        // Nobody overwrites a halo before its owner has read it.
        c.barrier()?;
    }
    for (i, v) in u.iter().enumerate() {
        c.segment_write(off(i + 1), &v.to_ne_bytes())?;
    }
    c.barrier()?;
    let mut summary = None;
    if me == 0 {
        let mut all = Vec::with_capacity(total);
        for r in 0..n {
            let mut b = vec![0u8; 8 * cells];
            c.get(r, off(1), &mut b)?;
            all.extend(
                b.chunks_exact(8)
                    .map(|w| f64::from_ne_bytes(w.try_into().unwrap_or([0; 8]))),
            );
        }
        let mut serial: Vec<f64> = (0..total).map(|g| initial(g, total)).collect();
        for _ in 0..steps {
            serial = step_serial(&serial);
        }
        let err = all
            .iter()
            .zip(&serial)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0f64, f64::max);
        if err > 1e-9 {
            return Err(format!("distributed result differs from the serial one by {err}").into());
        }
        let heat: f64 = all.iter().sum();
        summary = Some(format!(
            "stencil: ok: {total} cells on {n} ranks, {steps} steps, matches the serial result (max error {err:e}, heat {heat:.3})"
        ));
    }
    Ok(summary)
}

fn main() {
    gex_examples::run_example(
        "stencil",
        || {
            Ok((
                gex_examples::count_arg("stencil", 1, "cells", 1000, 1)?,
                gex_examples::count_arg("stencil", 2, "steps", 200, 0)?,
            ))
        },
        (),
        |c, (cells, steps)| run(c, cells, steps),
    )
}
