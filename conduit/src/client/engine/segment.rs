//! The registered segment: this rank's shared mapping (a `memfd`, which
//! the ranks of its supernode map too; anonymous memory advised for huge
//! pages where none does and `GASNET_OFI_SEGMENT_HUGEPAGES` asks for them),
//! its registration (one region, or one per
//! endpoint set on endpoint-bound providers), and every rank's published
//! base, size and key per set.

use super::Core;
use crate::client::error::Error;
use crate::mem::{page_size, Mapping};
use crate::pshm::{Shared, SEGMENT_RECORD};
use crate::sync::Mode;
use crate::transport::{Access, Region, Transport};
use ::rma::plan::SegmentInfo;
use std::sync::Arc;

/// The attached segment.
pub(crate) struct SegmentState<R> {
    /// The registrations (each owns an `Arc` of the mapping): kept for as
    /// long as peers may access the segment.
    _regions: Vec<R>,
    pub mem: Arc<Mapping>,
    len: usize,
    /// This rank (named by range errors).
    rank: usize,
    /// `peers[set][rank]`.
    pub peers: Vec<Vec<SegmentInfo>>,
}

/// What a rank publishes in the segment exchange when it could not attach
/// (shorter than any record it publishes otherwise).
const FAILED: [u8; 1] = [0];

/// What `GASNET_MAX_SEGSIZE` allows a rank of this host, over the host's
/// memory and ranks.
pub(super) fn limit_bytes(cfg: &crate::config::Config, boot: &dyn bootstrap::Bootstrap) -> u64 {
    let phys = crate::config::host_physical_memory().unwrap_or(u64::MAX);
    let on_host = boot.hosts().local_ranks().len().max(1);
    cfg.max_segsize.limit_bytes(phys, on_host)
}

/// `bytes` rounded down to whole pages.
fn whole_pages(bytes: u64) -> usize {
    let page = page_size();
    usize::try_from(bytes).unwrap_or(usize::MAX) / page * page
}

impl<R> SegmentState<R> {
    /// This rank.
    #[inline]
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Bytes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// `rank`'s segment as published for set `set`.
    #[inline]
    pub fn peer(&self, set: usize, rank: usize) -> SegmentInfo {
        self.peers[set.min(self.peers.len() - 1)][rank]
    }

    /// Copy `data` to `off`, checked.
    pub fn copy_in(&self, off: usize, data: &[u8]) -> Result<(), Error> {
        let p = self.range(off, data.len())?;
        // SAFETY: p..p+len is inside the mapping (checked); `data` is not
        // segment memory handed out mutably by the conduit, so the ranges
        // do not overlap except through the caller's own unsafe views.
        unsafe { std::ptr::copy(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    /// Where the segment starts in this process.
    pub fn base(&self) -> *mut u8 {
        self.mem.as_ptr()
    }

    /// A pointer to `off..off+len`, checked.
    pub fn range(&self, off: usize, len: usize) -> Result<*mut u8, Error> {
        if off.checked_add(len).is_none_or(|e| e > self.len) {
            return Err(::rma::Error::OutOfSegment {
                rank: self.rank,
                offset: off,
                len,
                size: self.len,
            }
            .into());
        }
        match self.mem.range(off, len) {
            Some(p) => Ok(p),
            None => Err(Error::NoSegment),
        }
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// This rank's attached segment, or [`Error::NoSegment`].
    #[inline]
    pub fn own_segment(&self) -> Result<&SegmentState<T::Region>, Error> {
        // Not `ok_or`: that would build the error and drop it on success.
        let Some(seg) = self.segment.get() else {
            return Err(Error::NoSegment);
        };
        Ok(seg)
    }

    /// What `GASNET_MAX_SEGSIZE` allows this rank, over this host's
    /// memory and ranks.
    fn segment_limit_bytes(&self) -> u64 {
        limit_bytes(&self.cfg, &*self.boot)
    }

    /// The largest segment [`attach_segment`](Self::attach_segment)
    /// accepts here, in whole pages.
    pub fn segment_limit(&self) -> usize {
        whole_pages(self.segment_limit_bytes())
    }

    /// The smallest [`segment_limit`](Self::segment_limit) over the job
    /// (exchanged at start-up), in whole pages.
    pub fn global_segment_limit(&self) -> usize {
        whole_pages(self.global_segment_limit)
    }

    /// Allocate, register and publish this rank's segment of `size` bytes
    /// (collective).
    pub fn attach_segment(&self, size: usize) -> Result<(), Error> {
        use std::sync::atomic::Ordering;
        if self.segment.get().is_some() {
            return Err(Error::SegmentAttached);
        }
        // One call at a time: two concurrent calls would each publish its
        // mapping to the shared-memory path and the landing area, and the
        // one that lost a later step would drop a mapping the other kept.
        if self.attaching.swap(true, Ordering::AcqRel) {
            return Err(Error::SegmentAttaching);
        }
        /// Ends the call's turn, also when it unwinds.
        struct Turn<'a>(&'a std::sync::atomic::AtomicBool);
        impl Drop for Turn<'_> {
            fn drop(&mut self) {
                self.0.store(false, Ordering::Release);
            }
        }
        let _turn = Turn(&self.attaching);
        self.attach_once(size)
    }

    /// [`attach_segment`](Self::attach_segment) with no other call running.
    fn attach_once(&self, size: usize) -> Result<(), Error> {
        if self.segment.get().is_some() {
            return Err(Error::SegmentAttached);
        }
        // Whatever fails here is agreed on with the other ranks before any
        // returns (the size is not single-valued, and mapping or
        // registering can fail on one rank only): a rank that returned at
        // once would leave the others waiting in the exchange.
        let prepared = self.prepare_segment(size);
        let mine = match &prepared {
            Ok((_, _, mine, _)) => mine.as_slice(),
            Err(_) => &FAILED[..],
        };
        // Every rank reaches the exchange while this one keeps serving the
        // network: a peer may still be finishing what it started before
        // attaching (a broadcast whose sends need this rank's progress, a
        // connection ofi_rxm sets up with it), and the exchange itself does
        // not poll.
        self.bootstrap_barrier_polling()?;
        let all = self.boot.allgather(mine)?;
        let (mem, regions, _, area) = prepared?;
        if let Some(rank) = all.iter().position(|b| b[..] == FAILED) {
            return Err(Error::SegmentElsewhere { rank });
        }
        // What follows can fail on one rank only (a peer's segment that
        // cannot be mapped: descriptors or memory exhausted): the ranks
        // agree before any keeps what it made, so a failure here fails the
        // attach on every rank (the others would wait in the barrier
        // below for ever) and nothing of it stays for a later attach.
        // The segment (and its file) stays open until every rank has
        // mapped it or failed, whatever becomes of this rank's part.
        let open = mem.clone();
        let made = self.segment_from(&all, mem, regions, area, size);
        let verdicts = self.boot.allgather(if made.is_ok() {
            &[1u8][..]
        } else {
            &FAILED[..]
        })?;
        drop(open);
        let (state, segs, landing) = made?;
        if let Some(rank) = verdicts.iter().position(|b| b[..] == FAILED) {
            return Err(Error::SegmentElsewhere { rank });
        }
        if let (Some(sh), Some(segs)) = (&self.pshm, segs) {
            sh.set_segments(segs)?;
        }
        self.keep_landing(landing)?;
        if self.segment.set(state).is_err() {
            return Err(Error::SegmentAttached);
        }
        // No rank reaches a peer's segment before the peer keeps it.
        self.boot.barrier()?;
        Ok(())
    }

    /// This rank's part of an attach once every rank published (`all`):
    /// the segment's state, the supernode's segments mapped, the landing
    /// area; nothing of it kept yet.
    #[allow(clippy::type_complexity)]
    fn segment_from(
        &self,
        all: &[Vec<u8>],
        mem: Arc<Mapping>,
        regions: Vec<T::Region>,
        area: super::landing::Area<T::Region>,
        size: usize,
    ) -> Result<
        (
            SegmentState<T::Region>,
            Option<crate::pshm::PeerSegments>,
            Option<super::landing::Landing<M, T::Region>>,
        ),
        Error,
    > {
        let nreg = regions.len();
        let mut peers = vec![Vec::with_capacity(self.size); nreg];
        let mut shared_records = Vec::with_capacity(self.size);
        let mut landing_records = Vec::with_capacity(self.size);
        for (rank, b) in all.iter().enumerate() {
            let Some((b, shared)) = b.len().checked_sub(SEGMENT_RECORD).map(|at| b.split_at(at))
            else {
                return Err(Error::Published {
                    rank,
                    what: "segment record",
                });
            };
            shared_records.push(shared);
            let lrec = super::landing::RECORD * nreg;
            let (b, landing) = if b.len() == 24 * nreg + lrec {
                b.split_at(24 * nreg)
            } else if b.len() == 24 * nreg {
                (b, &[][..])
            } else {
                return Err(Error::Published {
                    rank,
                    what: "segment record",
                });
            };
            landing_records.push(landing);
            for (set, chunk) in b.chunks(24).enumerate() {
                let info = SegmentInfo::from_bytes(chunk).ok_or(Error::Published {
                    rank,
                    what: "segment record",
                })?;
                peers[set].push(info);
            }
        }
        let segs = match &self.pshm {
            Some(sh) => Some(sh.map_segments(&shared_records, &mem)?),
            None => None,
        };
        let landing = self.make_landing(area, &landing_records)?;
        let state = SegmentState {
            _regions: regions,
            mem,
            len: size,
            rank: self.rank,
            peers,
        };
        Ok((state, segs, landing))
    }

    /// Check `size`, then map, register and describe this rank's segment:
    /// the mapping, its registrations, the record to publish and the AM
    /// Long landing area.
    #[allow(clippy::type_complexity)]
    fn prepare_segment(
        &self,
        size: usize,
    ) -> Result<
        (
            Arc<Mapping>,
            Vec<T::Region>,
            Vec<u8>,
            super::landing::Area<T::Region>,
        ),
        Error,
    > {
        let page = page_size();
        if size == 0 || size % page != 0 {
            return Err(Error::SegmentSize { size, page });
        }
        let limit = self.segment_limit_bytes();
        if size as u64 > limit {
            return Err(Error::SegmentLimit {
                size,
                limit,
                setting: self.cfg.max_segsize.to_string(),
            });
        }
        // Huge pages only where no supernode peer maps the segment (the
        // kernel gives them to anonymous memory, not to memory files).
        let memfd = || {
            Mapping::memfd(size, &format!("gasnet-ofi-segment-{}", self.rank))
                .map_err(|e| Error::map("the segment", size, e))
        };
        let mem = Arc::new(if self.segment_hugepages && self.pshm.is_none() {
            match Mapping::anonymous_huge(size) {
                Ok(m) => m,
                Err(e) => {
                    // E.g. strict overcommit, which charges anonymous
                    // memory whole and a memory file page by page.
                    tracing::warn!(
                        "the segment: {size} bytes of anonymous memory for huge pages \
                         (GASNET_OFI_SEGMENT_HUGEPAGES) could not be mapped ({e}); using a \
                         memory file in ordinary pages"
                    );
                    memfd()?
                }
            }
        } else {
            memfd()?
        });
        tracing::info!(
            "the segment: {size} bytes of {}",
            match (mem.fd().is_some(), mem.huge_advised()) {
                (true, _) => "a memory file in ordinary pages",
                (false, true) => "anonymous memory advised for transparent huge pages",
                (false, false) => "anonymous memory in ordinary pages (the advice failed)",
            }
        );
        let regions = self.tp.register(&mem, Access::Remote)?;
        let base = mem.as_ptr() as u64;
        let mut mine = Vec::with_capacity(24 * regions.len());
        for r in &regions {
            let info = SegmentInfo {
                base,
                size: size as u64,
                key: r.key(),
            };
            mine.extend_from_slice(&info.to_bytes());
        }
        // The AM Long landing area, where this rank keeps one.
        let area = self.open_landing()?;
        mine.extend_from_slice(&Self::landing_record(&area));
        // The memory file for the supernode's peers to map.
        mine.extend_from_slice(&Shared::<M>::segment_record(&mem));
        Ok((mem, regions, mine, area))
    }

    /// The bootstrap's barrier, waited for on a thread of its own while
    /// this one polls the network (handlers run; errors that are not fatal
    /// wait for the next poll). Once a peer has left this barrier it goes
    /// straight into the segment exchange, which needs this rank, so no
    /// peer can send it anything that needs its segment meanwhile.
    fn bootstrap_barrier_polling(&self) -> Result<(), Error> {
        let barrier = super::barrier_thread::BarrierThread::start(
            &self.boot,
            "gasnet-attach",
            "the segment exchange",
        )?;
        loop {
            if let Some(r) = barrier.poll() {
                return r;
            }
            // A fatal error (the provider failed) returns with the thread
            // still in the bootstrap's barrier: the exchange cannot
            // complete, and the process is on its way out (its exit waits
            // at most the exit timeout for that barrier's lock).
            self.progress_deferring(0, super::Progress::Full)
                .map_err(|e| *e)?;
            // As a barrier's wait does: collectives started before the
            // attach (a broadcast whose chunks this rank forwards, chunks
            // waiting for slots) move on, or their members never arrive.
            if self.coll_pending() {
                if let Err(e) = self.coll_advance() {
                    self.deferred.put(e);
                }
            }
            std::hint::spin_loop();
        }
    }

    /// `rank`'s segment as published (set 0).
    pub fn segment_info(&self, rank: usize) -> Result<SegmentInfo, Error> {
        if rank >= self.size {
            return Err(am::Error::BadRank {
                rank,
                size: self.size,
            }
            .into());
        }
        Ok(self.own_segment()?.peer(0, rank))
    }
}

/// Whether a segment that no supernode peer maps is asked for transparent
/// huge pages (`GASNET_OFI_SEGMENT_HUGEPAGES`) on `provider`; the choice
/// and its reason are logged (`want_hugepages`).
pub(super) fn segment_hugepages(cfg: &crate::config::Config, provider: &str) -> bool {
    let (want, why) = want_hugepages(
        cfg.rma.segment_hugepages,
        crate::profile::lookup(provider).segment_hugepages == Some(true),
        crate::hugepages::thp_mode(),
    );
    tracing::info!(
        "{provider}: huge pages for a segment that no supernode peer maps \
         (GASNET_OFI_SEGMENT_HUGEPAGES): {why}{}",
        if want && cfg.pshm.enabled() {
            "; with the shared-memory path on, a segment its peers map stays a memory file"
        } else {
            ""
        }
    );
    want
}

/// Whether a segment that no supernode peer maps is asked for transparent
/// huge pages (`GASNET_OFI_SEGMENT_HUGEPAGES`), with the reason, for the
/// start-up log: `on`, always; `off`, never; `auto`, where `profile_says`
/// (the provider moves RMA data by cross-memory attach) and the kernel's
/// mode `thp` is `always` or `madvise`.
pub(super) fn want_hugepages(
    setting: crate::config::rma::SegmentHugepages,
    profile_says: bool,
    thp: Option<crate::hugepages::ThpMode>,
) -> (bool, String) {
    use crate::config::rma::SegmentHugepages as S;
    let mode = thp.map_or("absent", |m| m.name());
    match setting {
        S::On => (true, format!("on (kernel mode {mode})")),
        S::Off => (false, "off".into()),
        S::Auto if !profile_says => (
            false,
            "auto: off (the provider's profile does not ask for them)".into(),
        ),
        S::Auto => match thp {
            Some(m) if m.available() => (true, format!("auto: on (kernel mode {mode})")),
            _ => (false, format!("auto: off (kernel mode {mode})")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::want_hugepages;
    use crate::config::rma::SegmentHugepages as S;
    use crate::hugepages::ThpMode as T;

    #[test]
    fn auto_asks_for_huge_pages_where_the_profile_and_the_kernel_allow() {
        assert!(want_hugepages(S::Auto, true, Some(T::Madvise)).0);
        assert!(want_hugepages(S::Auto, true, Some(T::Always)).0);
        assert!(!want_hugepages(S::Auto, true, Some(T::Never)).0);
        assert!(!want_hugepages(S::Auto, true, None).0);
        assert!(!want_hugepages(S::Auto, false, Some(T::Madvise)).0);
        assert!(want_hugepages(S::On, false, Some(T::Never)).0);
        assert!(!want_hugepages(S::Off, true, Some(T::Always)).0);
        assert_eq!(
            want_hugepages(S::Auto, true, Some(T::Never)).1,
            "auto: off (kernel mode never)"
        );
    }
}
