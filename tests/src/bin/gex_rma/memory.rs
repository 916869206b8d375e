//! `gex-rma memory`: a little RMA with the next rank, then every rank's
//! resident set.

use super::pattern;
use conduit::client::Client;
use tests::{fail, Fallible};

/// A `/proc/self/status` field in KiB.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

pub(crate) fn memory(c: &Client) -> Fallible<String> {
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
