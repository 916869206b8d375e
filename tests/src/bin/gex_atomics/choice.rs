//! Domains whose implementation the program chooses
//! (`atomic_domain_with`): `pair` (native against Active Message, timed
//! in one job) and `choose` (the choice's rules).

use conduit::client::{AtomicImpl, AtomicOp, Client, Error};
use conduit::config::AtomicsMode;
use std::time::Instant;
use tests::program::expect_err;
use tests::{fail, Fallible};

/// Blocks per domain in `pair`.
const PAIRS: usize = 15;

/// `gex-atomics pair <count>` (the module's header in main.rs).
pub fn pair(c: &Client, count: usize) -> Fallible<String> {
    if c.size() < 2 {
        return Err(fail(
            "pair times rank 0's operations on rank 1: run it on 2 ranks or more",
        ));
    }
    let ops = [AtomicOp::Fadd, AtomicOp::Get];
    let native = c.atomic_domain_with::<u64>(&ops, AtomicsMode::Native)?;
    let by_am = c.atomic_domain_with::<u64>(&ops, AtomicsMode::Am)?;
    for (ad, want) in [
        (&native, AtomicImpl::Native),
        (&by_am, AtomicImpl::ActiveMessage),
    ] {
        if ad.implementation() != want {
            return Err(fail(format!(
                "a domain asked to be {} is {}",
                want.name(),
                ad.implementation().name()
            )));
        }
    }
    // Words 0 (native) and 8 (AM) of rank 1; different words, so neither
    // domain touches what the other operates on.
    let (w_native, w_am) = (0, 8);
    c.barrier()?;
    let mut summary = format!("ok: served ({PAIRS} pairs of {count})");
    if c.rank() == 0 {
        summary = time_pairs(count, |native_first| {
            let block =
                |ad: &conduit::client::AtomicDomain<'_, u64, _, _, _>, w| -> Fallible<f64> {
                    let t = Instant::now();
                    for _ in 0..count {
                        ad.fetch_add(1, w, 1)?;
                    }
                    Ok(t.elapsed().as_secs_f64() * 1e6 / count.max(1) as f64)
                };
            if native_first {
                let n = block(&native, w_native)?;
                Ok((n, block(&by_am, w_am)?))
            } else {
                let a = block(&by_am, w_am)?;
                Ok((block(&native, w_native)?, a))
            }
        })?;
        // Checked before the barrier below, while rank 1 still serves
        // both domains.
        let want = ((PAIRS + 1) * count) as u64;
        for (ad, w) in [(&native, w_native), (&by_am, w_am)] {
            let got = ad.get(1, w)?;
            if got != want {
                return Err(fail(format!(
                    "rank 1's {} word is {got} after {want} fetch-and-adds",
                    ad.implementation().name()
                )));
            }
        }
    }
    // Rank 1 serves both kinds from inside the barrier's progress; the
    // domains are dropped only after it.
    c.barrier()?;
    Ok(summary)
}

/// A warm-up pair, then `PAIRS` pairs of `one(native_first)` (native, AM
/// microseconds per operation); the summary line.
fn time_pairs(count: usize, mut one: impl FnMut(bool) -> Fallible<(f64, f64)>) -> Fallible<String> {
    one(true)?;
    let mut pairs = Vec::new();
    for i in 0..PAIRS {
        pairs.push(one(i % 2 == 0)?);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let ratios: Vec<f64> = pairs.iter().map(|(n, a)| n / a).collect();
    let (lo, hi) = ratios
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &r| (l.min(r), h.max(r)));
    Ok(format!(
        "ok: fetch-and-add latency native {:.3} us, by AM {:.3} us, native / AM {:.3} \
         (median of {PAIRS} pairs of {count}; pairs {lo:.3}..{hi:.3})",
        median(pairs.iter().map(|p| p.0).collect()),
        median(pairs.iter().map(|p| p.1).collect()),
        median(ratios),
    ))
}

/// `gex-atomics choose` (the module's header in main.rs).
pub fn choose(c: &Client) -> Fallible<String> {
    let ops = [AtomicOp::Fadd, AtomicOp::Get, AtomicOp::Set];
    let by_env = c.atomic_domain::<u64>(&ops)?;
    let auto = c.atomic_domain_with::<u64>(&ops, AtomicsMode::Auto)?;
    // `Auto` chooses as `GASNET_OFI_ATOMICS=auto` does, whatever the job's
    // setting; `atomic_domain` follows the setting.
    let env = c.config().extended.atomics;
    let want_env = match env {
        AtomicsMode::Auto => auto.implementation(),
        AtomicsMode::Native => AtomicImpl::Native,
        AtomicsMode::Am => AtomicImpl::ActiveMessage,
    };
    if by_env.implementation() != want_env {
        return Err(fail(format!(
            "atomic_domain is {} under GASNET_OFI_ATOMICS={} (atomic_domain_with(Auto): {})",
            by_env.implementation().name(),
            env.name(),
            auto.implementation().name()
        )));
    }
    // A rank whose domain is invalid (no operation) where the others ask
    // for a valid one: every rank fails, none holds a domain the others
    // lack.
    let r = if c.rank() == 0 {
        c.atomic_domain_with::<u64>(&[], AtomicsMode::Am)
            .map(|_| ())
    } else {
        c.atomic_domain_with::<u64>(&ops, AtomicsMode::Am)
            .map(|_| ())
    };
    match (c.rank(), r) {
        (0, Err(Error::Atomic(_))) => {}
        (0, r) => return Err(fail(format!("a domain with no operation: {r:?}"))),
        (_, Err(Error::AtomicDomainMismatch)) => {}
        (_, r) => {
            return Err(fail(format!(
                "a valid domain where rank 0's had no operation: {r:?}, want the mismatch"
            )))
        }
    }
    c.barrier()?;
    // A split team's domain chosen by Active Message, targets by team rank.
    let world = c.world()?;
    let half = world
        .split(Some((c.rank() % 2) as u32), 0)?
        .ok_or_else(|| fail("the split left this rank out"))?;
    let had = half.atomic_domain_with::<u64>(&ops, AtomicsMode::Am)?;
    if had.implementation() != AtomicImpl::ActiveMessage {
        return Err(fail("a team's domain asked to be am is not"));
    }
    let off = 64 + 8 * (c.rank() % 2);
    if half.rank() == 0 {
        had.set(0, off, 0)?;
    }
    half.barrier()?;
    for _ in 0..100 {
        had.fetch_add(0, off, 1)?;
    }
    half.barrier()?;
    let got = had.get(0, off)?;
    if got != 100 * half.size() as u64 {
        return Err(fail(format!(
            "the team's AM domain counted {got}, want {}",
            100 * half.size()
        )));
    }
    c.barrier()?;
    // Ranks choosing differently: every rank is refused, none waits.
    let mode = if c.rank() == 0 {
        AtomicsMode::Am
    } else {
        AtomicsMode::Native
    };
    let mismatch = Error::AtomicDomainMismatch.to_string();
    let r = c.atomic_domain_with::<u64>(&ops, mode).map(|_| ());
    if c.rank() == 0 || c.size() == 1 {
        if c.size() > 1 {
            expect_err(
                "rank 0 choosing am where the others choose native",
                r,
                &mismatch,
            )?;
        }
    } else {
        match r {
            Err(Error::AtomicDomainMismatch)
            | Err(Error::NotNative { .. })
            | Err(Error::NativeUnreachable) => {}
            Err(e) => return Err(fail(format!("choosing native where rank 0 chose am: {e}"))),
            Ok(()) => return Err(fail("choosing native where rank 0 chose am succeeded")),
        }
    }
    c.barrier()?;
    Ok(format!(
        "ok: auto chose {} as GASNET_OFI_ATOMICS=auto does; a team domain by am counted {got}; differing choices and an invalid domain refused",
        auto.implementation().name()
    ))
}
