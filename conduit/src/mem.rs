//! Memory the conduit hands to the network: page-aligned mappings.
//!
//! A [`Mapping`] owns `len` bytes mapped with `mmap` and unmaps them on
//! drop. It never creates Rust references to its bytes itself: the network
//! writes into receive buffers and segments behind the program's back, so
//! every access goes through raw pointers whose rules the users of a
//! mapping spell out (a receive buffer is read only between its completion
//! and its repost; a send buffer is written only while its index is out of
//! the pool; a segment is shared memory, see [`crate::client::Segment`]).
//!
//! Who keeps a mapping alive is what makes the network's use of it sound:
//! a memory region owns (an `Arc` of) the mapping it registers, and an
//! endpoint holds an `Arc` of every mapping whose buffers it was handed.

use std::ffi::CString;
use std::fs::OpenOptions;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;

/// A page-aligned anonymous or shared mapping.
#[derive(Debug)]
pub struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    /// The memory file behind a [`Mapping::memfd`], kept open so that the
    /// ranks of this host can map the same pages (see [`Mapping::open_peer`]).
    fd: Option<OwnedFd>,
    /// Advised with `MADV_HUGEPAGE` ([`Mapping::anonymous_huge`]).
    huge: bool,
}

// SAFETY: a Mapping is plain memory; it holds no thread-affine state. The
// discipline for concurrent access to its bytes is that of its users
// (raw-pointer access only, see the module documentation).
unsafe impl Send for Mapping {}
// SAFETY: as above; `&Mapping` only hands out raw pointers.
unsafe impl Sync for Mapping {}

/// The host's page size.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory effects.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

impl Mapping {
    /// `len` bytes of zeroed anonymous private memory (at least one page).
    /// Pages cost memory only once touched.
    pub fn anonymous(len: usize) -> io::Result<Mapping> {
        Self::map(len, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)
    }

    /// `len` bytes (rounded up to pages) of zeroed anonymous private
    /// memory starting at a huge-page boundary and advised with
    /// `MADV_HUGEPAGE`, so that the kernel may back it with transparent
    /// huge pages (where its mode is `always` or `madvise`; see
    /// [`crate::hugepages`]). Pages cost memory once touched, a huge page
    /// at a time where huge pages back them. Mapped with `MAP_NORESERVE`,
    /// which the kernel's heuristic overcommit honours; under strict
    /// overcommit (`vm.overcommit_memory=2`) the whole length is charged at
    /// once, unlike a memory file's, and a large request may be refused
    /// where [`Mapping::memfd`] would succeed. A failed advice is only
    /// logged: the memory is then in ordinary pages
    /// ([`Mapping::huge_advised`] says which).
    pub fn anonymous_huge(len: usize) -> io::Result<Mapping> {
        let huge = crate::hugepages::huge_page_size();
        let len = len.max(1).div_ceil(page_size()) * page_size();
        let total = len
            .checked_add(huge)
            .ok_or_else(|| io::Error::other("length overflows"))?;
        // Owned by hand from here: the head and the tail are unmapped
        // separately, so `whole`'s own unmapping must never run.
        let whole = std::mem::ManuallyDrop::new(Self::map(
            total,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
        )?);
        let start = whole.ptr.as_ptr();
        let head = (start as usize).next_multiple_of(huge) - start as usize;
        let tail = huge - head;
        let first = start.wrapping_add(head);
        let end = start.wrapping_add(total);
        // The head, then the tail. On a failure, unmap what is still mapped
        // of the whole (the head failed: all of it; the tail failed: the
        // middle and the tail) and return the error.
        for (at, n, rest) in [(start, head, start), (first.wrapping_add(len), tail, first)] {
            if n == 0 {
                continue;
            }
            // SAFETY: `at..at + n` lies inside the mapping `whole` made
            // (head + len + tail = total) and outside `first..first + len`;
            // nothing refers to those bytes.
            if unsafe { libc::munmap(at.cast(), n) } != 0 {
                let e = io::Error::last_os_error();
                // SAFETY: `rest..end` is what is still mapped of the whole
                // (nothing of it was handed out).
                unsafe { libc::munmap(rest.cast(), end as usize - rest as usize) };
                return Err(e);
            }
        }
        let Some(ptr) = NonNull::new(first) else {
            // Unreachable (`first` lies inside a mapping the kernel made);
            // SAFETY: the middle, still mapped and never handed out.
            unsafe { libc::munmap(first.cast(), len) };
            return Err(io::Error::other("mmap returned NULL"));
        };
        let mut m = Mapping {
            ptr,
            len,
            fd: None,
            huge: false,
        };
        // SAFETY: the range is this mapping; the advice changes only how the
        // kernel backs it.
        if unsafe { libc::madvise(first.cast(), len, libc::MADV_HUGEPAGE) } == 0 {
            m.huge = true;
        } else {
            tracing::warn!("madvise(MADV_HUGEPAGE): {}", io::Error::last_os_error());
        }
        Ok(m)
    }

    /// `len` bytes of zeroed anonymous private address space reserved
    /// without committing memory (`MAP_NORESERVE`): pages cost memory only
    /// once touched, and may be given back with [`Mapping::discard`].
    pub fn reserve(len: usize) -> io::Result<Mapping> {
        Self::map(
            len,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
        )
    }

    /// Give the pages of the first `len` bytes of an anonymous private
    /// mapping back to the kernel (`MADV_DONTNEED`): they read as zero
    /// afterwards. For memory whose contents are never read (a failure
    /// is only logged).
    pub fn discard(&self, len: usize) {
        let len = len.min(self.len).div_ceil(page_size()) * page_size();
        // SAFETY: the range lies inside this mapping; MADV_DONTNEED on
        // private anonymous memory only replaces its pages with zero
        // pages, which every user of a discarded range accepts.
        let rc = unsafe { libc::madvise(self.ptr.as_ptr().cast(), len, libc::MADV_DONTNEED) };
        if rc != 0 {
            tracing::warn!("madvise(MADV_DONTNEED): {}", io::Error::last_os_error());
        }
    }

    /// `len` bytes (a multiple of the page size) of a file under `/dev/shm`
    /// that is unlinked as soon as it is mapped, so nothing is left behind
    /// even when the job is killed, and another process could map the same
    /// pages while it lives. Falls back to anonymous memory where
    /// `/dev/shm` does not exist.
    pub fn shared(len: usize, tag: &str) -> io::Result<Mapping> {
        let dir = std::path::Path::new("/dev/shm");
        if !dir.is_dir() {
            return Self::anonymous(len);
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let path = dir.join(format!("gex-{tag}-{}-{nanos:08x}", std::process::id()));
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)?;
        let mapped = file
            .set_len(len as u64)
            .and_then(|_| Self::map(len, libc::MAP_SHARED, file.as_raw_fd()));
        let _ = std::fs::remove_file(&path);
        mapped
    }

    /// `len` bytes (rounded up to pages) of an anonymous memory file
    /// (`memfd_create`, mode 0600, close-on-exec), mapped shared. The file
    /// has no name in any file system (nothing under `/dev/shm`, whatever
    /// happens to the process); it lives while this mapping or another
    /// process's mapping of it does. Other processes of the same user open
    /// it through `/proc/<pid>/fd/<fd>` ([`Mapping::open_peer`]), which the
    /// kernel refuses to any other user (a ptrace access check).
    pub fn memfd(len: usize, name: &str) -> io::Result<Mapping> {
        let len = len.max(1).div_ceil(page_size()) * page_size();
        let cname = CString::new(name).map_err(io::Error::other)?;
        // SAFETY: cname is a valid NUL-terminated string; the call creates a
        // new descriptor and touches no memory of ours.
        let raw = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
        if raw < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `raw` is a fresh descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        // SAFETY: fchmod acts on the descriptor only.
        if unsafe { libc::fchmod(fd.as_raw_fd(), 0o600) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: ftruncate acts on the descriptor only.
        if unsafe { libc::ftruncate(fd.as_raw_fd(), len as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut m = Self::map(len, libc::MAP_SHARED, fd.as_raw_fd())?;
        m.fd = Some(fd);
        Ok(m)
    }

    /// Map `len` bytes of the memory file that process `pid` holds as
    /// descriptor `fd` (a [`Mapping::memfd`] of a rank of this host). Fails
    /// when the file is smaller than `len` or the process is not this
    /// user's.
    pub fn open_peer(pid: u32, fd: RawFd, len: usize) -> io::Result<Mapping> {
        let path = format!("/proc/{pid}/fd/{fd}");
        let file = OpenOptions::new().read(true).write(true).open(&path)?;
        let size = file.metadata()?.len();
        if size < len as u64 {
            return Err(io::Error::other(format!(
                "{path} holds {size} bytes, fewer than the {len} published"
            )));
        }
        Self::map(len, libc::MAP_SHARED, file.as_raw_fd())
    }

    /// Whether the mapping was advised for transparent huge pages
    /// ([`Mapping::anonymous_huge`]); whether the kernel gave it any is
    /// [`Mapping::huge_page_bytes`].
    pub fn huge_advised(&self) -> bool {
        self.huge
    }

    /// Bytes of the mapping that huge pages back now (from
    /// `/proc/self/smaps`; see [`crate::hugepages::huge_bytes`]).
    pub fn huge_page_bytes(&self) -> io::Result<u64> {
        crate::hugepages::huge_bytes(self.ptr.as_ptr() as usize, self.len)
    }

    /// The memory file's descriptor, for a [`Mapping::memfd`].
    pub fn fd(&self) -> Option<RawFd> {
        self.fd.as_ref().map(|f| f.as_raw_fd())
    }

    fn map(len: usize, flags: libc::c_int, fd: libc::c_int) -> io::Result<Mapping> {
        let len = len.max(1).div_ceil(page_size()) * page_size();
        // SAFETY: a fresh mapping chosen by the kernel (NULL hint); no
        // existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr =
            NonNull::new(p.cast::<u8>()).ok_or_else(|| io::Error::other("mmap returned NULL"))?;
        Ok(Mapping {
            ptr,
            len,
            fd: None,
            huge: false,
        })
    }

    /// The first byte.
    #[inline]
    pub fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Bytes mapped (a multiple of the page size).
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Never true (a mapping has at least one page).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A pointer to `offset..offset+len`, or `None` when the range is not
    /// inside the mapping.
    #[inline]
    pub fn range(&self, offset: usize, len: usize) -> Option<*mut u8> {
        let end = offset.checked_add(len)?;
        if end > self.len {
            return None;
        }
        // SAFETY: offset <= len of the mapping (checked above), so the
        // result stays inside (or one past) the allocation.
        Some(unsafe { self.as_ptr().add(offset) })
    }

    /// Whether `p..p+len` lies inside the mapping; its offset if so.
    #[inline]
    pub fn offset_of(&self, p: *const u8, len: usize) -> Option<usize> {
        let start = self.as_ptr() as usize;
        let a = p as usize;
        let off = a.checked_sub(start)?;
        (off.checked_add(len)? <= self.len).then_some(off)
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: ptr/len describe a mapping this value created and owns;
        // whoever handed its bytes to the network keeps this value alive
        // until the network is done with them (module documentation).
        let rc = unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
        if rc != 0 {
            tracing::warn!("munmap: {}", io::Error::last_os_error());
        }
    }
}

/// The largest mmap threshold glibc accepts by default: half its largest
/// heap (32 MiB on 64-bit hosts, 512 KiB on 32-bit ones).
#[cfg(target_pointer_width = "64")]
const GLIBC_MMAP_THRESHOLD_MAX: u64 = 32 << 20;
#[cfg(not(target_pointer_width = "64"))]
const GLIBC_MMAP_THRESHOLD_MAX: u64 = 512 << 10;

/// What [`keep_freed_heap`] set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HeapKept {
    /// glibc took the trim threshold.
    pub trim: bool,
    /// glibc took the mmap threshold.
    pub mmap: bool,
}

/// Make glibc's allocator keep up to `bytes` of freed memory at the top of
/// the heap, and serve allocations of up to `min(bytes, 32 MiB)` from the
/// heap, instead of returning the memory to the system on each free and
/// faulting fresh zeroed pages in on the next allocation
/// (`GASNET_OFI_MALLOC_KEEP`; as MPI libraries do with the same calls).
/// Nothing is set for 0 or on other C libraries. glibc may refuse the mmap
/// threshold (a smaller largest heap, e.g. with huge-page tunables): the
/// result says what it took, and the trim threshold is set either way.
pub fn keep_freed_heap(bytes: u64) -> HeapKept {
    if bytes == 0 {
        return HeapKept::default();
    }
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let trim = bytes.min(i32::MAX as u64) as i32;
        let mmap = bytes.min(GLIBC_MMAP_THRESHOLD_MAX) as i32;
        // SAFETY: mallopt only changes the allocator's tuning parameters
        // (glibc takes its arena lock) and touches no memory of ours; a
        // value glibc does not accept is refused with 0, not taken.
        unsafe {
            HeapKept {
                mmap: libc::mallopt(libc::M_MMAP_THRESHOLD, mmap) == 1,
                trim: libc::mallopt(libc::M_TRIM_THRESHOLD, trim) == 1,
            }
        }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        let _ = GLIBC_MMAP_THRESHOLD_MAX;
        HeapKept::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mappings_are_page_aligned_zeroed_and_bounded() {
        let page = page_size();
        for m in [
            Mapping::anonymous(10).unwrap(),
            Mapping::shared(3 * page, "test").unwrap(),
            Mapping::memfd(3 * page, "test").unwrap(),
            Mapping::anonymous_huge(3 * page).unwrap(),
        ] {
            assert_eq!(m.as_ptr() as usize % page, 0);
            assert_eq!(m.len() % page, 0);
            let p = m.range(m.len() - 8, 8).unwrap();
            // SAFETY: inside the mapping, which this test owns.
            unsafe {
                assert_eq!(*p, 0);
                *p = 7;
                assert_eq!(*p, 7);
            }
            assert!(m.range(m.len() - 8, 9).is_none());
            assert!(m.range(usize::MAX, 2).is_none());
            assert_eq!(m.offset_of(p, 8), Some(m.len() - 8));
            assert_eq!(m.offset_of(p, 9), None);
            assert_eq!(m.offset_of(m.as_ptr().wrapping_sub(1), 1), None);
        }
    }

    #[test]
    fn a_memfd_mapping_is_shared_with_its_second_mapping() {
        let page = page_size();
        let a = Mapping::memfd(2 * page, "test").unwrap();
        let fd = a.fd().unwrap();
        let b = Mapping::open_peer(std::process::id(), fd, 2 * page).unwrap();
        assert_ne!(a.as_ptr(), b.as_ptr());
        // SAFETY: both pointers are inside their mappings (page 1, byte 5).
        unsafe {
            *a.as_ptr().add(page + 5) = 42;
            assert_eq!(*b.as_ptr().add(page + 5), 42);
        }
        let err = Mapping::open_peer(std::process::id(), fd, 3 * page).unwrap_err();
        assert!(err.to_string().contains("fewer than"), "{err}");
    }

    /// A huge mapping starts at a huge-page boundary, is advised wherever
    /// the kernel has transparent huge pages at all, and where its mode
    /// allows, touching it brings huge pages (the kernel may still refuse
    /// one when memory is fragmented, so the test asks for at least one of
    /// four).
    #[test]
    fn an_anonymous_huge_mapping_gets_huge_pages_where_the_kernel_allows() {
        use crate::hugepages::{huge_page_size, thp_mode};
        let huge = huge_page_size();
        let len = 4 * huge;
        let m = Mapping::anonymous_huge(len).unwrap();
        assert_eq!(m.as_ptr() as usize % huge, 0);
        assert_eq!(m.len(), len);
        let mode = thp_mode();
        // Without transparent huge pages in the kernel, the advice fails.
        assert_eq!(m.huge_advised(), mode.is_some(), "mode {mode:?}");
        assert!(!Mapping::anonymous(len).unwrap().huge_advised());
        for at in (0..len).step_by(page_size()) {
            // SAFETY: inside the mapping, which this test owns.
            unsafe { *m.as_ptr().add(at) = 1 };
        }
        let backed = m.huge_page_bytes().unwrap();
        match mode {
            Some(mode) if mode.available() => assert!(
                backed >= huge as u64,
                "transparent huge pages are {}, yet none backs {len} bytes advised with \
                 MADV_HUGEPAGE",
                mode.name()
            ),
            other => assert_eq!(backed, 0, "mode {other:?}"),
        }
        assert!(backed <= len as u64);
    }

    #[test]
    fn keep_freed_heap_sets_glibc_or_nothing() {
        assert_eq!(keep_freed_heap(0), HeapKept::default());
        let glibc = cfg!(all(target_os = "linux", target_env = "gnu"));
        assert_eq!(
            keep_freed_heap(64 << 20),
            HeapKept {
                trim: glibc,
                mmap: glibc
            }
        );
    }
}
