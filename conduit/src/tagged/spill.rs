//! Where the excess of a truncated receive goes on a provider that cannot
//! truncate.
//!
//! shm from libfabric 1.19 (through 2.5 at least, known-issues.md) handles
//! a receive smaller than its message only when the message was sent
//! inline (at most 192 bytes): an unexpected inject-sized message crashes
//! the receiver in `smr_copy_saved`, and a CMA or SAR one makes it spin
//! forever. So on such a provider every application receive is posted with
//! a second iov after the caller's buffer: the [`Spill`], a large
//! reservation of anonymous memory that costs nothing until written. The
//! provider then always has room; the completion's length says how much of
//! the message there was, and the conduit reports a truncation itself,
//! having written nothing past the caller's buffer.

use crate::mem::Mapping;
use std::sync::OnceLock;

/// Largest reservation tried first (1 TiB of address space; pages cost
/// memory only once a truncated message writes them).
const LARGEST: u32 = 40;
/// Smallest reservation accepted (1 MiB).
const SMALLEST: u32 = 20;
/// Excess bytes above which a truncation gives the spill's pages back.
const GIVE_BACK: usize = 1 << 20;

/// The process's spill area.
#[derive(Debug)]
pub(crate) struct Spill {
    map: Mapping,
}

static SPILL: OnceLock<Option<Spill>> = OnceLock::new();

impl Spill {
    /// The process's spill area, reserved on first use: the largest of
    /// 2^40 down to 2^20 bytes that the kernel grants; `None` (with a
    /// warning) when it grants none. It is never unmapped, so no posted
    /// receive can outlive it.
    pub(crate) fn get() -> Option<&'static Spill> {
        SPILL
            .get_or_init(|| {
                for bits in (SMALLEST..=LARGEST).rev().step_by(2) {
                    if let Ok(map) = Mapping::reserve(1usize << bits) {
                        tracing::debug!(bytes = map.len(), "tagged: spill area for truncations");
                        return Some(Spill { map });
                    }
                }
                tracing::warn!(
                    "tagged: no spill area could be reserved; a receive smaller than its \
                     message may crash or hang the shm provider (known-issues.md)"
                );
                None
            })
            .as_ref()
    }

    /// The area's first byte and its length, for the receive's second iov.
    #[inline]
    pub(crate) fn iov(&self) -> (*mut u8, usize) {
        (self.map.as_ptr(), self.map.len())
    }

    /// A truncation wrote `excess` bytes into the area: give large excesses'
    /// pages back to the kernel (what the area holds is never read).
    #[inline]
    pub(crate) fn written(&self, excess: usize) {
        if excess > GIVE_BACK {
            self.map.discard(excess.min(self.map.len()));
        }
    }
}

/// Whether `provider` in libfabric `version` needs the spill: shm from
/// 1.19 (before 1.19 tagged messaging over shm is refused outright).
pub(crate) fn needed(provider: &str, version: (u32, u32)) -> bool {
    provider == "shm" && version >= (1, 19)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_shm_from_1_19_needs_it() {
        assert!(needed("shm", (1, 19)));
        assert!(needed("shm", (2, 1)));
        assert!(!needed("shm", (1, 17)));
        assert!(!needed("tcp;ofi_rxm", (2, 1)));
        assert!(!needed("sockets", (1, 17)));
    }

    #[test]
    fn the_area_is_large_writable_and_gives_pages_back() {
        let s = Spill::get().expect("a spill area");
        let (p, len) = s.iov();
        assert!(len >= 1 << SMALLEST, "{len}");
        // SAFETY: inside the area, which lives for the process; nothing
        // else in this test process uses it.
        unsafe {
            p.add(GIVE_BACK + 8).write(7);
            assert_eq!(p.add(GIVE_BACK + 8).read(), 7);
        }
        s.written(GIVE_BACK + 16);
        // SAFETY: as above; discarded private pages read back as zero.
        assert_eq!(unsafe { p.add(GIVE_BACK + 8).read() }, 0);
    }
}
