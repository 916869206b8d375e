//! Communicators and the blocking calls on them.

use super::engine::{CommInfo, Engine};
use super::error::TaggedError;
use super::ops::Select;
use crate::client::engine::Core;
use crate::client::Error;
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use std::sync::Arc;
use tagged::comm::split_members;
use tagged::Status;

/// Internal tags of the collectives communicators are made with.
const T_GATHER: u32 = 1;
const T_BCAST: u32 = 2;

/// A communicator: a group of ranks with a context of its own, so that the
/// same tag on two communicators never cross-matches. `world()` holds every
/// rank; [`Comm::dup`] and [`Comm::split`] make new ones (collectively).
///
/// Messages between one sender and one receiver on one communicator match
/// in the order they were sent (MPI's rule; the provider is asked for
/// `FI_ORDER_SAS`).
pub struct Comm<'c, M: Mode, S, T: Transport> {
    pub(crate) core: &'c Core<M, T, S>,
    pub(crate) eng: &'c Engine<M>,
    pub(crate) info: Arc<CommInfo>,
}

impl<M: Mode, S, T: Transport> Clone for Comm<'_, M, S, T> {
    fn clone(&self) -> Self {
        Comm {
            core: self.core,
            eng: self.eng,
            info: self.info.clone(),
        }
    }
}

impl<M: Mode, S, T: Transport> std::fmt::Debug for Comm<'_, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comm")
            .field("id", &self.info.cid)
            .field("rank", &self.info.rank)
            .field("size", &self.info.members.len())
            .field("context", &self.info.ctx)
            .finish()
    }
}

impl<'c, M: Mode, S, T: Transport> Comm<'c, M, S, T> {
    /// The world communicator of a client's tagged engine.
    pub(crate) fn world(core: &'c Core<M, T, S>) -> Result<Self, Error> {
        let eng = core.tagged_engine()?;
        let info = eng
            .comms
            .lock()
            .get(&0)
            .cloned()
            .unwrap_or_else(|| unreachable!("the world is registered at start-up"));
        Ok(Comm { core, eng, info })
    }

    /// This rank's rank in the communicator.
    pub fn rank(&self) -> u32 {
        self.info.rank
    }
    /// Number of ranks.
    pub fn size(&self) -> u32 {
        self.info.members.len() as u32
    }
    /// The communicator id carried in every tag.
    pub fn id(&self) -> u32 {
        self.info.cid
    }
    /// The context (endpoint or scalable-endpoint context) its traffic uses.
    pub fn context(&self) -> usize {
        self.info.ctx
    }
    /// World rank of communicator rank `r`.
    pub fn world_rank(&self, r: u32) -> Result<u32, Error> {
        Ok(self.info.world(r)?)
    }

    /// Blocking send of `buf` to `dest` with `tag`: returns once `buf` may
    /// be reused (small messages are injected and return at once).
    pub fn send(&self, buf: &[u8], dest: u32, tag: u32) -> Result<(), Error> {
        self.send_with(buf, dest, tag, false, false)
    }

    /// Synchronous send: returns only once the receiver has matched the
    /// message (the seed's protocol bit and an acknowledgement).
    pub fn ssend(&self, buf: &[u8], dest: u32, tag: u32) -> Result<(), Error> {
        self.send_with(buf, dest, tag, true, false)
    }

    fn send_with(
        &self,
        buf: &[u8],
        dest: u32,
        tag: u32,
        sync: bool,
        internal: bool,
    ) -> Result<(), Error> {
        crate::client::engine::not_in_handler("a tagged send")?;
        // SAFETY: buf outlives the call, and the call waits for the send.
        let p = unsafe {
            self.eng.start_send(
                &self.info,
                buf.as_ptr(),
                buf.len(),
                dest,
                tag,
                super::ops::SendHow { sync, internal },
            )?
        };
        self.core.tagged_complete(self.eng, p, "send").map(|_| ())
    }

    /// Blocking receive into `buf` from `source` (`None`: any) with `tag`
    /// (`None`: any). A message longer than `buf` fills it and the call
    /// returns [`TaggedError::Truncated`] with the status; nothing is
    /// written past `buf`.
    pub fn recv(
        &self,
        buf: &mut [u8],
        source: Option<u32>,
        tag: Option<u32>,
    ) -> Result<Status, Error> {
        self.recv_with(buf, source, tag, false)
    }

    fn recv_with(
        &self,
        buf: &mut [u8],
        source: Option<u32>,
        tag: Option<u32>,
        internal: bool,
    ) -> Result<Status, Error> {
        crate::client::engine::not_in_handler("a tagged receive")?;
        let sel = Select {
            source,
            tag,
            internal,
        };
        // SAFETY: buf is borrowed mutably for the call, which waits for the
        // receive to finish.
        let p = unsafe {
            self.eng
                .start_recv(&self.info, buf.as_mut_ptr(), buf.len(), sel, false)?
        };
        self.core.tagged_complete(self.eng, p, "receive")
    }

    /// Is a matching message waiting? Its status if so (the message stays
    /// to be received).
    pub fn iprobe(&self, source: Option<u32>, tag: Option<u32>) -> Result<Option<Status>, Error> {
        // It waits for the provider's answer, making progress meanwhile.
        crate::client::engine::not_in_handler("a tagged probe")?;
        let sel = Select {
            source,
            tag,
            internal: false,
        };
        // SAFETY: a probe places no data.
        let p = unsafe {
            self.eng
                .start_recv(&self.info, std::ptr::null_mut(), 0, sel, true)?
        };
        match self.core.tagged_complete(self.eng, p, "probe") {
            Ok(st) => Ok(Some(st)),
            Err(Error::Tagged(TaggedError::Op { cause, .. }))
                if cause.err == ofi_sys::FI_ENOMSG as i32 =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Wait for a matching message and return its status (it stays to be
    /// received).
    pub fn probe(&self, source: Option<u32>, tag: Option<u32>) -> Result<Status, Error> {
        crate::client::engine::not_in_handler("a tagged probe")?;
        loop {
            if let Some(st) = self.iprobe(source, tag)? {
                return Ok(st);
            }
            self.core.poll_api(0)?;
        }
    }

    /// Every member's `mine` (the same length on every member), by
    /// communicator rank: gathered at rank 0, then sent to all.
    pub(crate) fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, Error> {
        let (n, k) = (self.size() as usize, mine.len());
        let mut packed = vec![0u8; n * k];
        if self.rank() == 0 {
            packed[..k].copy_from_slice(mine);
            for r in 1..n {
                let st = self.recv_with(
                    &mut packed[r * k..(r + 1) * k],
                    Some(r as u32),
                    Some(T_GATHER),
                    true,
                )?;
                if st.len != k {
                    return Err(malformed("allgather", "an entry of another length"));
                }
            }
            for r in 1..n {
                self.send_with(&packed, r as u32, T_BCAST, false, true)?;
            }
        } else {
            self.send_with(mine, 0, T_GATHER, false, true)?;
            let st = self.recv_with(&mut packed, Some(0), Some(T_BCAST), true)?;
            if st.len != n * k {
                return Err(malformed("allgather", "a result of another length"));
            }
        }
        if k == 0 {
            return Ok(vec![Vec::new(); n]);
        }
        Ok(packed.chunks(k).map(<[u8]>::to_vec).collect())
    }

    /// A barrier over the communicator.
    pub fn barrier(&self) -> Result<(), Error> {
        crate::client::engine::not_in_handler("a communicator's barrier")?;
        self.allgather(&[]).map(|_| ())
    }

    /// Agree on a communicator id free on every member (Open MPI's
    /// algorithm: propose the lowest free, take the largest proposal, check
    /// it is free everywhere, else start again above it). Each member takes
    /// the id when it checks it, so communicators made at once by several
    /// threads never share one.
    fn agree_cid(&self) -> Result<u32, Error> {
        let mut start = 1u64;
        loop {
            let mine = self.eng.cids.lock().lowest_free_from(start);
            let all = self.allgather(&mine.to_le_bytes())?;
            let mut p = 0u64;
            for a in &all {
                let b: [u8; 8] = a
                    .as_slice()
                    .try_into()
                    .map_err(|_| malformed("id agreement", "bad proposal"))?;
                p = p.max(u64::from_le_bytes(b));
            }
            if p > self.eng.layout.max_cid() as u64 {
                return Err(TaggedError::Limit(tagged::LimitError::Cid {
                    cid: p.min(u32::MAX as u64) as u32,
                    max: self.eng.layout.max_cid(),
                    mode: self.eng.layout.mode,
                })
                .into());
            }
            // Taken here at once if free, so that a communicator another
            // thread of this rank makes at the same time cannot find it
            // free too; given back unless every member could take it.
            let ok = {
                let mut cids = self.eng.cids.lock();
                let free = cids.is_free(p);
                if free {
                    cids.take(p as u32);
                }
                free
            };
            let all = match self.allgather(&[ok as u8]) {
                Ok(all) => all,
                Err(e) => {
                    if ok {
                        self.eng.cids.lock().release(p as u32);
                    }
                    return Err(e);
                }
            };
            if all.iter().all(|a| a == &[1]) {
                return Ok(p as u32);
            }
            if ok {
                self.eng.cids.lock().release(p as u32);
            }
            start = p + 1;
        }
    }

    /// Make and register the communicator with id `cid` and `members`
    /// (world ranks), creating its context if needed, then a barrier on
    /// this (parent) communicator so every member's context exists before
    /// anyone sends on it.
    fn make(&self, cid: u32, members: Option<Box<[u32]>>) -> Result<Option<Self>, Error> {
        let made = match members {
            Some(members) => {
                let me = self.eng.rank;
                let rank = members
                    .iter()
                    .position(|&w| w == me)
                    .unwrap_or_else(|| unreachable!("a member")) as u32;
                let ctx = self.eng.ctx_for(cid);
                self.eng.ensure_ctx(ctx)?;
                let info = Arc::new(CommInfo::new(cid, rank, members, ctx));
                self.eng.comms.lock().insert(cid, info.clone());
                Some(Comm {
                    core: self.core,
                    eng: self.eng,
                    info,
                })
            }
            None => {
                self.eng.cids.lock().release(cid);
                None
            }
        };
        self.barrier()?;
        Ok(made)
    }

    /// A new communicator with the same members (collective).
    pub fn dup(&self) -> Result<Self, Error> {
        crate::client::engine::not_in_handler("a communicator's dup")?;
        let cid = self.agree_cid()?;
        Ok(self
            .make(cid, Some(self.info.members.clone()))?
            .unwrap_or_else(|| unreachable!("a dup has members")))
    }

    /// Split by `colour` (`None`: this rank joins no new communicator, MPI's
    /// `MPI_UNDEFINED`), ordering each new communicator by `key`, then by
    /// rank here (collective).
    pub fn split(&self, colour: Option<u32>, key: i32) -> Result<Option<Self>, Error> {
        crate::client::engine::not_in_handler("a communicator's split")?;
        let mut mine = Vec::with_capacity(9);
        mine.push(colour.is_some() as u8);
        mine.extend_from_slice(&colour.unwrap_or(0).to_le_bytes());
        mine.extend_from_slice(&key.to_le_bytes());
        let all = self.allgather(&mine)?;
        let mut entries = Vec::with_capacity(all.len());
        for a in &all {
            if a.len() != 9 {
                return Err(malformed("split", "bad entry"));
            }
            let c = u32::from_le_bytes([a[1], a[2], a[3], a[4]]);
            let k = i32::from_le_bytes([a[5], a[6], a[7], a[8]]);
            entries.push(((a[0] == 1).then_some(c), k));
        }
        let cid = self.agree_cid()?;
        let members = split_members(&entries, self.rank() as usize).map(|m| {
            m.into_iter()
                .map(|r| self.info.members[r])
                .collect::<Box<[u32]>>()
        });
        self.make(cid, members)
    }

    /// Free the communicator (collective over its members: they agree,
    /// then its id may be reused). A clone of it used afterwards fails with
    /// [`TaggedError::Freed`].
    ///
    /// A member with requests still pending on it (a receive not matched
    /// yet, a synchronous send not acknowledged) would leave them to match
    /// the communicator that takes its id next, or an acknowledgement
    /// unsent: every member then gets [`TaggedError::FreePending`] naming
    /// the members that have some, and the communicator stays usable
    /// (MPI lets such requests complete after the free; here they are
    /// waited for, or cancelled, first).
    pub fn free(self) -> Result<(), Error> {
        crate::client::engine::not_in_handler("a communicator's free")?;
        if self.info.cid == 0 {
            return Err(TaggedError::FreeWorld.into());
        }
        let cid = self.info.cid;
        let mine = self.eng.ctx(self.info.ctx).reqs().pending_on(cid) as u32;
        let all = self.allgather(&mine.to_le_bytes())?;
        let mut busy = Vec::new();
        for (r, a) in all.iter().enumerate() {
            let b: [u8; 4] = a
                .as_slice()
                .try_into()
                .map_err(|_| malformed("free", "bad count"))?;
            if u32::from_le_bytes(b) != 0 {
                busy.push(r as u32);
            }
        }
        if !busy.is_empty() {
            return Err(TaggedError::FreePending {
                cid,
                pending: mine,
                ranks: busy,
            }
            .into());
        }
        self.info
            .freed
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.eng.comms.lock().remove(&self.info.cid);
        self.eng.cids.lock().release(self.info.cid);
        Ok(())
    }
}

fn malformed(op: &'static str, what: &str) -> Error {
    TaggedError::Collective {
        op,
        what: what.to_string(),
    }
    .into()
}
