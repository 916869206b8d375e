//! Random-access updates (GUPS-style) on a table spread over the ranks:
//!
//! 1. by Active Messages: each update is an AM Short to the owner, whose
//!    handler XORs the value into its slot and acknowledges; the same
//!    random stream applied twice must restore the table;
//! 2. atomics by AM: each update is a fetch-and-add request whose reply
//!    carries the old value; the counters must sum to the number of
//!    increments.
//!
//! `gasnetrun-ofi -n 4 target/release/examples/gups [updates-per-rank]`

#![forbid(unsafe_code)]

use conduit::client::Client;
use gex_examples::Outcome;
use std::cell::{Cell, RefCell};
use std::time::Instant;

const PER_RANK: usize = 1 << 14;
const H_XOR: u8 = 200;
const H_ACK: u8 = 201;
const H_FADD: u8 = 202;
const H_FADD_REP: u8 = 203;
const H_SUM: u8 = 204;

/// A small deterministic random stream (xorshift).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The client's state, which the handlers update (single-threaded client:
/// cells are enough).
#[derive(Default)]
struct Gups {
    table: RefCell<Vec<u64>>,
    counters: RefCell<Vec<u64>>,
    acks: Cell<u64>,
    fadd_replies: Cell<u64>,
    sums: RefCell<Vec<u64>>,
}

fn run(c: &Client<Gups>, updates: usize) -> Outcome {
    let (me, n) = (c.rank(), c.size());
    let st = c.state();
    st.table
        .replace((0..PER_RANK).map(|i| (me * PER_RANK + i) as u64).collect());
    st.counters.replace(vec![0; PER_RANK]);

    c.on_request_short(H_XOR, 3, |tok, a| {
        let v = a[1] as u64 | (a[2] as u64) << 32;
        tok.state().table.borrow_mut()[a[0] as usize] ^= v;
        let _ = tok.reply_short(H_ACK, &[]);
    })?;
    c.on_reply_short(H_ACK, 0, |tok, _| {
        let a = &tok.state().acks;
        a.set(a.get() + 1);
    })?;
    c.on_request_short(H_FADD, 2, |tok, a| {
        let old = {
            let mut cs = tok.state().counters.borrow_mut();
            let old = cs[a[0] as usize];
            cs[a[0] as usize] = old + a[1] as u64;
            old
        };
        let _ = tok.reply_short(H_FADD_REP, &[old as u32, (old >> 32) as u32]);
    })?;
    c.on_reply_short(H_FADD_REP, 2, |tok, _old| {
        let f = &tok.state().fadd_replies;
        f.set(f.get() + 1);
    })?;
    c.on_request_short(H_SUM, 2, |tok, a| {
        tok.state()
            .sums
            .borrow_mut()
            .push(a[0] as u64 | (a[1] as u64) << 32);
    })?;
    c.barrier()?;

    // 1. XOR updates, the same stream twice; up to 64 unacknowledged.
    let total = (PER_RANK * n) as u64;
    let t0 = Instant::now();
    for _pass in 0..2 {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (me as u64 + 1));
        for i in 0..updates {
            let r = rng.next();
            let g = (r % total) as usize;
            let v = rng.next();
            c.request_short(
                g / PER_RANK,
                H_XOR,
                &[(g % PER_RANK) as u32, v as u32, (v >> 32) as u32],
            )?;
            let sent = (i + 1) as u64 + if _pass == 1 { updates as u64 } else { 0 };
            c.block_until(|| st.acks.get() + 64 >= sent)?;
        }
    }
    let want = 2 * updates as u64;
    c.block_until(|| st.acks.get() == want)?;
    let secs = t0.elapsed().as_secs_f64();
    c.barrier()?;
    let restored = st
        .table
        .borrow()
        .iter()
        .enumerate()
        .all(|(i, v)| *v == (me * PER_RANK + i) as u64);

    // 2. Fetch-and-add by AM, one outstanding at a time.
    let mut rng = Rng(0x51_7cc1_b727_220a ^ (me as u64 + 7));
    for i in 0..updates {
        let g = (rng.next() % total) as usize;
        c.request_short(g / PER_RANK, H_FADD, &[(g % PER_RANK) as u32, 1])?;
        c.block_until(|| st.fadd_replies.get() == (i + 1) as u64)?;
    }
    c.barrier()?;
    let local: u64 = st.counters.borrow().iter().sum();
    c.request_short(0, H_SUM, &[local as u32, (local >> 32) as u32])?;
    let mut line = None;
    if me == 0 {
        c.block_until(|| st.sums.borrow().len() == n)?;
        let sum: u64 = st.sums.borrow().iter().sum();
        if sum != (updates * n) as u64 {
            return Err(format!(
                "fetch-and-add counters sum to {sum}, expected {}",
                updates * n
            )
            .into());
        }
        line = Some(format!(
            "gups: ok: {} XOR updates by AM ({:.3} M updates/s over {n} ranks) restored the table; {} fetch-and-adds by AM sum correctly",
            2 * updates * n,
            (2 * updates * n) as f64 / secs / 1e6,
            updates * n
        ));
    }
    if !restored {
        return Err("XOR updates applied twice did not restore the table".into());
    }
    Ok(line)
}

fn main() {
    gex_examples::run_example(
        "gups",
        || gex_examples::count_arg("gups", 1, "updates-per-rank", 20_000, 1),
        Gups::default(),
        run,
    )
}
