//! Transparent huge pages for the segment (`GASNET_OFI_SEGMENT_HUGEPAGES`):
//! the kernel's setting, and how many bytes of a mapping huge pages back.
//!
//! A provider that moves RMA data by cross-memory attach (shm's
//! `process_vm_readv` / `process_vm_writev`) makes the kernel pin the
//! remote process's pages for every transfer, one page table entry at a
//! time for ordinary 4 KiB pages: about a quarter of a 1 MiB get's time on
//! the AMD EPYC machine of docs/PERFORMANCE.md. A segment in 2 MiB huge
//! pages is pinned a huge page at a time, and such gets run twice as fast.
//! The kernel hands out huge pages to anonymous memory only (unless
//! `shmem_enabled` allows them for memory files, which Debian's default
//! does not), so the segment can be in huge pages only where no rank of
//! the supernode maps it.

use std::io;

/// Bytes of one huge page where the kernel does not say
/// (`hpage_pmd_size`): x86-64, and aarch64 with 4 KiB base pages.
pub const HUGE_PAGE: usize = 2 << 20;

/// Bytes of one transparent huge page on this kernel
/// (`/sys/kernel/mm/transparent_hugepage/hpage_pmd_size`: 2 MiB on x86-64,
/// 512 MiB on aarch64 with 64 KiB base pages), else [`HUGE_PAGE`].
pub fn huge_page_size() -> usize {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
        .ok()
        .and_then(|t| t.trim().parse::<usize>().ok())
        .filter(|n| n.is_power_of_two())
        .unwrap_or(HUGE_PAGE)
}

/// Where the kernel's transparent huge page mode is read.
const ENABLED: &str = "/sys/kernel/mm/transparent_hugepage/enabled";

/// The kernel's transparent huge page mode for anonymous memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThpMode {
    /// Every large enough anonymous mapping (`[always]`).
    Always,
    /// Mappings advised with `MADV_HUGEPAGE` (`[madvise]`).
    Madvise,
    /// None (`[never]`).
    Never,
}

impl ThpMode {
    /// Whether a mapping advised with `MADV_HUGEPAGE` can get huge pages.
    pub fn available(self) -> bool {
        self != ThpMode::Never
    }

    /// The word the kernel uses.
    pub fn name(self) -> &'static str {
        match self {
            ThpMode::Always => "always",
            ThpMode::Madvise => "madvise",
            ThpMode::Never => "never",
        }
    }
}

/// The kernel's mode, or `None` where the file is missing (a kernel
/// without transparent huge pages) or unreadable.
pub fn thp_mode() -> Option<ThpMode> {
    parse_mode(&std::fs::read_to_string(ENABLED).ok()?)
}

/// The bracketed word of `always [madvise] never`.
fn parse_mode(text: &str) -> Option<ThpMode> {
    let start = text.find('[')? + 1;
    let end = start + text[start..].find(']')?;
    match &text[start..end] {
        "always" => Some(ThpMode::Always),
        "madvise" => Some(ThpMode::Madvise),
        "never" => Some(ThpMode::Never),
        _ => None,
    }
}

/// Bytes of `[addr, addr + len)` backed by anonymous huge pages, by this
/// process's `/proc/self/smaps`: the `AnonHugePages` of every mapping that
/// lies within the range (one that crosses its edge counts in part,
/// pro rata). For tests and observability, not for hot paths.
pub fn huge_bytes(addr: usize, len: usize) -> io::Result<u64> {
    Ok(smaps_huge_bytes(
        &std::fs::read_to_string("/proc/self/smaps")?,
        addr,
        len,
    ))
}

/// [`huge_bytes`] over the text of an smaps file.
fn smaps_huge_bytes(text: &str, addr: usize, len: usize) -> u64 {
    let (lo, hi) = (addr as u64, addr as u64 + len as u64);
    let mut total = 0u64;
    // The current mapping's overlap with the range, and its size.
    let mut current: Option<(u64, u64)> = None;
    for line in text.lines() {
        if let Some(range) = vma_range(line) {
            let (s, e) = range;
            let overlap = hi.min(e).saturating_sub(lo.max(s));
            current = (overlap > 0).then_some((overlap, e - s));
        } else if let (Some((overlap, size)), Some(rest)) =
            (current, line.strip_prefix("AnonHugePages:"))
        {
            let kib: u64 = rest
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .unwrap_or(0);
            let bytes = kib * 1024;
            total += if overlap >= size {
                bytes
            } else {
                (bytes as u128 * overlap as u128 / size.max(1) as u128) as u64
            };
        }
    }
    total
}

/// `start-end` of a mapping's header line (`7f00...-7f01... rw-p ...`).
fn vma_range(line: &str) -> Option<(u64, u64)> {
    let first = line.split_whitespace().next()?;
    let (s, e) = first.split_once('-')?;
    Some((
        u64::from_str_radix(s, 16).ok()?,
        u64::from_str_radix(e, 16).ok()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bracketed_word_is_the_mode() {
        assert_eq!(
            parse_mode("always [madvise] never\n"),
            Some(ThpMode::Madvise)
        );
        assert_eq!(
            parse_mode("[always] madvise never\n"),
            Some(ThpMode::Always)
        );
        assert_eq!(parse_mode("always madvise [never]"), Some(ThpMode::Never));
        assert_eq!(parse_mode("always madvise never"), None);
        assert_eq!(parse_mode("[sometimes]"), None);
        assert!(!ThpMode::Never.available());
        assert!(ThpMode::Madvise.available() && ThpMode::Always.available());
    }

    #[test]
    fn smaps_counts_the_mappings_inside_the_range() {
        let text = "\
7f0000000000-7f0000400000 rw-p 00000000 00:00 0 
Size:               4096 kB
AnonHugePages:      4096 kB
7f0000400000-7f0000600000 rw-p 00000000 00:00 0 
AnonHugePages:      2048 kB
55d000000000-55d000021000 r-xp 00000000 08:01 1234 /usr/bin/x
AnonHugePages:         0 kB
VmFlags: rd ex mr mw me
";
        // The first mapping whole.
        assert_eq!(smaps_huge_bytes(text, 0x7f00_0000_0000, 4 << 20), 4 << 20);
        // Both.
        assert_eq!(smaps_huge_bytes(text, 0x7f00_0000_0000, 6 << 20), 6 << 20);
        // Half of the first, pro rata.
        assert_eq!(smaps_huge_bytes(text, 0x7f00_0020_0000, 2 << 20), 2 << 20);
        // Outside every mapping with huge pages.
        assert_eq!(smaps_huge_bytes(text, 0x55d0_0000_0000, 4096), 0);
        assert_eq!(smaps_huge_bytes(text, 0x1000, 4096), 0);
    }
}
