//! Setting up a team's collective cache (see [`super::coll_cache`]): at
//! the team's first collective each member allocates and registers its
//! block and the members exchange their records (base, key, memory file,
//! length) with an allreduce of bit-wise or over a table in which each
//! fills its row; a later collective waits for that exchange to end, then
//! maps the blocks of this supernode. A member that could not make a block
//! leaves its row empty, and then no member uses the cache, so every
//! member decides the same.

use super::coll::{entry_mut, TeamEntry};
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

    /// Finish team `id`'s record exchange if it is complete; with `wait`,
    /// make progress until it is.
    pub(super) fn cache_settle(&self, id: u32) -> Result<(), Error> {
        loop {
            {
                let mut teams = self.coll.teams.lock();
                let e = entry_mut(&mut teams, id)?;
                let CacheState::Exchanging { seq, .. } = e.cache else {
                    return Ok(());
                };
                if e.colls.is_done(seq) {
                    return self.cache_finish(e, seq);
                }
            }
            self.progress_within(0, Progress::Full)?;
            self.exit_if_requested()?;
            self.coll_advance()?;
        }
    }

    /// The exchange `seq` is complete: make the cache (or go without one
    /// when a member has none or the members' blocks differ).
    pub(super) fn cache_finish(&self, e: &mut TeamEntry<T::Region>, seq: u32) -> Result<(), Error> {
        let table = e.colls.take_result(seq)?.unwrap_or_default();
        let CacheState::Exchanging { block, .. } = std::mem::replace(&mut e.cache, CacheState::Off)
        else {
            return Ok(());
        };
        let records: Vec<u64> = table
            .chunks_exact(8)
            .map(|b| u64::from_ne_bytes(b.try_into().expect("8 bytes")))
            .collect();
        let rows: Vec<&[u64]> = records.chunks_exact(RECORD_WORDS).collect();
        let agree =
            rows.len() == e.team.size() && rows.iter().all(|r| r[3] != 0 && r[3] == rows[0][3]);
        match block {
            Some(b) if agree => {
                e.cache = CacheState::Ready(Box::new(self.cache_ready(&e.team, b, &records)?));
            }
            _ => {
                tracing::warn!(
                    "rank {}: team of {} goes without a collective cache (a member has none, \
                     or GASNET_OFI_COLL_CACHE_PAGES differs between members)",
                    self.rank,
                    e.team.size()
                );
            }
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
