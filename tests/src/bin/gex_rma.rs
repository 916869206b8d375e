//! RMA conformance program (modelled on GASNet's testsmall, testlarge and
//! testgasnet), run under `gasnetrun-ofi`. Usage: `gex-rma <mode>`:
//!
//! * `all`: every form (blocking, NB now/deferred/with-LC, NBI now/deferred,
//!   value forms; put and get) at sizes 1 B .. 4 MiB with unaligned offsets,
//!   data checked at the target (in its segment) and at the initiator (got
//!   back, and for the NB and NBI forms got again into its own segment); every put path (inject, bounce, block) taken, proved by the
//!   counters; hundreds of outstanding NB and NBI operations synced in one
//!   call; a storm of 20,000 small NBI puts (aggregated where
//!   `GASNET_OFI_PUT_AGGREGATE_LIMIT` allows, proved by NB_PUT_AGGREGATE)
//!   checked at their target.
//! * `bad`: out-of-segment, overflowing and negative (wrapped) offsets are
//!   refused and nothing is written (remote ranges, and a get's destination
//!   in the own segment).
//! * `attach <bytes>`: attach a segment of that size and report.
//! * `memory`: attach 1 MiB, put and get 64 KiB with the next rank, then
//!   every rank prints `gex-rma memory: rank R: VmRSS X KiB, RssAnon Y KiB`
//!   (its resident set from /proc/self/status).
//!
//! Rank 0 prints one summary line; errors print `gex-rma: rank R: ...` and
//! end the job with code 1.

#![forbid(unsafe_code)]

use conduit::client::{Client, Error, NbiSync};
use tests::{fail, report, Fallible};

const SEG: usize = 16 << 20;
/// Each step writes into the peer's segment at an odd offset below this.
const AREA: usize = 8 << 20;

fn pattern(seed: usize, len: usize) -> Vec<u8> {
    (0..len)
        .map(|j| (j.wrapping_mul(2654435761) >> 7 ^ seed.wrapping_mul(131) ^ j) as u8)
        .collect()
}

const FORMS: [&str; 7] = [
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
fn step(c: &Client, form: usize, len: usize, seed: usize) -> Fallible<()> {
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

fn all(c: &Client) -> Fallible<String> {
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

/// Small NBI puts in the storm.
const STORM_PUTS: usize = 20_000;
/// Where the storm writes (above the 1,000 blocks of 256 bytes).
const STORM_AT: usize = AREA + (1 << 20);

/// Size of the storm's put `i` (1 .. 256 bytes, most of them small).
fn storm_len(i: usize) -> usize {
    [8, 1, 24, 8, 200, 8, 3, 256][i % 8]
}

/// Every rank puts `STORM_PUTS` small NBI puts of 1 .. 256 bytes to
/// disjoint places of the next rank's segment, and a few to its own, in one
/// scope with one sync; after a barrier each checks what its predecessor
/// (and itself) wrote there.
fn small_put_storm(c: &Client) -> Fallible<String> {
    let (me, n) = (c.rank(), c.size());
    let (peer, pred) = ((me + 1) % n, (me + n - 1) % n);
    let mut offsets = Vec::with_capacity(STORM_PUTS);
    let mut at = STORM_AT;
    for i in 0..STORM_PUTS {
        offsets.push(at);
        at += storm_len(i);
    }
    let own = at + 64;
    assert!(own + 64 < SEG);
    c.rma_scope(|s| {
        for (i, &off) in offsets.iter().enumerate() {
            s.put_nbi(peer, off, &pattern(me * STORM_PUTS + i, storm_len(i)))?;
            if i % 5000 == 0 {
                s.put_nbi(me, own + i / 5000 * 8, &pattern(i, 8))?;
            }
        }
        s.sync_nbi(NbiSync::Puts)
    })?;
    c.barrier()?;
    let mut got = vec![0u8; at - STORM_AT];
    c.segment_read(STORM_AT, &mut got)?;
    for (i, &off) in offsets.iter().enumerate() {
        let at = off - STORM_AT;
        if got[at..at + storm_len(i)] != pattern(pred * STORM_PUTS + i, storm_len(i))[..] {
            return Err(fail(format!(
                "small NBI put {i} of {STORM_PUTS} from rank {pred} ({} bytes at {off}) differs",
                storm_len(i)
            )));
        }
    }
    let mut mine = vec![0u8; 8];
    for k in 0..STORM_PUTS.div_ceil(5000) {
        c.segment_read(own + k * 8, &mut mine)?;
        if mine != pattern(k * 5000, 8) {
            return Err(fail(format!(
                "small NBI put {k} to this rank itself differs"
            )));
        }
    }
    Ok(format!(
        "{STORM_PUTS} small NBI puts (1..256 bytes) checked at their target"
    ))
}

fn bad(c: &Client) -> Fallible<String> {
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

/// A `/proc/self/status` field in KiB.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn memory(c: &Client) -> Fallible<String> {
    c.attach_segment(1 << 20)?;
    let next = (c.rank() + 1) % c.size();
    let data = pattern(c.rank(), 64 << 10);
    c.put(next, 0, &data)?;
    let mut back = vec![0u8; 64 << 10];
    c.get(next, 0, &mut back)?;
    if back != data {
        return Err(fail("the 64 KiB read back differs"));
    }
    c.barrier()?;
    println!(
        "gex-rma memory: rank {}: VmRSS {} KiB, RssAnon {} KiB",
        c.rank(),
        status_kib("VmRSS:"),
        status_kib("RssAnon:")
    );
    use std::io::Write;
    let _ = std::io::stdout().flush();
    c.barrier()?;
    Ok(format!("ok: {} ranks reported", c.size()))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    if mode == "threads" {
        tests::threads::main("gex-rma", &args, 30, |_| (), tests::threads::rma);
    }
    let c = match Client::init() {
        Ok(c) => c,
        Err(e) => {
            gex_env::eprintln_whole!("gex-rma: {}", e.report());
            std::process::exit(1);
        }
    };
    if mode == "std-exit" {
        // An application that ends with std::process::exit, its client
        // never closed (the shm provider's objects must still go).
        std::process::exit(3);
    }
    let r = match mode.as_str() {
        "all" => all(&c),
        "bad" => bad(&c),
        "memory" => memory(&c),
        "attach" | "attach-hang" => {
            let r = tests::program::count_arg(&args, 2, 1 << 20).and_then(|bytes| {
                c.attach_segment(bytes)
                    .map(|_| format!("ok: attached {bytes} bytes"))
                    .map_err(|e| e.into())
            });
            if r.is_ok() && mode == "attach-hang" {
                println!("rank {} attached", c.rank());
                use std::io::Write;
                let _ = std::io::stdout().flush();
                // Wait to be killed (the test kills one rank with SIGKILL).
                loop {
                    if let Err(e) = c.poll() {
                        gex_env::eprintln_whole!("gex-rma: rank {}: {}", c.rank(), e.report());
                        c.exit(1);
                    }
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
            r
        }
        _ => Err(fail(format!(
            "usage: gex-rma all|bad|memory|attach <bytes>|std-exit (got {mode:?})"
        ))),
    };
    match r {
        Ok(line) => {
            if c.rank() == 0 {
                println!("gex-rma {mode}: {line}");
            }
            // No rank exits before rank 0 printed: a peer's exit would end
            // rank 0 too (collective exit).
            if let Err(e) = c.barrier() {
                gex_env::eprintln_whole!("gex-rma: rank {}: {}", c.rank(), e.report());
                c.exit(1);
            }
            c.exit(0);
        }
        Err(e) => {
            gex_env::eprintln_whole!("gex-rma: rank {}: {}", c.rank(), report(&*e));
            c.exit(1);
        }
    }
}
