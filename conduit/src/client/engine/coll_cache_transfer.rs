//! Chunks through a team's collective cache ([`Core::cache_send`],
//! [`Core::cache_poll`]): chunks queued per member until a slot is free,
//! then written with memory copies into a mapped block or by RMA writes
//! (the slot's flag word once the chunk is delivered); credit words
//! returned for slots read; finished writes retired; chunks that arrived
//! in this rank's slots fed to the team's machine.

use super::{word, Cache, Out, Pending};
use crate::client::engine::Core;
use crate::client::error::Error;
use crate::sync::{Counter, Lock, Mode};
use crate::transport::{Context, PostError, Transport};
use ::rma::ops::{Implicit, OpId, TransferError};
use coll::cache::{SlotHeader, SLOT_HEADER};
use coll::{Msg, TeamColl};
use std::sync::atomic::Ordering;

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Queue chunks of collective `seq` for members reached through their
    /// caches and send what slots allow; returns the chunks for the others
    /// (to send as AMs).
    pub(in crate::client::engine) fn cache_send(
        &self,
        c: &mut Cache<T::Region>,
        seq: u32,
        msgs: Vec<Msg>,
    ) -> Result<Vec<Msg>, Error> {
        let mut am = Vec::new();
        for msg in msgs {
            if msg.to >= c.peers.len() || msg.to == c.me {
                return Err(coll::Error::RankOutsideTeam {
                    rank: msg.to,
                    size: c.peers.len(),
                }
                .into());
            }
            // A chunk larger than a slot (one element of a user type
            // wider than the slot) goes as an AM.
            if c.peers[msg.to].cached && msg.data.len() <= c.layout.max_chunk() {
                c.outq[msg.to].push_back(Out { seq, msg });
            } else {
                am.push(msg);
            }
        }
        self.cache_pump(c)?;
        Ok(am)
    }

    /// Move the cache along: finished transfers release their flags, queued
    /// chunks and control words go out, and chunks that arrived are fed to
    /// `colls`; returns the messages those provoked, by sequence.
    pub(in crate::client::engine) fn cache_poll(
        &self,
        c: &mut Cache<T::Region>,
        colls: &mut TeamColl,
    ) -> Result<Vec<(u32, Vec<Msg>)>, Error> {
        let mut first = self.cache_reap(c).err();
        if let Err(e) = self.board_poll(c, colls) {
            first = Some(e);
        }
        let mut out = Vec::new();
        for s in 0..c.peers.len() {
            if s == c.me {
                continue;
            }
            loop {
                let (m, j) = c.slots.next_in(s);
                let at = c.layout.slot(s, j);
                // SAFETY: `at` is a slot of this rank's block (8-aligned).
                let flag = unsafe { word(c.mem.as_ptr().add(at)) };
                if flag.load(Ordering::Acquire) != m {
                    break;
                }
                // SAFETY: the flag says slot (s, j) holds message m, which
                // nobody writes again until this rank credits it.
                let slot = unsafe {
                    std::slice::from_raw_parts(c.mem.as_ptr().add(at), c.layout.slot_bytes())
                };
                let r = SlotHeader::decode(&slot[8..SLOT_HEADER], s, c.layout.max_chunk())
                    .map_err(Error::from)
                    .and_then(|h| {
                        let data = &slot[SLOT_HEADER..SLOT_HEADER + h.len as usize];
                        Ok((
                            h.seq,
                            colls.on_msg_shaped(h.seq, s, h.phase, h.chunk, h.shape, data)?,
                        ))
                    });
                c.slots.read(s);
                c.words.push_back((s, c.layout.credit(c.me, j), m, None));
                match r {
                    Ok((seq, msgs)) if !msgs.is_empty() => out.push((seq, msgs)),
                    Ok(_) => {}
                    Err(e) => {
                        first.get_or_insert(e);
                    }
                }
            }
        }
        if let Err(e) = self.cache_pump(c) {
            first.get_or_insert(e);
        }
        first.map_or(Ok(out), Err)
    }

    /// Retire finished transfers; a delivered chunk's flag is queued.
    fn cache_reap(&self, c: &mut Cache<T::Region>) -> Result<(), Error> {
        if c.pending.is_empty() {
            return Ok(());
        }
        let mut first = None;
        let mut ops = self.sets[0].ops.lock();
        c.pending.retain(|p| {
            let op = match p {
                Pending::Chunk { op, .. } | Pending::Word { op, .. } => *op,
            };
            if ops.running(op) {
                return true;
            }
            match (ops.retire(op).unwrap_or(Ok(())), p) {
                (Ok(()), Pending::Chunk { to, j, m, seq, .. }) => {
                    let at = c.layout.slot(c.me, *j);
                    c.words.push_front((*to, at, *m, Some(*seq)));
                }
                (Ok(()), Pending::Word { .. }) => {}
                (Err(cause), _) => {
                    first.get_or_insert(Error::Rma(crate::client::error::RmaError {
                        op: "a collective's cache write",
                        dir: "to",
                        rank: c.me,
                        cause,
                    }));
                }
            }
            false
        });
        first.map_or(Ok(()), Err)
    }

    /// Post queued control words, then queued chunks while their slots are
    /// free. A provider that is busy (-FI_EAGAIN) leaves the rest queued
    /// for the next poll.
    fn cache_pump(&self, c: &mut Cache<T::Region>) -> Result<(), Error> {
        while let Some(&(to, at, v, _)) = c.words.front() {
            if !self.cache_word(c, to, at, v)? {
                return Ok(());
            }
            c.words.pop_front();
        }
        for to in 0..c.peers.len() {
            while let Some(o) = c.outq[to].front() {
                let base = c.mem.as_ptr();
                // SAFETY: credit words of this rank's block (8-aligned).
                let credit =
                    |j| unsafe { word(base.add(c.layout.credit(to, j))) }.load(Ordering::Acquire);
                let Some((m, j)) = c.slots.next_out(to, credit) else {
                    break;
                };
                let head = SlotHeader {
                    seq: o.seq,
                    phase: o.msg.phase,
                    shape: o.msg.shape,
                    chunk: o.msg.chunk,
                    len: o.msg.data.len() as u32,
                }
                .encode();
                let at = c.layout.slot(c.me, j);
                if let Some(p) = c.peers[to].mapped {
                    // SAFETY: slot j of this rank in `to`'s mapped block is
                    // free (credited), and only this rank writes it; the
                    // chunk fits (it was cut at max_chunk).
                    unsafe {
                        let dst = p.add(at);
                        std::ptr::copy_nonoverlapping(head.as_ptr(), dst.add(8), head.len());
                        std::ptr::copy_nonoverlapping(
                            o.msg.data.as_ptr(),
                            dst.add(SLOT_HEADER),
                            o.msg.data.len(),
                        );
                        word(dst).store(m, Ordering::Release);
                    }
                    self.sets[0].stats.coll_cache_local.add(1);
                } else {
                    let mut buf = Vec::with_capacity(head.len() + o.msg.data.len());
                    buf.extend_from_slice(&head);
                    buf.extend_from_slice(&o.msg.data);
                    let Some(op) = self.cache_write(c, to, at + 8, &buf)? else {
                        return Ok(());
                    };
                    c.pending.push(Pending::Chunk {
                        op,
                        seq: o.seq,
                        to,
                        j,
                        m,
                        _buf: buf,
                    });
                    self.sets[0].stats.coll_cache_rma.add(1);
                }
                c.slots.sent(to);
                c.outq[to].pop_front();
            }
        }
        Ok(())
    }

    /// Write control word `v` at `at` of `to`'s block; `false` when the
    /// provider is busy.
    fn cache_word(
        &self,
        c: &mut Cache<T::Region>,
        to: usize,
        at: usize,
        v: u64,
    ) -> Result<bool, Error> {
        if let Some(p) = c.peers[to].mapped {
            // SAFETY: a flag or credit word of `to`'s mapped block, which
            // the protocol lets only this rank write now.
            unsafe { word(p.add(at)) }.store(v, Ordering::Release);
            return Ok(true);
        }
        let buf = Box::new(v);
        let bytes = (&*buf as *const u64).cast::<u8>();
        // SAFETY: `buf` lives in `pending` until the write is over.
        let src = unsafe { std::slice::from_raw_parts(bytes, 8) };
        match self.cache_write(c, to, at, src)? {
            Some(op) => {
                c.pending.push(Pending::Word { op, _buf: buf });
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Post a write of `src` to `at` of `to`'s block; `None` when the
    /// provider is busy. The caller keeps `src` until the operation is
    /// over.
    fn cache_write(
        &self,
        c: &Cache<T::Region>,
        to: usize,
        at: usize,
        src: &[u8],
    ) -> Result<Option<OpId>, Error> {
        let peer = &c.peers[to];
        let remote = peer
            .remote
            .remote(peer.job, at, src.len(), self.virt_addr)?;
        let op = self.sets[0].ops.lock().start(1, Implicit::No);
        let inject = src.len() <= self.put_limits.inject;
        // SAFETY: the caller keeps `src` alive and unchanged until `op` is
        // over (it holds it in `pending`); the remote range lies in the
        // peer's published block.
        let r = unsafe {
            self.tp.write(
                0,
                peer.job,
                src.as_ptr(),
                src.len(),
                None,
                remote,
                Context::Rma { slot: op.index },
                inject,
            )
        };
        match r {
            Ok(()) => Ok(Some(op)),
            Err(e) => {
                let mut ops = self.sets[0].ops.lock();
                let why = TransferError {
                    err: 0,
                    prov_errno: 0,
                    text: "not posted".into(),
                };
                ops.cancel_transfers(op, 1, why);
                ops.retire(op);
                match e {
                    PostError::Again | PostError::NoMemory => {
                        self.sets[0].stats.eagain_retries.add(1);
                        Ok(None)
                    }
                    PostError::Failed(e) => Err(e.into()),
                }
            }
        }
    }
}
