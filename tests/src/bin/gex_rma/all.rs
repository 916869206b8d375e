//! `gex-rma all`: every form at every size, hundreds of operations
//! outstanding and synced in one call, the small-put storm, and the put
//! paths the counters say were taken.

use super::steps::{step, FORMS};
use super::storm::{small_put_storm, STORM_PUTS};
use super::{pattern, AREA, SEG};
use conduit::client::{Client, NbiSync};
use tests::{fail, Fallible};

pub(crate) fn all(c: &Client) -> Fallible<String> {
    c.attach_segment(SEG)?;
    c.barrier()?;
    let mut sizes = vec![
        1usize, 2, 3, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000,
    ];
    sizes.extend([
        4095,
        4096,
        4097,
        8191,
        8193,
        16383,
        16384,
        16385,
        65_537,
        1 << 20,
        (1 << 20) + 3,
        4 << 20,
    ]);
    let mut steps = 0;
    for (k, &len) in sizes.iter().enumerate() {
        assert!(len + 8192 < AREA);
        for (form, name) in FORMS.iter().enumerate() {
            // The value form moves 8 bytes per call: it is checked on
            // sizes up to 64 KiB (8192 calls), not 4 MiB.
            if *name == "value" && !(8..=65_537).contains(&len) {
                continue;
            }
            let t0 = std::time::Instant::now();
            step(c, form, len, k)?;
            if std::env::var_os("GEX_RMA_TIMING").is_some() && c.rank() == 0 {
                gex_env::eprintln_whole!("step {name} {len}: {:?}", t0.elapsed());
            }
            steps += 1;
        }
    }
    // Hundreds outstanding, synced in one call.
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    let many = 500usize;
    let blocks: Vec<Vec<u8>> = (0..many).map(|i| pattern(i + 7, 200)).collect();
    c.rma_scope(|s| {
        let mut evs = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            evs.push(s.put_nb_deferred(peer, AREA + 256 * i, b)?);
        }
        s.wait_all(evs)
    })?;
    let mut gets: Vec<Vec<u8>> = vec![vec![0u8; 200]; many];
    c.rma_scope(|s| {
        for (i, b) in blocks.iter().enumerate() {
            s.put_nbi(peer, AREA + 256 * many + 256 * i, b)?;
        }
        s.sync_nbi(NbiSync::Puts)?;
        for (i, g) in gets.iter_mut().enumerate() {
            s.get_nbi(peer, AREA + 256 * i, g)?;
        }
        s.sync_nbi(NbiSync::All)
    })?;
    if gets != blocks {
        let bad: Vec<usize> = (0..many).filter(|&i| gets[i] != blocks[i]).collect();
        let zero = bad
            .iter()
            .filter(|&&i| gets[i].iter().all(|&x| x == 0))
            .count();
        // Read the bad blocks again with blocking gets: right now means the
        // data arrived after its completion was reported (or the NBI get
        // read early); still wrong means the put never landed.
        let mut again = vec![0u8; 200];
        let mut late = 0;
        for &i in &bad {
            c.get(peer, AREA + 256 * i, &mut again)?;
            late += usize::from(again == blocks[i]);
        }
        return Err(fail(format!(
            "{many} outstanding NB puts / NBI gets: data differs in {} blocks (first {}, {} of them all zero; right when read again: {late})",
            bad.len(),
            bad[0],
            zero
        )));
    }
    let storm = small_put_storm(c)?;
    let mut back = vec![0u8; 200];
    for i in [0, many / 2, many - 1] {
        c.get(peer, AREA + 256 * many + 256 * i, &mut back)?;
        if back != blocks[i] {
            return Err(fail(format!("NBI put {i} of {many}: data differs")));
        }
    }
    c.barrier()?;
    let pc = c.put_counts();
    let shared = c.stats().shared_rma;
    if c.is_shared(peer) {
        // Every put and get with the peer is a copy through shared memory.
        if pc.inject + pc.bounce + pc.block + pc.aggregate != 0 || shared == 0 {
            return Err(fail(format!(
                "the peer is in this supernode, yet puts took provider paths ({pc:?}) or none was copied (RMA_SHARED {shared})"
            )));
        }
    } else if pc.inject == 0 || pc.bounce == 0 || pc.block == 0 {
        return Err(fail(format!("not every put path was taken: {pc:?}")));
    } else if c.put_limits().aggregate > 0 && pc.aggregate < STORM_PUTS as u64 {
        return Err(fail(format!(
            "small NBI puts were not aggregated (limit {}): {pc:?}",
            c.put_limits().aggregate
        )));
    } else if c.put_limits().aggregate == 0 && pc.aggregate != 0 {
        return Err(fail(format!(
            "puts were aggregated with aggregation off: {pc:?}"
        )));
    }
    Ok(format!(
        "ok: {steps} put/get steps of sizes 1 B..4 MiB checked on both sides, {many} NB puts and {} NBI operations synced in one call, {storm}; NB_PUT_INJECT={} NB_PUT_BOUNCE={} NB_PUT_BLOCK={} NB_PUT_AGGREGATE={} PUT_BATCHES={} RMA_SHARED={shared} RMA_POST_POLLS={}",
        2 * many,
        pc.inject,
        pc.bounce,
        pc.block,
        pc.aggregate,
        c.stats().put_batches,
        c.stats().rma_post_polls
    ))
}
