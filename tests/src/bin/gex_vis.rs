//! VIS conformance program (vector, indexed and strided puts and gets),
//! run under `gasnetrun-ofi`. Usage: `gex-vis <mode>`:
//!
//! * `all`: each rank writes into the next rank's segment with every form
//!   (few large pieces, which go by RMA with several iovs per call, and
//!   hundreds of small ones, which are packed into AMs over a provider),
//!   checks the region with a plain get against an image computed locally,
//!   and reads it back with the matching VIS get; the strided case is a
//!   4x5x6 sub-block of u32s moved between a 13x11x7 local array and a
//!   10x10x10 remote one.
//! * `bad`: a piece outside the segment, unequal totals, overflowing
//!   strides, a piece outside the local buffer: each refused with its
//!   message and nothing written.
//! * `window`: a strided get and put of 2 Mi one-byte pieces each, checked,
//!   with the peak resident set growing by at most 16 MiB over them (the
//!   pieces are planned a window at a time).
//!
//! Rank 0 prints one summary line; errors print `gex-vis: rank R: ...`
//! and end the job with code 1.

#![forbid(unsafe_code)]

use conduit::client::{Client, Error};
use tests::program::expect_err;
use tests::{fail, Fallible};

#[path = "gex_vis/window.rs"]
mod window;

const SEG: usize = 4 << 20;
/// The region of the target's segment the checks use.
const AREA: usize = 1 << 20;

fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (j.wrapping_mul(2654435761) >> 5 ^ seed.wrapping_mul(77) ^ j) as u8 | 1)
        .collect()
}

/// Zero the area of `peer`, run `put`, compare the area with `image`.
fn check_put(
    c: &Client,
    peer: usize,
    what: &str,
    image: &[u8],
    put: impl FnOnce() -> Result<(), Error>,
) -> Fallible<()> {
    c.put(peer, 0, &vec![0u8; AREA])?;
    put()?;
    let mut got = vec![0u8; AREA];
    c.get(peer, 0, &mut got)?;
    if got != image {
        let at = got.iter().zip(image).position(|(a, b)| a != b);
        return Err(fail(format!("{what}: the target's bytes differ at {at:?}")));
    }
    Ok(())
}

/// Apply `(local, remote, len)` copies to a zero image of the area.
fn image(src: &[u8], copies: &[(usize, usize, usize)]) -> Vec<u8> {
    let mut img = vec![0u8; AREA];
    for &(l, r, n) in copies {
        img[r..r + n].copy_from_slice(&src[l..l + n]);
    }
    img
}

fn vector(c: &Client, peer: usize, seed: usize, small: bool) -> Fallible<()> {
    // Local pieces and remote pieces of different sizes, equal totals.
    let (piece, count) = if small { (12, 600) } else { (50_000, 6) };
    let src = pattern(seed, piece * count * 2);
    let src_pieces: Vec<(usize, usize)> = (0..count).map(|k| (k * 2 * piece + 3, piece)).collect();
    // Remote: twice as many pieces of half the size, spread out.
    let half = piece / 2;
    let dst: Vec<(usize, usize)> = (0..2 * count)
        .map(|k| (k * (half + 17) + 5, half))
        .collect();
    let mut copies = Vec::new();
    for (k, d) in dst.iter().enumerate() {
        let (sp, so) = (k / 2, (k % 2) * half);
        copies.push((src_pieces[sp].0 + so, d.0, half));
    }
    let img = image(&src, &copies);
    let what = if small {
        "vector put, small pieces"
    } else {
        "vector put"
    };
    check_put(c, peer, what, &img, || {
        c.put_vector(peer, &dst, &src, &src_pieces)
    })?;
    let mut back = vec![0u8; src.len()];
    c.get_vector(peer, &mut back, &src_pieces, &dst)?;
    for &(o, n) in &src_pieces {
        if back[o..o + n] != src[o..o + n] {
            return Err(fail(format!("{what}: get_vector read back other bytes")));
        }
    }
    Ok(())
}

fn indexed(c: &Client, peer: usize, seed: usize, small: bool) -> Fallible<()> {
    let (len, count) = if small { (8, 1000) } else { (70_000, 5) };
    let src = pattern(seed + 1, len * count + 64);
    let src_off: Vec<usize> = (0..count).rev().map(|k| k * len + 7).collect();
    let dst_off: Vec<usize> = (0..count).map(|k| k * (len + 9)).collect();
    let copies: Vec<_> = src_off
        .iter()
        .zip(&dst_off)
        .map(|(&s, &d)| (s, d, len))
        .collect();
    let img = image(&src, &copies);
    let what = if small {
        "indexed put, small pieces"
    } else {
        "indexed put"
    };
    check_put(c, peer, what, &img, || {
        c.put_indexed(peer, &dst_off, len, &src, &src_off, len)
    })?;
    let mut back = vec![0u8; src.len()];
    c.get_indexed(peer, &mut back, &src_off, len, &dst_off, len)?;
    for &o in &src_off {
        if back[o..o + len] != src[o..o + len] {
            return Err(fail(format!("{what}: get_indexed read back other bytes")));
        }
    }
    Ok(())
}

fn strided(c: &Client, peer: usize, seed: usize) -> Fallible<()> {
    // Local array 13x11x7 u32 (x fastest), remote 10x10x10 at offset 4096.
    let (lx, ly, lz) = (13usize, 11usize, 7usize);
    let (rx, ry) = (10usize, 10usize);
    let e = 4usize;
    let src = pattern(seed + 2, lx * ly * lz * e);
    let (ox, oy, oz) = (2usize, 1usize, 0usize); // sub-block corner, local
    let (px, py, pz) = (5usize, 3usize, 2usize); // sub-block corner, remote
    let count = [4usize, 5, 6];
    let lstr = [(e * lx) as isize, (e * lx * ly) as isize];
    let rstr = [(e * rx) as isize, (e * rx * ry) as isize];
    let loff = e * (ox + lx * (oy + ly * oz));
    let base = 4096;
    let roff = base + e * (px + rx * (py + ry * pz));
    let mut copies = Vec::new();
    for z in 0..count[2] {
        for y in 0..count[1] {
            let l = loff + e * lx * (y + ly * z);
            let r = roff + e * rx * (y + ry * z);
            copies.push((l, r, e * count[0]));
        }
    }
    let img = image(&src, &copies);
    // GASNet-EX's format: elemsz is one contiguous row of count[0] u32s,
    // then 5 rows and 6 planes.
    let (elemsz, levels) = (e * count[0], [count[1], count[2]]);
    check_put(c, peer, "strided put of a 3-D sub-block", &img, || {
        c.put_strided(peer, roff, &rstr, &src, loff, &lstr, elemsz, &levels)
    })?;
    let mut back = vec![0u8; src.len()];
    c.get_strided(peer, &mut back, loff, &lstr, roff, &rstr, elemsz, &levels)?;
    for &(l, _, n) in &copies {
        if back[l..l + n] != src[l..l + n] {
            return Err(fail("strided get of a 3-D sub-block read back other bytes"));
        }
    }
    // The same sub-block element by element (elemsz 4, three levels).
    check_put(c, peer, "strided put, 3 levels of u32", &img, || {
        c.put_strided(
            peer,
            roff,
            &[e as isize, rstr[0], rstr[1]],
            &src,
            loff,
            &[e as isize, lstr[0], lstr[1]],
            e,
            &[count[0], count[1], count[2]],
        )
    })?;
    Ok(())
}

fn all(c: &Client) -> Fallible<String> {
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    let mut checks = 0;
    for small in [false, true] {
        vector(c, peer, me, small)?;
        indexed(c, peer, me, small)?;
        checks += 2;
    }
    strided(c, peer, me)?;
    checks += 2;
    let st = c.stats();
    Ok(format!(
        "ok: {checks} VIS put/get pairs per rank (vector, indexed with few large and many small pieces; strided 3-D sub-block) checked; VIS_IOV_CALLS={} VIS_PACKED={}",
        st.vis_iov_calls, st.vis_packed
    ))
}

fn bad(c: &Client) -> Fallible<String> {
    let peer = (c.rank() + 1) % c.size();
    c.put(peer, 0, &vec![0u8; AREA])?;
    let src = vec![0xabu8; 4096];
    expect_err(
        "a piece outside the segment",
        c.put_vector(peer, &[(0, 16), (SEG - 8, 16)], &src, &[(0, 32)]),
        &format!(
            "VIS piece 1: remote bytes {}..{} lie outside the target's {SEG}-byte segment",
            SEG - 8,
            SEG + 8
        ),
    )?;
    expect_err(
        "unequal totals",
        c.put_vector(peer, &[(0, 16)], &src, &[(0, 32)]),
        "VIS vector sizes disagree: the local list totals 32 bytes, the remote list 16 bytes",
    )?;
    expect_err(
        "strides beyond the address space",
        c.put_strided(peer, 0, &[isize::MAX], &src, 0, &[8], 8, &[3]),
        &format!(
            "VIS strided region: remote bytes 0..18446744073709551622 lie outside the target's {SEG}-byte segment"
        ),
    )?;
    expect_err(
        "a piece outside the local buffer",
        c.put_indexed(peer, &[0, 64], 16, &src, &[0, 4090], 16),
        "VIS index 1: local bytes 4090..4106 lie outside the 4096-byte local buffer",
    )?;
    let mut got = vec![1u8; AREA];
    c.get(peer, 0, &mut got)?;
    if got.iter().any(|&b| b != 0) {
        return Err(fail("a refused VIS transfer wrote into the segment"));
    }
    Ok("ok: 4 bad VIS requests refused and nothing was written".into())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    let c = tests::program::init("gex-vis");
    let seg = if mode == "window" { window::SEG } else { SEG };
    let r = c.attach_segment(seg).map_err(Into::into).and_then(|()| {
        c.barrier()?;
        match mode.as_str() {
            "all" => all(&c),
            "bad" => bad(&c),
            "window" => window::window(&c),
            _ => Err(fail(format!(
                "unknown mode {mode:?}: expected all, bad or window"
            ))),
        }
    });
    tests::program::finish(&c, "gex-vis", &mode, r);
}
