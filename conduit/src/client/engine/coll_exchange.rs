//! Setting up a team's collective cache (see [`super::coll_cache`]): at
//! the team's first collective each member allocates and registers its
//! block and the members exchange their records (base, key, memory file,
//! length) with an allreduce of bit-wise or over a table in which each
//! fills its row; a later collective waits for that exchange to end, then
//! maps the blocks of this supernode. A member that could not make a block
//! leaves its row empty, and then no member uses the cache, so every
//! member decides the same. What a member makes of the records (its
//! mappings of the other members' blocks) can fail on it alone, so the
//! members then agree, by a second reduction as AMs, before any uses the
//! cache, and if one could not, every member goes without it.

use super::coll::{entry_mut, owe_board, skip_collective, TeamEntry};
use super::coll_cache::{Block, Cache, CacheState, Peer, RECORD_WORDS};
use super::{Core, Progress};
use crate::client::error::Error;
use crate::config::extended::CollRma;
use crate::mem::Mapping;
use crate::sync::{Lock, Mode};
use crate::transport::{Access, Region, Transport};
use ::rma::plan::SegmentInfo;
use coll::cache::{Layout, Slots};
use coll::{CollOp, DType, Msg, Op, Reduction};
use std::collections::VecDeque;
use std::sync::Arc;

/// A member's vote in the agreement: it could not map a member's block.
const VOTE_UNMAPPED: u32 = 1;
/// A member's vote: it could not make the cache.
const VOTE_NO_CACHE: u32 = 2;

/// Where a team's cache set-up stands ([`Core::cache_step`]).
pub(super) enum Step {
    /// Settled (ready, or going without).
    Settled,
    /// A collective of the set-up is still in flight.
    Waiting,
    /// The agreement started: send these messages of collective `.0`.
    Send(u32, Vec<Msg>),
    /// It failed here.
    Failed(Error),
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// A team's first collective: allocate its cache block and start the
    /// exchange of records (an allreduce with bit-wise or over a table in
    /// which each member fills its row; a member that could not make a
    /// block leaves its row empty, and then no member uses the cache).
    pub(super) fn cache_begin(
        &self,
        e: &mut TeamEntry<T::Region>,
    ) -> Result<Option<(u32, Vec<Msg>)>, Error> {
        let n = e.team.size();
        if n < 2 || self.cfg.extended.coll_cache_pages == 0 {
            e.cache = CacheState::Off;
            return Ok(None);
        }
        let board = self.team_shares_memory(&e.team) && n <= coll::flat::FLAT_MAX_MEMBERS;
        let (block, record) = match self.cache_block(n, board) {
            Ok(Some(b)) => {
                let r = b.record;
                (Some(b), r)
            }
            Ok(None) => {
                // The same on every member: the team is too large for the
                // data cache.
                e.cache = CacheState::Off;
                return Ok(None);
            }
            Err(err) => {
                tracing::warn!("rank {}: no collective cache: {}", self.rank, err.report());
                (None, [0; RECORD_WORDS])
            }
        };
        let mut table = vec![0u8; n * RECORD_WORDS * 8];
        for (i, w) in record.iter().enumerate() {
            let at = (e.team.me * RECORD_WORDS + i) * 8;
            table[at..at + 8].copy_from_slice(&w.to_ne_bytes());
        }
        let (seq, msgs) = e.colls.start(CollOp::ReduceToAll {
            src: table,
            reduction: Reduction::Builtin(Op::Bor, DType::U64),
        })?;
        e.cache = CacheState::Exchanging { seq, block };
        Ok(Some((seq, msgs)))
    }

    /// Wait until team `id`'s cache is settled: its record exchange and
    /// the members' agreement on what they made are complete, so every
    /// member routes its later collectives alike.
    pub(super) fn cache_settle(&self, id: u32) -> Result<(), Error> {
        loop {
            {
                let mut teams = self.coll.teams.lock();
                let e = entry_mut(&mut teams, id)?;
                match self.cache_step(e) {
                    Step::Settled => return Ok(()),
                    Step::Waiting => {}
                    Step::Send(seq, msgs) => {
                        let team = e.team.clone();
                        drop(teams);
                        self.coll_send(id, seq, &team, msgs)?;
                        continue;
                    }
                    Step::Failed(err) => return Err(err),
                }
            }
            self.progress_within(0, Progress::Full)?;
            self.exit_if_requested()?;
            self.coll_advance()?;
        }
    }

    /// Move a team's cache set-up one step: a complete exchange makes the
    /// cache (mapping the blocks of this supernode) and starts the
    /// agreement, whose messages the caller sends as AMs; a complete
    /// agreement settles it.
    pub(super) fn cache_step(&self, e: &mut TeamEntry<T::Region>) -> Step {
        match &e.cache {
            CacheState::Exchanging { seq, .. } if e.colls.is_done(*seq) => {
                let seq = *seq;
                match self.cache_finish(e, seq) {
                    Ok(Some((aseq, msgs))) => Step::Send(aseq, msgs),
                    Ok(None) => Step::Settled,
                    Err(err) => Step::Failed(err),
                }
            }
            CacheState::Agreeing { seq, .. } if e.colls.is_done(*seq) => {
                let seq = *seq;
                match self.cache_agreed(e, seq) {
                    Ok(()) => Step::Settled,
                    Err(err) => Step::Failed(err),
                }
            }
            CacheState::Exchanging { .. } | CacheState::Agreeing { .. } => Step::Waiting,
            _ => Step::Settled,
        }
    }

    /// The exchange `seq` is complete: make the cache (or go without one
    /// when a member has none or the members' blocks differ), then start
    /// the members' agreement on it (its sequence number and messages).
    fn cache_finish(
        &self,
        e: &mut TeamEntry<T::Region>,
        seq: u32,
    ) -> Result<Option<(u32, Vec<Msg>)>, Error> {
        // Off whatever the result: a failed exchange is not waited for
        // again.
        let CacheState::Exchanging { block, .. } = std::mem::replace(&mut e.cache, CacheState::Off)
        else {
            return Ok(None);
        };
        let table = match e.colls.take_result(seq) {
            Ok(t) => t.unwrap_or_default(),
            Err(err) => {
                // Members where the exchange completed start the agreement
                // next: this rank skips its number (and aborts theirs), so
                // that every member gives the agreement one number.
                let err = Error::from(err);
                e.owed_when_ready.clear();
                skip_collective(e, &err);
                self.coll
                    .busy
                    .store(true, std::sync::atomic::Ordering::Release);
                return Err(err);
            }
        };
        let records: Vec<u64> = table
            .chunks_exact(8)
            .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let rows: Vec<&[u64]> = records.chunks_exact(RECORD_WORDS).collect();
        let agree =
            rows.len() == e.team.size() && rows.iter().all(|r| r[3] != 0 && r[3] == rows[0][3]);
        let Some(b) = block.filter(|_| agree) else {
            // Every member sees the same table: all go without.
            tracing::warn!(
                "rank {}: team of {} goes without a collective cache (a member has none, \
                 or GASNET_OFI_COLL_CACHE_PAGES differs between members)",
                self.rank,
                e.team.size()
            );
            return Ok(None);
        };
        // What this rank could make is its own: a mapping of a member's
        // block can fail here only (descriptors or memory exhausted), and
        // a team whose members read each other's boards would then wait
        // for ever for this rank's posts. The members agree first.
        let (vote, cache) = match self.cache_ready(&e.team, b, &records) {
            Ok(c) if c.peers.iter().any(|p| p.unmapped.is_some()) => (VOTE_UNMAPPED, Some(c)),
            Ok(c) => (0, Some(c)),
            Err(err) => {
                tracing::warn!(
                    "rank {}: no collective cache for a team of {}: {}",
                    self.rank,
                    e.team.size(),
                    err.report()
                );
                (VOTE_NO_CACHE, None)
            }
        };
        let (aseq, msgs) = e.colls.start(CollOp::ReduceToAll {
            src: vote.to_ne_bytes().to_vec(),
            reduction: Reduction::Builtin(Op::Bor, DType::U32),
        })?;
        e.cache = CacheState::Agreeing {
            seq: aseq,
            cache: cache.map(Box::new),
        };
        Ok(Some((aseq, msgs)))
    }

    /// The agreement `seq` is complete: use the cache as made, or go
    /// without it on every member if a member could not make it or could
    /// not map another's block (a pair that cannot reach each other's
    /// blocks can neither read the board nor credit the slots).
    fn cache_agreed(&self, e: &mut TeamEntry<T::Region>, seq: u32) -> Result<(), Error> {
        // Off whatever the result: a failed agreement is not waited for
        // again.
        let CacheState::Agreeing { cache, .. } = std::mem::replace(&mut e.cache, CacheState::Off)
        else {
            return Ok(());
        };
        let votes = e.colls.take_result(seq)?.unwrap_or_default();
        let votes = votes.get(..4).map_or(VOTE_NO_CACHE, |b| {
            u32::from_ne_bytes(b.try_into().expect("4 bytes"))
        });
        let owed = std::mem::take(&mut e.owed_when_ready);
        match cache {
            Some(c) if votes == 0 => {
                e.cache = CacheState::Ready(c);
                for s in owed {
                    owe_board(e, s);
                }
            }
            _ => tracing::warn!(
                "rank {}: team of {} goes without a collective cache (a member could not {})",
                self.rank,
                e.team.size(),
                if votes & VOTE_UNMAPPED != 0 {
                    "map another member's cache"
                } else {
                    "make its cache"
                }
            ),
        }
        Ok(())
    }

    /// Allocate and register a team's block, with its record for the
    /// exchange (`None` when the team does without a cache); `board`: the
    /// team will use a board (its members share memory), whose buffers
    /// then hold a broadcast of [`coll::cache::BOARD_BCAST_MAX`] bytes.
    pub(super) fn cache_block(
        &self,
        members: usize,
        board: bool,
    ) -> Result<Option<Block<T::Region>>, Error> {
        let pages = self.cfg.extended.coll_cache_pages;
        let data = pages * crate::mem::page_size();
        let board = if board {
            coll::cache::BOARD_BCAST_MAX
        } else {
            0
        };
        let Some(layout) = Layout::with_board(members, data, board).filter(|_| members > 1) else {
            return Ok(None);
        };
        let mem = Arc::new(
            Mapping::memfd(layout.total(), "gasnet-ofi-coll-cache")
                .map_err(|e| Error::map("the collective cache", layout.total(), e))?,
        );
        let head = layout.reserved();
        // SAFETY: the block is fresh and at least RESERVED bytes long.
        unsafe { std::ptr::copy_nonoverlapping(head.as_ptr(), mem.as_ptr(), head.len()) };
        let regions = self.tp.register(&mem, Access::Remote)?;
        let pid_fd = (std::process::id() as u64) << 32 | mem.fd().unwrap_or(-1) as u32 as u64;
        let record = [
            mem.as_ptr() as u64,
            regions[0].key(),
            pid_fd,
            mem.len() as u64,
        ];
        Ok(Some(Block {
            layout,
            mem,
            regions,
            record,
        }))
    }

    /// Make a team's cache from its block and every member's record
    /// (`records[team rank]`), mapping the blocks of this supernode.
    pub(super) fn cache_ready(
        &self,
        team: &coll::Team,
        block: Block<T::Region>,
        records: &[u64],
    ) -> Result<Cache<T::Region>, Error> {
        let n = team.size();
        if records.len() != n * RECORD_WORDS {
            return Err(Error::Published {
                rank: self.rank,
                what: "collective cache records",
            });
        }
        let rma = match self.cfg.extended.coll_rma {
            CollRma::On => true,
            CollRma::Off => false,
            CollRma::Auto => crate::profile::lookup(&self.tp.facts().provider)
                .rma_offloaded
                .unwrap_or(false),
        };
        let mut peers = Vec::with_capacity(n);
        for (r, rec) in records.chunks_exact(RECORD_WORDS).enumerate() {
            let job = team.to_job(r)?;
            let remote = SegmentInfo {
                base: rec[0],
                size: rec[3],
                key: rec[1],
            };
            if rec[3] < block.layout.total() as u64 {
                return Err(Error::Published {
                    rank: job,
                    what: "collective cache record (a smaller block: members disagree on GASNET_OFI_COLL_CACHE_PAGES)",
                });
            }
            let local = self.pshm.as_ref().and_then(|sh| sh.peer(job));
            let mut unmapped = None;
            let (mapped, map) = if r == team.me {
                (Some(block.mem.as_ptr()), None)
            } else if local.is_some() {
                let (pid, fd) = ((rec[2] >> 32) as u32, rec[2] as u32 as i32);
                match Mapping::open_peer(pid, fd, rec[3] as usize) {
                    Ok(m) => (Some(m.as_ptr()), Some(m)),
                    Err(e) => {
                        // The provider still reaches it (unless its
                        // address vector holds this rank only: then the
                        // chunks go as AMs, below).
                        tracing::warn!(
                            "rank {} cannot map the collective cache of rank {job} \
                             (/proc/{pid}/fd/{fd}: {e})",
                            self.rank
                        );
                        unmapped = Some(format!("/proc/{pid}/fd/{fd}: {e}"));
                        (None, None)
                    }
                }
            } else {
                (None, None)
            };
            peers.push(Peer {
                job,
                remote,
                cached: mapped.is_some() || (rma && self.provider_reaches(job)),
                mapped,
                _map: map,
                unmapped,
            });
        }
        // The board: every member shares memory with this rank (the same
        // fact on every member), and the team is small enough for the
        // direct exchange.
        let shared = self.team_shares_memory(team);
        let board = (shared && n <= coll::flat::FLAT_MAX_MEMBERS).then(Default::default);
        Ok(Cache {
            board,
            layout: block.layout,
            mem: block.mem,
            _regions: block.regions,
            me: team.me,
            peers,
            slots: Slots::new(n),
            outq: (0..n).map(|_| VecDeque::new()).collect(),
            words: VecDeque::new(),
            pending: Vec::new(),
        })
    }
}
