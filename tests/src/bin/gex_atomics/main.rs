//! Remote atomics conformance program, run under `gasnetrun-ofi`. Usage:
//! `gex-atomics <mode>`:
//!
//! * `all`: for every type (i32, u32, i64, u64, f32, f64), a domain with
//!   every operation valid on it; each rank performs each operation on a
//!   word of the next rank's segment with known operands and checks the
//!   fetched value and the word afterwards against GASNet-EX's semantics.
//! * `fadd <n>`: every rank performs `n` fetch-and-adds of 1 on one u64 of
//!   rank 0; the fetched values of each rank increase, and the word ends
//!   at ranks x n.
//! * `lock <n>`: a compare-and-swap spin lock on rank 0 guards a counter
//!   read with `get` and written with `put` (not atomic); each rank enters
//!   `n` times; the counter ends at ranks x n.
//! * `bad`: an operation outside the domain, a misaligned target, a target
//!   outside the segment, a bit-wise operation on floats: each refused with
//!   its message, nothing performed.
//! * `team <n>`: the job split into odd and even ranks; a domain over each
//!   half (`Team::atomic_domain`); every member performs `n`
//!   fetch-and-adds on one u64 of its team's rank 0 (named by team rank),
//!   which ends at the team's size x n, and the other team's counter is
//!   untouched; members creating different domains are refused.
//! * `lat <n>`: rank 0 times `n` fetch-and-adds on rank 1 (after a warm-up)
//!   and prints the median of 5 rounds in microseconds.
//! * `pair <n>`: native against Active Message in one job: two domains
//!   (`atomic_domain_with`, one each way, on different words), rank 0
//!   times 15 blocks of `n` fetch-and-adds on rank 1 with each, the two
//!   blocks of a pair back to back (native first in even pairs, AM first
//!   in odd ones), and prints each domain's median block and the median of
//!   the pairs' ratios, which the machine's speed changes between runs
//!   (and within one) move far less than two separate runs' figures; both
//!   words are checked afterwards. Needs a provider with native atomics
//!   (and, with every rank on one host, `GASNET_SUPERNODE_MAXSIZE=1` or
//!   `GASNET_OFI_ATOMICS=native`).
//! * `choose`: `atomic_domain_with(Auto)` ends as `atomic_domain` does
//!   under `GASNET_OFI_ATOMICS=auto` (under `native` or `am`
//!   `atomic_domain` follows the variable); a rank whose domain is invalid
//!   (no operation) fails with its error and the others with the
//!   mismatch; `Am` on a split team's domain works by team rank; ranks choosing
//!   differently (rank 0 `Am`, the others `Native`) are all refused, none
//!   left waiting: rank 0 with the mismatch, the others with the mismatch
//!   or, where native atomics cannot run, their refusal.
//!
//! Rank 0 prints one summary line, `gex-atomics <mode>: ok: ...`; errors
//! print `gex-atomics: rank R: ...` and end the job with code 1.

#![forbid(unsafe_code)]

mod choice;

use conduit::client::{AtomicOp, AtomicType, AtomicValue, Client, OpSet};
use std::time::Instant;
use tests::program::expect_err;
use tests::{fail, Fallible};

const SEG: usize = 1 << 20;

/// Operands per type: a start value, `a` and `b` (chosen so float results
/// are exact).
fn operands(ty: AtomicType, me: usize) -> (u64, u64, u64) {
    let m = me as i64;
    match ty {
        AtomicType::F32 => (
            (10.0f32 + m as f32).to_bits() as u64,
            2.5f32.to_bits() as u64,
            (10.0f32 + m as f32).to_bits() as u64,
        ),
        AtomicType::F64 => (
            (10.0f64 + m as f64).to_bits(),
            (-3.25f64).to_bits(),
            (10.0f64 + m as f64).to_bits(),
        ),
        _ => (
            ty.mask((0x5a5a_1234_0f0f_00f0u64).wrapping_add(me as u64)),
            ty.mask(0xffff_0000_3c3c_ff01u64),
            ty.mask((0x5a5a_1234_0f0f_00f0u64).wrapping_add(me as u64)),
        ),
    }
}

fn check_type<V: AtomicValue>(c: &Client) -> Fallible<(usize, &'static str)> {
    let ty = V::TYPE;
    let ops: Vec<AtomicOp> = OpSet::all_for(ty).iter().collect();
    let ad = c.atomic_domain::<V>(&ops)?;
    let (me, n) = (c.rank(), c.size());
    let peer = (me + 1) % n;
    // Each rank owns the word at 64 * its rank in its successor's segment.
    let off = 64 * me;
    let mut checks = 0;
    for op in ops {
        for cas_hit in [true, false] {
            if !matches!(op, AtomicOp::Cas | AtomicOp::Fcas) && !cas_hit {
                continue;
            }
            let (start, a, mut b) = operands(ty, me);
            let a = if matches!(op, AtomicOp::Cas | AtomicOp::Fcas) {
                if cas_hit {
                    start
                } else {
                    ty.mask(start ^ 1)
                }
            } else {
                a
            };
            if matches!(op, AtomicOp::Cas | AtomicOp::Fcas) {
                b = operands(ty, me).1;
            }
            ad.set(peer, off, V::from_bits(start))?;
            let got = ad.op(peer, off, op, V::from_bits(a), V::from_bits(b))?;
            if op.is_fetching() != got.is_some() {
                return Err(fail(format!("{op} on {ty}: fetched {got:?}")));
            }
            if let Some(v) = got {
                if v.to_bits() != start {
                    return Err(fail(format!(
                        "{op} on {ty}: fetched {v:?}, expected {:?}",
                        V::from_bits(start)
                    )));
                }
            }
            let now = ad.get(peer, off)?;
            let want = op.apply(ty, start, a, b).unwrap_or(start);
            if now.to_bits() != want {
                return Err(fail(format!(
                    "{op} on {ty} (a={:?}, b={:?}): target holds {now:?}, expected {:?}",
                    V::from_bits(a),
                    V::from_bits(b),
                    V::from_bits(want)
                )));
            }
            checks += 1;
        }
    }
    if ty.is_float() {
        let bits = |x: f64| {
            if ty.size() == 4 {
                (x as f32).to_bits() as u64
            } else {
                x.to_bits()
            }
        };
        // One operation from `start` with operands `a`, `b`: the target
        // must hold `want`, as the rule's own evaluation says.
        let one = |op: AtomicOp, start: u64, a: u64, b: u64, want: u64| -> Fallible<()> {
            ad.set(peer, off, V::from_bits(start))?;
            ad.op(peer, off, op, V::from_bits(a), V::from_bits(b))?;
            let now = ad.get(peer, off)?.to_bits();
            if now != want || op.apply(ty, start, a, b).unwrap_or(start) != want {
                return Err(fail(format!(
                    "{op} on {ty} of {:?} with {:?}, {:?}: target holds {:?}, expected {:?}",
                    V::from_bits(start),
                    V::from_bits(a),
                    V::from_bits(b),
                    V::from_bits(now),
                    V::from_bits(want)
                )));
            }
            Ok(())
        };
        // Cas compares bit patterns on every implementation (as FI_CSWAP):
        // -0.0 does not match 0.0 either way, a NaN matches the same NaN.
        let nine = bits(9.0);
        for (start, expect) in [(-0.0, 0.0), (0.0, -0.0), (f64::NAN, f64::NAN)] {
            let (start, expect) = (bits(start), bits(expect));
            let want = if start == expect { nine } else { start };
            for op in [AtomicOp::Cas, AtomicOp::Fcas] {
                one(op, start, expect, nine, want)?;
                checks += 1;
            }
        }
        // Min and Max store the operand only when it compares less
        // (greater) than the target (FI_MIN / FI_MAX): equal (0.0, -0.0)
        // or unordered (a NaN) leaves the target as it was.
        for (start, operand) in [(0.0, -0.0), (-0.0, 0.0), (f64::NAN, 1.0), (1.0, f64::NAN)] {
            let (start, operand) = (bits(start), bits(operand));
            for op in [AtomicOp::Min, AtomicOp::Fmin, AtomicOp::Max, AtomicOp::Fmax] {
                one(op, start, operand, 0, start)?;
                checks += 1;
            }
        }
    }
    Ok((checks, ad.implementation().name()))
}

fn all(c: &Client) -> Fallible<String> {
    let mut checks = 0;
    let mut imps = Vec::new();
    for r in [
        check_type::<i32>(c)?,
        check_type::<u32>(c)?,
        check_type::<i64>(c)?,
        check_type::<u64>(c)?,
        check_type::<f32>(c)?,
        check_type::<f64>(c)?,
    ] {
        checks += r.0;
        imps.push(r.1);
    }
    c.barrier()?;
    Ok(format!(
        "ok: {checks} operation x type checks per rank (i32 u32 i64 u64 f32 f64 by {})",
        imps.join(" ")
    ))
}

fn fadd(c: &Client, count: usize) -> Fallible<String> {
    let ad = c.atomic_domain::<u64>(&[AtomicOp::Fadd, AtomicOp::Get, AtomicOp::Set])?;
    if c.rank() == 0 {
        ad.set(0, 0, 0)?;
    }
    c.barrier()?;
    let mut last = None;
    for _ in 0..count {
        let v = ad.fetch_add(0, 0, 1)?;
        if last.is_some_and(|l| v <= l) {
            return Err(fail(format!("fetched {v} after {last:?}")));
        }
        last = Some(v);
    }
    c.barrier()?;
    let total = ad.get(0, 0)?;
    let want = (c.size() * count) as u64;
    if total != want {
        return Err(fail(format!("the word holds {total}, expected {want}")));
    }
    Ok(format!(
        "ok: {} ranks x {count} fetch-and-adds summed to {total} ({})",
        c.size(),
        ad.implementation().name()
    ))
}

fn lock(c: &Client, count: usize) -> Fallible<String> {
    const LOCK: usize = 0;
    const COUNTER: usize = 4096;
    let ad = c.atomic_domain::<i64>(&[AtomicOp::Fcas, AtomicOp::Set])?;
    if c.rank() == 0 {
        ad.set(0, LOCK, 0)?;
        c.put_u64(0, COUNTER, 0)?;
    }
    c.barrier()?;
    let me = c.rank() as i64 + 1;
    let mut spins = 0u64;
    for _ in 0..count {
        while ad.compare_swap(0, LOCK, 0, me)? != 0 {
            spins += 1;
        }
        let v = c.get_u64(0, COUNTER)?;
        c.put_u64(0, COUNTER, v + 1)?;
        ad.set(0, LOCK, 0)?;
    }
    c.barrier()?;
    let total = c.get_u64(0, COUNTER)?;
    let want = (c.size() * count) as u64;
    if total != want {
        return Err(fail(format!("the counter holds {total}, expected {want}")));
    }
    Ok(format!(
        "ok: {} ranks x {count} entries under a compare-and-swap lock counted {total} ({}; rank {} spun {spins} times)",
        c.size(),
        ad.implementation().name(),
        c.rank()
    ))
}

fn bad(c: &Client) -> Fallible<String> {
    let ad = c.atomic_domain::<u64>(&[AtomicOp::Fadd, AtomicOp::Get, AtomicOp::Set])?;
    let peer = (c.rank() + 1) % c.size();
    let off = 8 * c.rank();
    ad.set(peer, off, 7)?;
    c.barrier()?;
    expect_err(
        "an operation outside the domain",
        ad.op(peer, off, AtomicOp::Add, 1, 0),
        "atomic operation add is not one of the domain's operations {set, get, fadd}",
    )?;
    expect_err(
        "a misaligned target",
        ad.fetch_add(peer, off + 4, 1),
        &format!(
            "atomic target offset {} is not a multiple of u64's size 8",
            off + 4
        ),
    )?;
    expect_err(
        "a target outside the segment",
        ad.fetch_add(peer, SEG, 1),
        &format!("8 bytes at offset {SEG} do not fit in the {SEG}-byte segment of rank {peer}"),
    )?;
    expect_err(
        "a rank outside the job",
        ad.fetch_add(c.size(), 0, 1),
        &format!("rank {} is not in the job (size {})", c.size(), c.size()),
    )?;
    expect_err(
        "xor on f64",
        c.atomic_domain::<f64>(&[AtomicOp::Fadd, AtomicOp::Xor]),
        "atomic operation xor is not valid on f64 (bit-wise operations are for integer types)",
    )?;
    c.barrier()?;
    let v = ad.get(peer, off)?;
    if v != 7 {
        return Err(fail(format!(
            "the word changed to {v}: a refused operation ran"
        )));
    }
    c.barrier()?;
    Ok("ok: 5 bad requests refused and nothing was performed".into())
}

fn team(c: &Client, count: usize) -> Fallible<String> {
    let world = c.world()?;
    let half = world
        .split(Some((c.rank() % 2) as u32), 0)?
        .ok_or_else(|| fail("the split left this rank out"))?;
    let ad = half.atomic_domain::<u64>(&[AtomicOp::Fadd, AtomicOp::Get, AtomicOp::Set])?;
    // Word (rank % 2) of team rank 0's segment; the other parity's word
    // at the same place stays 0 (each team writes only its own).
    let off = 8 * (c.rank() % 2);
    if half.rank() == 0 {
        ad.set(0, off, 0)?;
        ad.set(0, 8 - off, 0)?;
    }
    c.barrier()?;
    let mut last = None;
    for _ in 0..count {
        let v = ad.fetch_add(0, off, 1)?;
        if last.is_some_and(|l| v <= l) {
            return Err(fail(format!("fetched {v} after {last:?}: not increasing")));
        }
        last = Some(v);
    }
    half.barrier()?;
    let got = ad.get(0, off)?;
    let want = (half.size() * count) as u64;
    if got != want {
        return Err(fail(format!("the team's counter is {got}, want {want}")));
    }
    let other = ad.get(0, 8 - off)?;
    if other != 0 {
        return Err(fail(format!("the other parity's word is {other}, want 0")));
    }
    // Members disagreeing on the domain: every member is told.
    let mismatch = if half.rank() == 0 {
        half.atomic_domain::<u64>(&[AtomicOp::Fadd]).map(|_| ())
    } else {
        half.atomic_domain::<u64>(&[AtomicOp::Get]).map(|_| ())
    };
    if half.size() > 1 {
        expect_err(
            "members creating different domains",
            mismatch,
            "atomic domain mismatch: ranks created domains with different types, operations or implementations (every rank must create the same domains in the same order, with the same GASNET_OFI_ATOMICS, the same AtomicsMode given to atomic_domain_with and the same gex_AD_Create flags)",
        )?;
    }
    c.barrier()?;
    Ok(format!(
        "ok: {} teams x {count} fetch-and-adds per member summed to team size x {count} ({})",
        c.size().min(2),
        ad.implementation().name()
    ))
}

fn lat(c: &Client, count: usize) -> Fallible<String> {
    let ad = c.atomic_domain::<u64>(&[AtomicOp::Fadd])?;
    c.barrier()?;
    let mut rounds = Vec::new();
    if c.rank() == 0 && c.size() > 1 {
        for _ in 0..count / 10 {
            ad.fetch_add(1, 0, 1)?;
        }
        for _ in 0..5 {
            let t = Instant::now();
            for _ in 0..count {
                ad.fetch_add(1, 0, 1)?;
            }
            rounds.push(t.elapsed().as_secs_f64() * 1e6 / count as f64);
        }
    }
    // Rank 1 serves AM-based atomics from inside the barrier's progress.
    c.barrier()?;
    rounds.sort_by(f64::total_cmp);
    Ok(format!(
        "ok: fetch-and-add latency {:.3} us (median of 5 x {count}, {})",
        rounds.get(2).copied().unwrap_or(0.0),
        ad.implementation().name()
    ))
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(1).cloned().unwrap_or_default();
    let count = || tests::program::count_arg(&args, 2, 1000);
    let c = tests::program::init("gex-atomics");
    let r = c
        .attach_segment(SEG)
        .map_err(Into::into)
        .and_then(|()| match mode.as_str() {
            "all" => all(&c),
            "fadd" => count().and_then(|n| fadd(&c, n)),
            "lock" => count().and_then(|n| lock(&c, n)),
            "bad" => bad(&c),
            "lat" => count().and_then(|n| lat(&c, n)),
            "pair" => count().and_then(|n| choice::pair(&c, n)),
            "choose" => choice::choose(&c),
            "team" => count().and_then(|n| team(&c, n)),
            _ => Err(fail(format!(
                "unknown mode {mode:?}: expected all, fadd <n>, lock <n>, bad, team <n>, lat <n>, pair <n> or choose"
            ))),
        });
    tests::program::finish(&c, "gex-atomics", &mode, r);
}
