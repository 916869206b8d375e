//! Memory per rank over tcp;ofi_rxm (issue 15, item 6): with the profile's
//! sizing of ofi_rxm's pools (`providers.toml`: 1 KiB bounce buffers, one
//! block each, eager/segmented limits of the largest AM), every rank of a
//! 16-rank job holds at most 32 MiB resident after attaching a segment and
//! moving data with a peer (`gex-rma memory`), with the shared-memory path
//! off so that the provider's endpoints carry the traffic. A user's own
//! `FI_OFI_RXM_BUFFER_SIZE` is kept, and then the pools are libfabric's
//! size again (the check can fail).

use std::time::Duration;
use tests::{job, serial};

const RMA: &str = env!("CARGO_BIN_EXE_gex-rma");
const LIMIT_KIB: u64 = 32 * 1024;

/// Each rank's VmRSS (KiB) from a `gex-rma memory` job of `n` ranks.
fn rss(n: usize, vars: &[(&str, &str)]) -> Vec<u64> {
    let mut all = vec![("GASNET_SUPERNODE_MAXSIZE", "1")];
    all.extend_from_slice(vars);
    let r = job(
        RMA,
        n,
        &["memory"],
        "tcp;ofi_rxm",
        &all,
        Duration::from_secs(180),
    );
    assert_eq!(r.code, Some(0), "stdout {}\nstderr {}", r.stdout, r.stderr);
    let v: Vec<u64> = r
        .stdout
        .lines()
        .filter_map(|l| l.strip_prefix("gex-rma memory: rank "))
        .filter_map(|l| l.split("VmRSS ").nth(1))
        .filter_map(|l| l.split(' ').next()?.parse().ok())
        .collect();
    assert_eq!(v.len(), n, "a line per rank expected:\n{}", r.stdout);
    v
}

#[test]
fn a_tcp_rxm_rank_holds_at_most_32_mib_at_16_ranks() {
    let _g = serial();
    let v = rss(16, &[]);
    let max = *v.iter().max().unwrap();
    eprintln!("VmRSS per rank (KiB): {v:?}");
    assert!(
        max <= LIMIT_KIB,
        "largest VmRSS {max} KiB > {LIMIT_KIB} KiB: {v:?}"
    );
    // The user's value wins: libfabric's 16 KiB buffers (one block of
    // 1,025 receives and one of sends per endpoint, about 17 MB each; two
    // endpoints: about 65 MB) are far above the limit, the profile's 1 KiB
    // ones (about 15 MB in all) far below 1.5 times it.
    // (An explicit FI_OFI_RXM_MSG_RX_SIZE above 1024 makes libfabric 2.1's
    // tcp;ofi_rxm refuse the endpoint, so the count stays the profile's.)
    let v = rss(2, &[("FI_OFI_RXM_BUFFER_SIZE", "16384")]);
    let min = *v.iter().min().unwrap();
    assert!(
        min > 3 * LIMIT_KIB / 2,
        "with the user's rxm sizes: {v:?} KiB"
    );
}
