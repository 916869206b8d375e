//! Sending a collective's messages as Active Messages, and what a
//! message that cannot be sent does: its collective fails here and the
//! other members are told by aborts, so that none waits for ever.

use super::*;

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Send the messages of a team's cache record exchange, if this
    /// collective began one.
    pub(super) fn send_exchange(
        &self,
        id: u32,
        team: &coll::Team,
        exchange: Option<(u32, Vec<Msg>)>,
    ) -> Result<(), Error> {
        match exchange {
            Some((xseq, xmsgs)) => self.coll_send(id, xseq, team, xmsgs),
            None => Ok(()),
        }
    }

    /// Send abort messages (always as AMs: a collective's cache may be
    /// what failed, or not ready at a member).
    pub(super) fn send_aborts(
        &self,
        id: u32,
        team: &coll::Team,
        aborts: Vec<(u32, Msg)>,
    ) -> Result<(), Error> {
        let mut first = Ok(());
        for (seq, m) in aborts {
            let r = self.coll_send_only(id, seq, team, vec![m]);
            if first.is_ok() {
                first = r;
            }
        }
        first
    }

    /// Send every message of collective `seq` of team `id` (a failed one
    /// does not keep the others from their ranks); the first error. A
    /// message that could not be sent may leave a member waiting for ever:
    /// the collective then fails here (if still in progress) and every
    /// other member gets an abort.
    pub(crate) fn coll_send(
        &self,
        id: u32,
        seq: u32,
        team: &coll::Team,
        msgs: Vec<Msg>,
    ) -> Result<(), Error> {
        let r = self.coll_send_only(id, seq, team, msgs);
        if let Err(e) = &r {
            self.coll_send_failed(id, seq, team, e);
        }
        r
    }

    /// A message of collective `seq` could not be sent (`e`): fail it here
    /// and tell the other members ([`TeamColl::fail_sending`]). The aborts
    /// go whatever becomes of each (the error already goes to the caller).
    #[cold]
    pub(super) fn coll_send_failed(&self, id: u32, seq: u32, team: &coll::Team, e: &Error) {
        self.abort_others(id, team, |t| {
            t.colls.fail_sending(seq, &e.to_string());
            seq
        });
    }

    /// A collective of team `id` could not start here (`e`, which its
    /// caller gets): it takes its sequence number all the same, so that
    /// the members keep numbering alike, and the other members' run of it
    /// is aborted ([`TeamColl::start_failed`]).
    #[cold]
    pub(super) fn coll_not_started(&self, id: u32, team: &coll::Team, e: &Error) {
        if self.exiting() {
            // The job is ending (a peer's exit, most likely what failed):
            // no member waits for this collective any more.
            return;
        }
        self.abort_others(id, team, |t| skip(t, e));
    }

    /// Fail a collective of team `id` here with `fail` (which returns its
    /// sequence number) and send the aborts it queued, whatever becomes of
    /// each (the caller's error already says what failed).
    fn abort_others(
        &self,
        id: u32,
        team: &coll::Team,
        fail: impl FnOnce(&mut TeamEntry<T::Region>) -> u32,
    ) {
        let (seq, aborts) = {
            let mut teams = self.coll.teams.lock();
            let Some(t) = teams.get_mut(&id) else {
                return;
            };
            let seq = fail(t);
            (seq, take_aborts(t))
        };
        self.coll.busy.store(true, Ordering::Release);
        if let Err(a) = self.send_aborts(id, team, aborts) {
            tracing::warn!("collective {seq} of team {id}: an abort could not be sent: {a}");
        }
    }

    /// Send every message (a failed one does not keep the others from
    /// their ranks); the first error.
    fn coll_send_only(
        &self,
        id: u32,
        seq: u32,
        team: &coll::Team,
        msgs: Vec<Msg>,
    ) -> Result<(), Error> {
        let mut first = None;
        for m in msgs {
            let r = team.to_job(m.to).map_err(Error::from).and_then(|dest| {
                self.send_am(
                    0,
                    Side::Request,
                    dest,
                    Category::Medium,
                    H_COLL,
                    &[id, seq, m.phase as u32 | (m.shape as u32) << 8, m.chunk],
                    &m.data,
                    0,
                    false,
                    Progress::Full,
                )
            });
            if let Err(e) = r {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// Take the aborts `t` queued; the chunks of those collectives waiting
/// for cache slots are dropped (their receivers no longer read them).
fn take_aborts<R>(t: &mut TeamEntry<R>) -> Vec<(u32, Msg)> {
    let aborts = t.colls.take_aborts();
    for (seq, _) in &aborts {
        t.cache.drop_queued(*seq);
    }
    aborts
}

/// Skip a collective this rank cannot start (`e`): it takes its sequence
/// number ([`TeamColl::start_failed`]), and members that post it on their
/// boards are acknowledged (now, or once the cache is ready).
pub(crate) fn skip<R>(t: &mut TeamEntry<R>, e: &Error) -> u32 {
    let seq = t.colls.start_failed(coll::Error::NotStarted {
        reason: e.to_string(),
    });
    match &t.cache {
        CacheState::Ready(_) => owe_board(t, seq),
        CacheState::Off => {}
        _ => t.owed_when_ready.push(seq),
    }
    seq
}
