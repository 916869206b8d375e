//! Advancing a rank's collectives ([`Core::coll_advance`]): chunks queued
//! by the handler go to their teams' machines, the teams' caches and
//! boards move along, and what the machines emit is sent (through the
//! cache, or as AMs); aborts of collectives that failed here go to the
//! other members.

use super::{owe_board, TeamEntry, H_COLL};
use crate::client::engine::coll_cache::CacheState;
use crate::client::engine::coll_exchange::Step;
use crate::client::engine::Core;
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::Transport;
use coll::Msg;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set `flag`; whether it was already set. Single-threaded, only this
/// thread ever touches it (re-entrantly at most), so a load and a store do:
/// a swap is a locked instruction, which waits for every store still
/// pending, such as a collective's post into a peer's shared memory, and
/// measured as a fifth of an 8-byte collective's time on one host.
#[inline(always)]
fn claim<M: Mode>(flag: &AtomicBool) -> bool {
    if M::PAR {
        return flag.swap(true, Ordering::AcqRel);
    }
    let was = flag.load(Ordering::Relaxed);
    if !was {
        flag.store(true, Ordering::Relaxed);
    }
    was
}

struct Advancing<'a>(&'a AtomicBool);

impl Drop for Advancing<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Feed queued chunks to their teams' machines, move the teams'
    /// caches along, and send what the machines emit. Chunks for a team
    /// this rank has not made yet stay queued.
    pub fn coll_advance(&self) -> Result<(), Error> {
        if claim::<M>(&self.coll.advancing) {
            return Ok(());
        }
        let _g = Advancing(&self.coll.advancing);
        self.coll.queued.store(false, Ordering::Release);
        let queued = std::mem::take(&mut *self.coll.inbox.lock());
        if queued.is_empty() && !self.coll.busy.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut parked = Vec::new();
        let mut sends = Vec::new();
        let mut first_err = None;
        let mut am = Vec::new();
        {
            let mut teams = self.coll.teams.lock();
            for m in queued {
                let Some(e) = teams.get_mut(&m.team) else {
                    if self.coll.retired.lock().contains(&m.team) {
                        // The destroy's synchronisation rules it out; a
                        // later team never takes the id.
                        tracing::warn!(
                            team = m.team,
                            seq = m.seq,
                            src = m.src,
                            "a collective chunk for a destroyed team dropped"
                        );
                    } else {
                        parked.push(m);
                    }
                    continue;
                };
                let Some(from) = e.team.to_team(m.src) else {
                    first_err.get_or_insert(Error::Am(am::Error::MalformedInternal {
                        src: m.src as u32,
                        handler: H_COLL,
                        what: "a collective chunk from a rank outside the team",
                    }));
                    continue;
                };
                match e
                    .colls
                    .on_msg_shaped(m.seq, from, m.phase, m.chunk, m.shape, &m.data)
                {
                    Ok(out) if !out.is_empty() => sends.push((m.team, m.seq, out)),
                    Ok(_) => {}
                    Err(err) => {
                        first_err.get_or_insert(err.into());
                    }
                }
            }
            let mut busy = false;
            for (&id, e) in teams.iter_mut() {
                if let Err(err) = self.team_advance(id, e, &mut sends) {
                    first_err.get_or_insert(err);
                }
                busy |= e.busy();
                // Collectives that failed here end the others' waits.
                for (seq, m) in e.colls.take_aborts() {
                    e.cache.drop_queued(seq);
                    am.push((id, seq, e.team.clone(), vec![m]));
                }
                for (seq, from, reason) in e.colls.take_dropped_aborts() {
                    // Its receivers failed it: they no longer read its
                    // chunks waiting for slots here.
                    e.cache.drop_queued(seq);
                    tracing::warn!(
                        team = id,
                        seq,
                        from,
                        %reason,
                        "abort of a collective complete on this rank dropped (its sender reported the error)"
                    );
                }
            }
            self.coll.busy.store(busy, Ordering::Release);
            // Messages of collectives on the cache go there; the others
            // are sent as AMs once the lock is released.
            for (id, seq, out) in sends {
                let Some(e) = teams.get_mut(&id) else {
                    continue;
                };
                match &mut e.cache {
                    CacheState::Ready(c) if e.cached.contains(&seq) => {
                        match self.cache_send(c, seq, out) {
                            Ok(rest) if !rest.is_empty() => {
                                am.push((id, seq, e.team.clone(), rest))
                            }
                            Ok(_) => {}
                            Err(err) => {
                                first_err.get_or_insert(err);
                            }
                        }
                    }
                    _ => am.push((id, seq, e.team.clone(), out)),
                }
            }
        }
        if !parked.is_empty() {
            let teams: Vec<u32> = parked.iter().map(|m| m.team).collect();
            {
                let mut inbox = self.coll.inbox.lock();
                parked.append(&mut inbox);
                *inbox = parked;
            }
            // Parked chunks wait for their team, not for the next poll;
            // but a team another thread added while they were out of the
            // inbox found it empty (`requeue_parked`), so they are looked
            // at again if theirs exists now. (Put back before this look,
            // added before that one: one of the two sees the other.)
            let made = self.coll.teams.lock();
            if teams.iter().any(|t| made.contains_key(t)) {
                self.coll.queued.store(true, Ordering::Release);
            }
        }
        for (id, seq, team, out) in am {
            if let Err(e) = self.coll_send(id, seq, &team, out) {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }

    /// One team's part of advancing: finish its record exchange when
    /// complete, read its cache, retire abandoned collectives.
    fn team_advance(
        &self,
        id: u32,
        e: &mut TeamEntry<T::Region>,
        sends: &mut Vec<(u32, u32, Vec<Msg>)>,
    ) -> Result<(), Error> {
        let mut first = None;
        match self.cache_step(e) {
            Step::Send(seq, msgs) => sends.push((id, seq, msgs)),
            Step::Failed(err) => first = Some(err),
            Step::Settled | Step::Waiting => {}
        }
        let work = e.cache_work();
        if let CacheState::Ready(c) = &mut e.cache {
            if work {
                match self.cache_poll(c, &mut e.colls) {
                    Ok(out) => sends.extend(out.into_iter().map(|(seq, m)| (id, seq, m))),
                    Err(err) => {
                        first.get_or_insert(err);
                    }
                }
            }
        }
        let done: Vec<u32> = e
            .abandoned
            .iter()
            .copied()
            .filter(|&s| e.colls.is_done(s))
            .collect();
        for s in done {
            e.abandoned.remove(&s);
            e.cached.remove(&s);
            if e.colls.take_result(s).is_err() {
                e.cache.drop_queued(s);
                owe_board(e, s);
            }
        }
        first.map_or(Ok(()), Err)
    }
}
