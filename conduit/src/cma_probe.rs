//! A start-up probe of the kernel's cross-memory copy (`process_vm_readv`,
//! what the shm provider reads with): is it slow when the destination
//! starts a few bytes after the source within a page? On AMD Zen 3 it runs
//! at about a quarter of its speed there (`rep movsb` and 4 KiB aliasing:
//! 2.3 against 10 GB/s at 1 MiB); elsewhere the two are level.
//! `GASNET_OFI_GET_BOUNCE=auto` turns the get bounce buffers on where this
//! says slow.

use crate::mem::Mapping;
use std::time::{Duration, Instant};

/// Bytes per timed copy: large enough that the copy, not the system call,
/// is most of the time (about 6 us at 10 GB/s).
const LEN: usize = 64 << 10;
/// Timed copies per offset; the fastest counts.
const TRIALS: usize = 5;
/// The destination's offset after the source's in the slow case.
const SKEW: usize = 16;

/// The fastest of five copies of 64 KiB at each offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyProbe {
    /// Destination at the source's offset within a page.
    pub aligned: Duration,
    /// Destination 16 bytes after it.
    pub skewed: Duration,
}

impl CopyProbe {
    /// The skewed copy takes at least twice as long as the aligned one.
    pub fn slow(&self) -> bool {
        self.skewed >= self.aligned * 2
    }
}

/// Whether shm can read other ranks' memory by cross-memory attach:
/// `FI_SHM_DISABLE_CMA` not set to a true value, and Yama's
/// `ptrace_scope` (absent: no restriction) at 0, or at 1 or 2 with
/// `CAP_SYS_PTRACE` in this process's effective set (ranks are siblings,
/// not descendants, so scope 1 refuses them otherwise; scope 3 refuses
/// everyone). A process reading itself, as [`probe`] does, is allowed
/// whatever these say, so the probe alone cannot tell.
pub fn cross_process_allowed() -> bool {
    if std::env::var(gex_config::libfabric_vars::FI_SHM_DISABLE_CMA).is_ok_and(|v| fi_true(&v)) {
        return false;
    }
    let scope = std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .unwrap_or(0);
    match scope {
        0 => true,
        1 | 2 => std::fs::read_to_string("/proc/self/status")
            .ok()
            .is_some_and(|s| has_cap_sys_ptrace(&s)),
        _ => false,
    }
}

/// libfabric's true words for a boolean variable (`fi_param_get_bool`).
fn fi_true(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "yes" | "true" | "on"
    )
}

/// `CAP_SYS_PTRACE` (bit 19) in the `CapEff` line of `/proc/self/status`.
fn has_cap_sys_ptrace(status: &str) -> bool {
    status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|hex| u64::from_str_radix(hex.trim(), 16).ok())
        .is_some_and(|caps| caps & (1 << 19) != 0)
}

/// Time `process_vm_readv` from this process into itself at both offsets;
/// `None` when the call is refused (no cross-memory attach: the provider
/// then copies otherwise) or the memory cannot be mapped.
pub fn probe() -> Option<CopyProbe> {
    let src = Mapping::anonymous(LEN).ok()?;
    let dst = Mapping::anonymous(LEN + 4096).ok()?;
    let s = src.range(0, LEN)?;
    let d = dst.range(0, LEN + 4096)?;
    // SAFETY: both ranges lie in their mappings (checked by `range`), which
    // this function owns; touching them commits their pages before timing.
    unsafe {
        std::ptr::write_bytes(s, 0x5a, LEN);
        std::ptr::write_bytes(d, 0, LEN + 4096);
    }
    let mut best = [Duration::MAX; 2];
    for _ in 0..TRIALS {
        for (k, off) in [0, SKEW].into_iter().enumerate() {
            let t = Instant::now();
            // SAFETY: `d + off .. + LEN` lies in `dst` (LEN + 4096 bytes)
            // and `s .. + LEN` in `src`, both mapped for this call.
            let n = unsafe { read_self(s, d.add(off), LEN) };
            let e = t.elapsed();
            if n != Some(LEN) {
                return None;
            }
            best[k] = best[k].min(e);
        }
    }
    Some(CopyProbe {
        aligned: best[0],
        skewed: best[1],
    })
}

/// `process_vm_readv` of `len` bytes at `from` into `to`, both in this
/// process; the bytes copied, or `None` on an error.
///
/// # Safety
///
/// `from` readable and `to` writable for `len` bytes.
unsafe fn read_self(from: *const u8, to: *mut u8, len: usize) -> Option<usize> {
    let local = libc::iovec {
        iov_base: to.cast(),
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: from as *mut libc::c_void,
        iov_len: len,
    };
    // SAFETY: one iovec on each side, valid for the call; the kernel
    // writes only `to..to+len`, which the caller lends writable.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    usize::try_from(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The probe runs and copies the bytes it claims to (the verdict
    /// depends on the CPU, so only its form is checked).
    #[test]
    fn probe_times_both_offsets() {
        let p = probe().expect("process_vm_readv into this process itself");
        assert!(p.aligned > Duration::ZERO && p.skewed > Duration::ZERO);
        assert_eq!(p.slow(), p.skewed >= p.aligned * 2);
    }

    #[test]
    fn libfabric_true_words_and_the_ptrace_capability() {
        for v in ["1", "yes", "TRUE", " on "] {
            assert!(fi_true(v), "{v:?}");
        }
        for v in ["0", "no", "false", "off", ""] {
            assert!(!fi_true(v), "{v:?}");
        }
        let root = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001ffffffffff\n";
        let user = "Name:\tx\nCapEff:\t0000000000000000\n";
        let ptrace_only = "CapEff:\t0000000000080000\n";
        assert!(has_cap_sys_ptrace(root));
        assert!(!has_cap_sys_ptrace(user));
        assert!(has_cap_sys_ptrace(ptrace_only));
        assert!(!has_cap_sys_ptrace("no such line"));
    }

    #[test]
    fn read_self_copies() {
        let src: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let mut dst = vec![0u8; 5016];
        // SAFETY: 5000 bytes of `src`, 16 + 5000 of `dst`.
        let n = unsafe { read_self(src.as_ptr(), dst.as_mut_ptr().add(16), 5000) };
        assert_eq!(n, Some(5000));
        assert_eq!(&dst[16..], &src[..]);
    }
}
