//! `gex-rma owned`: non-blocking puts and gets whose handles own their
//! buffers (`put_nb_owned`, `get_nb_owned`), kept in a queue across calls
//! as a runtime would: every rank writes blocks of several sizes into the
//! next rank's segment and reads them back, some handles waited, some
//! tested to completion, some dropped (a drop completes the operation).

use super::{pattern, AREA};
use conduit::client::Client;
use std::collections::VecDeque;
use tests::{fail, Fallible};

/// Block sizes: below the inject limit, a page, and over a MiB (split
/// where the provider's largest message is smaller).
const SIZES: [usize; 5] = [8, 300, 4096, 65_537, (1 << 20) + 3];

pub(crate) fn owned(c: &Client) -> Fallible<String> {
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    let from = (me + n - 1) % n;
    // Blocks side by side from AREA, each at an odd offset.
    let offsets: Vec<usize> = SIZES
        .iter()
        .scan(AREA + 1, |at, &len| {
            let o = *at;
            *at += len + 4097;
            Some(o)
        })
        .collect();
    c.barrier()?;
    let mut puts = VecDeque::new();
    for (k, (&len, &o)) in SIZES.iter().zip(&offsets).enumerate() {
        puts.push_back((k, c.put_nb_owned(peer, o, pattern(me * 10 + k, len))?));
    }
    let mut dropped = 0;
    while let Some((k, h)) = puts.pop_front() {
        if k % 2 == 1 {
            drop(h);
            dropped += 1;
        } else if h.wait()? != pattern(me * 10 + k, SIZES[k]) {
            return Err(fail(format!("put {k}: the source came back changed")));
        }
    }
    c.barrier()?;
    // Read back what the previous rank wrote here and what this rank
    // wrote at the next.
    let mut gets = VecDeque::new();
    for (k, (&len, &o)) in SIZES.iter().zip(&offsets).enumerate() {
        gets.push_back((k, me, from, c.get_nb_owned(me, o, vec![0u8; len])?));
        gets.push_back((k, peer, me, c.get_nb_owned(peer, o, vec![0u8; len])?));
    }
    let mut tested = 0;
    while let Some((k, at, writer, h)) = gets.pop_front() {
        if k == 0 {
            while !h.test()? {}
            tested += 1;
        }
        let got = h.wait()?;
        if got != pattern(writer * 10 + k, SIZES[k]) {
            return Err(fail(format!(
                "rank {me}: block {k} ({} bytes) read from rank {at} is not what rank {writer} put",
                SIZES[k]
            )));
        }
    }
    c.barrier()?;
    Ok(format!(
        "ok: {} owned puts ({dropped} completed by their drop) and {} owned gets ({tested} tested to completion) of 8 B..1 MiB+3 checked",
        SIZES.len(),
        2 * SIZES.len()
    ))
}
