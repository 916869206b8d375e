//! What the kernel says about this process and the machine (`/proc`): the
//! resident set, CPU ticks and load, recorded beside every measurement.

use crate::report::RssParts;

/// A `/proc/self/status` field in KiB (0 when unreadable).
fn status_kib(status: &str, field: &str) -> u64 {
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// VmRSS of this process in KiB (0 when /proc is unreadable).
pub fn vm_rss_kib() -> u64 {
    status_kib(
        &std::fs::read_to_string("/proc/self/status").unwrap_or_default(),
        "VmRSS:",
    )
}

/// This process's resident set split as the kernel reports it.
pub fn rss_parts() -> RssParts {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    RssParts {
        total_kib: status_kib(&s, "VmRSS:"),
        anon_kib: status_kib(&s, "RssAnon:"),
        file_kib: status_kib(&s, "RssFile:"),
        shmem_kib: status_kib(&s, "RssShmem:"),
    }
}

/// Busy and total clock ticks of all CPUs (/proc/stat); busy excludes idle
/// and iowait.
pub fn cpu_ticks() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/stat").unwrap_or_default();
    let v: Vec<u64> = s
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let total: u64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0) + v.get(4).copied().unwrap_or(0);
    (total - idle, total)
}

/// CPU ticks of this process and its waited-for children (utime, stime,
/// cutime, cstime of /proc/self/stat).
pub fn own_ticks() -> u64 {
    let s = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = s.rsplit_once(") ").map_or("", |(_, r)| r);
    after
        .split_whitespace()
        .skip(11)
        .take(4)
        .map(|x| x.parse::<u64>().unwrap_or(0))
        .sum()
}

/// /proc/loadavg's three averages.
pub fn loadavg() -> [f64; 3] {
    let s = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = s.split_whitespace().map(|x| x.parse().unwrap_or(f64::NAN));
    [
        it.next().unwrap_or(f64::NAN),
        it.next().unwrap_or(f64::NAN),
        it.next().unwrap_or(f64::NAN),
    ]
}
