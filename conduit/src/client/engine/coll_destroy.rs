//! Destroying a team (GASNet-EX's `gex_TM_Destroy`): its collective cache
//! (the memory file, its registration and this rank's mappings of the
//! other members' blocks) and its state are released, collectively.
//!
//! A member may free its block only once no member will touch it again:
//! every member first waits until its cache's set-up is settled (the
//! agreement on it takes a sequence number on every member), then until
//! every collective it started on the team is complete and every write of
//! its cache is over (its flush: chunks delivered, credits and flags
//! written); from then on it no longer reads its cache (a chunk a member
//! left there for a collective that failed here would be credited to a
//! member that may have freed its block). Then the members synchronise by
//! a reduction that travels as Active Messages, never through the cache
//! being freed. A member that finished that reduction knows that every
//! other member finished its flush, so nothing more arrives in its block;
//! a member that still reads another's block through its own mapping keeps
//! those pages alive until it unmaps them (a memory file lives as long as
//! a mapping of it).
//!
//! The id is retired on this rank: a later split never takes it here (the
//! members agree again), so a team made later cannot be confused with it.

use super::entry_mut;
use crate::client::engine::Core;
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use coll::{CollOp, DType, Op, Reduction};

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Destroy team `id` (collective over its members): flush, synchronise
    /// by AMs, then release everything the team holds here. An error
    /// before the release leaves the team as it was (a member may still
    /// use its cache); the world team (id 0) cannot be destroyed.
    pub fn coll_destroy(&self, id: u32) -> Result<(), Error> {
        if id == 0 {
            return Err(Error::DestroyWorld);
        }
        // The cache's set-up first: its agreement takes a sequence number,
        // and every member must have taken it before the barrier takes
        // the next (a member whose exchange ended inside its only
        // collective has not started its agreement yet).
        if let Err(err) = self.cache_settle(id).and_then(|()| self.coll_flush(id)) {
            // The others go on to the barrier below: its number is taken
            // here and their run of it aborted.
            let team = self.coll.teams.lock().get(&id).map(|e| e.team.clone());
            if let Some(team) = team {
                self.coll_not_started(id, &team, &err);
            }
            return Err(err);
        }
        let team = {
            let mut teams = self.coll.teams.lock();
            let e = entry_mut(&mut teams, id)?;
            e.closing = true;
            e.team.clone()
        };
        let barrier = CollOp::ReduceToAll {
            src: vec![0; 4],
            reduction: Reduction::Builtin(Op::Bor, DType::U32),
        };
        let synced = self
            .coll_start_with(id, &team, barrier, true)
            .and_then(|seq| self.coll_wait(id, seq));
        if let Err(e) = synced {
            // Left as it was: its cache is read again.
            if let Some(t) = self.coll.teams.lock().get_mut(&id) {
                t.closing = false;
            }
            return Err(e);
        }
        let gone = {
            let mut teams = self.coll.teams.lock();
            self.coll.retired.lock().insert(id);
            teams.remove(&id)
        };
        if let Some(e) = &gone {
            debug_assert!(e.quiet(), "a destroyed team had work in flight");
        }
        // Unmapped and deregistered outside the lock.
        drop(gone);
        tracing::debug!(team = id, "team destroyed");
        Ok(())
    }
}
