//! AM Long in one message (`am::landing`): the landing area (registered
//! with the segment, published with it), the send of a Long as one write
//! with remote CQ data, the handling of a landing, and the credit reports
//! that free slots at the sender.

use super::rma::InFlight;
use super::{Core, Progress};
use crate::client::error::Error;
use crate::config::am::LongWritedata;
use crate::mem::Mapping;
use crate::ofi::RmaVec;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Access, Context, PostError, Region, Side, Transport};
use ::rma::ops::Implicit;
use ::rma::plan::SegmentInfo;
use am::landing::{self, Keeper, Landed, Lender, SLOT_LEN};
use am::send::{Category, Plan};
use am::wire;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// The conduit's handler for credit reports (a Reply Short: side, count)
/// and for voided slots (a Request Short: side, slot; `landing_void.rs`).
pub(crate) const H_LANDING: u8 = 8;

#[path = "landing_void.rs"]
mod void;

/// This rank's landing area and the credits of both directions.
pub(crate) struct Landing<M: Mode, R> {
    /// The registrations (each owns an `Arc` of the mapping).
    _regions: Vec<R>,
    mem: Arc<Mapping>,
    /// `peers[set][rank]`: the rank's landing area (`None`: it keeps
    /// none, so Longs to it go put-then-send).
    peers: Vec<Vec<Option<SegmentInfo>>>,
    /// Credits at each destination, per set and side.
    lenders: Vec<[M::Lock<Lender>; 2]>,
    /// Slots of each sender here, per set and side.
    keepers: Vec<[M::Lock<Keeper>; 2]>,
    /// Per set: some credit report or void waits to be sent.
    unsent: Vec<AtomicBool>,
    /// Per set: slots whose write failed, to void at their destination
    /// (side, destination, slot) once a send resource is free.
    voids: Vec<M::Lock<Vec<Void>>>,
}

/// A slot to void: side, destination, slot.
type Void = (Side, usize, u32);

/// A registered landing area not published yet: its regions and memory.
pub(super) type Area<R> = Option<(Vec<R>, Arc<Mapping>)>;

/// Bytes one rank publishes per region for its landing area.
pub(crate) const RECORD: usize = 24;

impl<M: Mode, R: Region> Landing<M, R> {
    /// Whether a credit report of set `set` waits to be sent.
    #[inline(always)]
    pub fn unsent(&self, set: usize) -> bool {
        self.unsent[set].load(Ordering::Relaxed)
    }

    /// `rank`'s landing area for set `set`, if it keeps one.
    #[inline]
    fn peer(&self, set: usize, rank: usize) -> Option<SegmentInfo> {
        self.peers[set.min(self.peers.len() - 1)][rank]
    }
}

/// Whether this rank keeps a landing area: the setting, the provider's
/// profile and its facts (remote CQ data, two remote pieces per write, and
/// memory registered for the whole domain: a landing is written at the
/// peer's AM endpoint, which a region bound to one endpoint
/// (`FI_MR_ENDPOINT`, bound to the RMA endpoint) would not serve).
pub(crate) fn wanted(setting: LongWritedata, f: &crate::transport::Facts) -> bool {
    let possible = f.remote_cq_data && f.rma_iov_limit >= 2 && !f.mr_endpoint;
    let provider = f.provider.as_str();
    match setting {
        LongWritedata::Off => false,
        LongWritedata::On => possible,
        LongWritedata::Auto => {
            possible && crate::profile::lookup(provider).long_am_writedata != Some(false)
        }
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Register this rank's landing area, if it keeps one: the regions and
    /// what to publish (`RECORD` bytes per region), else nothing.
    pub(super) fn open_landing(&self) -> Result<Area<T::Region>, Error> {
        let f = self.tp.facts();
        let setting = self.cfg.am.long_writedata;
        if !wanted(setting, f) {
            if setting == LongWritedata::On {
                tracing::info!(
                    "GASNET_OFI_LONG_AM_WRITEDATA=on: {} lacks remote CQ data or two remote \
                     iovs per write, or binds memory to one endpoint (FI_MR_ENDPOINT); AM \
                     Longs go put-then-send",
                    f.provider
                );
            }
            return Ok(None);
        }
        let len = landing::area_len(self.sets.len(), self.size);
        let mem = Arc::new(
            Mapping::anonymous(len).map_err(|e| Error::map("the AM Long landing area", len, e))?,
        );
        let regions = self.tp.register(&mem, Access::Remote)?;
        Ok(Some((regions, mem)))
    }

    /// The landing area and every rank's, once every rank published
    /// (`records[rank]`: empty, or `RECORD` bytes per region); kept by
    /// [`Core::keep_landing`] once every rank's attach could go on.
    pub(super) fn make_landing(
        &self,
        area: Area<T::Region>,
        records: &[&[u8]],
    ) -> Result<Option<Landing<M, T::Region>>, Error> {
        let Some((regions, mem)) = area else {
            return Ok(None);
        };
        let nreg = regions.len();
        let mut peers = vec![Vec::with_capacity(self.size); nreg];
        for (rank, b) in records.iter().enumerate() {
            if b.is_empty() {
                peers.iter_mut().for_each(|p| p.push(None));
                continue;
            }
            if b.len() != RECORD * nreg {
                return Err(Error::Published {
                    rank,
                    what: "landing record",
                });
            }
            for (set, chunk) in b.chunks(RECORD).enumerate() {
                let info = SegmentInfo::from_bytes(chunk).ok_or(Error::Published {
                    rank,
                    what: "landing record",
                })?;
                peers[set].push(Some(info));
            }
        }
        let n = self.sets.len();
        let l = Landing {
            _regions: regions,
            mem,
            peers,
            lenders: (0..n)
                .map(|_| [0, 1].map(|_| M::Lock::new(Lender::new(self.size))))
                .collect(),
            keepers: (0..n)
                .map(|_| [0, 1].map(|_| M::Lock::new(Keeper::new(self.size))))
                .collect(),
            unsent: (0..n).map(|_| AtomicBool::new(false)).collect(),
            voids: (0..n).map(|_| M::Lock::new(Vec::new())).collect(),
        };
        Ok(Some(l))
    }

    /// Keep what [`Core::make_landing`] made.
    pub(super) fn keep_landing(&self, l: Option<Landing<M, T::Region>>) -> Result<(), Error> {
        match l {
            Some(l) => self.landing.set(l).map_err(|_| Error::SegmentAttached),
            None => Ok(()),
        }
    }

    /// What this rank publishes for its landing area.
    pub(super) fn landing_record(area: &Area<T::Region>) -> Vec<u8> {
        let mut out = Vec::new();
        if let Some((regions, mem)) = area {
            for r in regions {
                let info = SegmentInfo {
                    base: mem.as_ptr() as u64,
                    size: mem.len() as u64,
                    key: r.key(),
                };
                out.extend_from_slice(&info.to_bytes());
            }
        }
        out
    }

    /// Send a Long (planned put-then-send) in one message if `dest` keeps
    /// a landing area with a free slot for this rank: payload and header in
    /// one write with remote CQ data. Returns once the write completed
    /// locally (the payload is the caller's again); `Ok(false)`: not sent,
    /// go put-then-send. In `immediate` mode the write is posted once: a
    /// provider that cannot take it now makes this `Ok(false)` too (an
    /// immediate Long is then a no-op, as put-then-send always is).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send_landing(
        &self,
        set: usize,
        side: Side,
        dest: usize,
        plan: &Plan,
        args: &[u32],
        payload: &[u8],
        dest_offset: usize,
        immediate: bool,
        wait: Progress,
    ) -> Result<bool, Error> {
        let Some(l) = self.landing.get() else {
            return Ok(false);
        };
        let Some(area) = l.peer(set, dest) else {
            return Ok(false);
        };
        if payload.is_empty() || payload.len() + SLOT_LEN > self.max_rma {
            return Ok(false);
        }
        let s = &self.sets[set];
        let remote_payload = self.remote(set, dest, dest_offset, payload.len())?;
        let mut header = [0u8; SLOT_LEN];
        let hlen = wire::encode_into(
            &mut header,
            &plan.header,
            args,
            Some(dest_offset as u64),
            payload.len(),
            &[],
        );
        let mut v = RmaVec::new();
        // The operation is started only once a slot is taken (a Long with
        // no free slot starts nothing), inside the block; `g` and `ctx`
        // are declared here so that they outlive it.
        let (mut g, ctx);
        // Take a slot; in immediate mode post once under the same lock, so
        // that a refused post gives the slot back before anyone else takes
        // one. (The lock is released before `g` could drop: it is declared
        // in the block, and the blocking post below makes progress, which
        // takes it for credit reports.)
        let (data, posted, slot) = {
            let mut lender = l.lenders[set][side.index()].lock();
            let Some(slot) = lender.take(dest) else {
                drop(lender);
                s.stats.long_landing_waits.add(1);
                return Ok(false);
            };
            let at = landing::slot_offset(set, side.index(), self.size, self.rank, slot);
            let remote_slot = match area.remote(dest, at, hlen, self.virt_addr) {
                Ok(r) => r,
                Err(e) => {
                    lender.untake(dest);
                    return Err(e.into());
                }
            };
            v.push(
                payload.as_ptr().cast_mut(),
                payload.len(),
                remote_payload.addr,
                remote_payload.key,
            );
            v.push(header.as_mut_ptr(), hlen, remote_slot.addr, remote_slot.key);
            let op = s.ops.lock().start(1, Implicit::No);
            g = InFlight::new(self, set, op, 1);
            ctx = Context::Rma { slot: op.index };
            let data = Landed {
                src: self.rank as u32,
                is_request: side == Side::Request,
                slot,
            }
            .encode();
            if !immediate {
                (data, false, slot)
            } else {
                // SAFETY: as for the blocking post below.
                let r = unsafe {
                    self.tp
                        .write_landing(set, side.ep(), dest, &mut v, data, ctx)
                };
                match r {
                    Ok(()) => (data, true, slot),
                    Err(PostError::Again) | Err(PostError::NoMemory) => {
                        lender.untake(dest);
                        s.stats.eagain_retries.add(1);
                        return Ok(false);
                    }
                    Err(PostError::Failed(e)) => {
                        lender.untake(dest);
                        return Err(e.into());
                    }
                }
            }
        };
        if !posted {
            // SAFETY: `payload` is borrowed and `header` and `v` live in
            // this frame until the write is over: this function returns
            // only after `wait_op` (or `g`'s drop, on an error or unwind)
            // saw it complete. The remote ranges were checked against the
            // destination's segment and its published landing area.
            let r = self.post_retry(set, wait, || unsafe {
                self.tp
                    .write_landing(set, side.ep(), dest, &mut v, data, ctx)
            });
            if let Err(e) = r {
                // Nothing was posted: the slot is the destination's to
                // free (the lender's later takes forbid an untake).
                drop(g);
                self.void_landing(set, side, dest, slot);
                return Err(e);
            }
        }
        g.posted();
        let op = g.disarm();
        if let Err(e) = self.wait_op(set, Some(op), wait, "AM Long", "to", dest) {
            // A failed write wrote no completion at the destination.
            self.void_landing(set, side, dest, slot);
            return Err(e);
        }
        s.stats.long_landed.add(1);
        Ok(true)
    }

    /// A landing reported on `side`'s receive queue of set `set`: run the
    /// Long's handler from the header in its slot, free the slot, report
    /// credits when due.
    pub(super) fn deliver_landed(&self, set: usize, side: Side, data: u64) -> Result<(), Error> {
        let Some(l) = self.landing.get() else {
            return Err(am::Error::BadLanding {
                data,
                why: "this rank keeps no landing area".into(),
            }
            .into());
        };
        let landed = Landed::decode(data, self.size)?;
        if landed.is_request != (side == Side::Request) {
            return Err(am::Error::BadLanding {
                data,
                why: "it arrived on the other side's endpoint".into(),
            }
            .into());
        }
        let src = landed.src as usize;
        let at = landing::slot_offset(set, side.index(), self.size, src, landed.slot);
        let Some(p) = l.mem.range(at, SLOT_LEN) else {
            return Err(am::Error::BadLanding {
                data,
                why: "the slot lies outside the landing area".into(),
            }
            .into());
        };
        let mut slot = [0u8; SLOT_LEN];
        // Checked, copied out and freed under one lock.
        let freed = {
            let mut k = l.keepers[set][side.index()].lock();
            k.landed(src, landed.slot)?;
            // SAFETY: p..p+SLOT_LEN is inside the mapping (checked), which
            // lives as long as `l`; only `src` writes this slot, and only
            // after the credit for it (sent below, after this copy)
            // reached it.
            unsafe { std::ptr::copy_nonoverlapping(p, slot.as_mut_ptr(), SLOT_LEN) };
            k.release(src, landed.slot)
        };
        let s = &self.sets[set];
        s.stats.landings_received.add(1);
        if let Some(upto) = freed {
            self.send_credit(set, side, src, upto);
        }
        let len = landing::header_len(&slot, landed)?;
        self.dispatch(set, side, &slot[..len])
    }

    /// Report `src`'s slots of `side` free up to `upto`, now if a send
    /// resource is free, else at a later poll.
    pub(super) fn send_credit(&self, set: usize, side: Side, src: usize, upto: u32) {
        let sent = self.send_am(
            set,
            Side::Reply,
            src,
            Category::Short,
            H_LANDING,
            &[side.index() as u32, upto],
            &[],
            0,
            true,
            Progress::Replies,
        );
        match sent {
            Ok(true) => self.sets[set].stats.landing_credits_sent.add(1),
            Ok(false) | Err(_) => {
                if let Err(e) = &sent {
                    tracing::debug!("landing credit to rank {src} not sent now: {e}");
                }
                if let Some(l) = self.landing.get() {
                    l.keepers[set][side.index()].lock().unreport(src, upto);
                    l.unsent[set].store(true, Ordering::Release);
                }
            }
        }
    }

    /// Send the credit reports that could not go when due (called by
    /// progress while any wait).
    #[inline(never)]
    pub(super) fn flush_credits(&self, set: usize) {
        let Some(l) = self.landing.get() else {
            return;
        };
        l.unsent[set].store(false, Ordering::Release);
        self.flush_voids(set);
        for side in [Side::Request, Side::Reply] {
            let due = l.keepers[set][side.index()].lock().unreported();
            for (src, upto) in due {
                self.send_credit(set, side, src, upto);
            }
        }
    }

    /// A credit report from `src` (handler [`H_LANDING`]).
    pub(super) fn on_landing_credit(
        &self,
        set: usize,
        src: usize,
        a: [u32; 2],
    ) -> Result<(), Error> {
        let l = self.landing.get().ok_or_else(|| am::Error::BadCredit {
            src: src as u32,
            upto: a[1],
            why: "this rank sends no Long in one message".into(),
        })?;
        let side = match a[0] {
            0 => Side::Request,
            1 => Side::Reply,
            x => {
                return Err(am::Error::BadCredit {
                    src: src as u32,
                    upto: a[1],
                    why: format!("side {x} is neither 0 nor 1"),
                }
                .into())
            }
        };
        l.lenders[set][side.index()].lock().credit(src, a[1])?;
        Ok(())
    }
}
