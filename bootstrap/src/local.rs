//! A bootstrap for tests whose ranks are threads of one process.
//!
//! [`LocalBootstrap::group`]`(n)` makes the `n` ranks of one job; hand one
//! to each thread (each is `Send + Sync` and implements [`Bootstrap`], so
//! it can also go into an `Arc<dyn Bootstrap>`). Every rank is on one host
//! (this machine's name). The collectives meet in shared memory under one
//! mutex and condition variable: each collective is a numbered round that
//! completes when every rank has contributed; a rank waits until its round
//! has completed, so calling them repeatedly is correct as long as every
//! rank calls the same collectives in the same order (a rank that calls
//! another collective, or a broadcast with another root, in the same round
//! gets [`BootstrapError::Protocol`]). Calls from several threads of one
//! rank are serialized.
//!
//! **No rank waits forever for a rank that is gone.** The group is
//! *abandoned*, with a reason, when a rank
//! * panics: noticed when its `LocalBootstrap` is dropped while its thread
//!   unwinds, or when it calls a collective while unwinding;
//! * calls [`Bootstrap::abort`] (which then panics with `rank R aborted
//!   the job with code C`, so that the test sees the abort);
//! * is dropped without [`Bootstrap::finalize`];
//! * calls another collective than the others (see above);
//! * has finalized while others start or wait in a collective it will
//!   never join.
//!
//! From then on every collective that has not completed returns an error
//! ([`BootstrapError::PeerLost`] naming the reason, or
//! [`BootstrapError::Protocol`] for the rank that broke the order) instead
//! of waiting. A rank's handle must therefore be owned by its thread (or by
//! what its thread owns, such as a conduit client): a clone of an
//! `Arc<LocalBootstrap>` kept alive elsewhere hides that rank's panic.
//!
//! [`Bootstrap::finalize`] records the rank's code
//! ([`LocalBootstrap::finalize_code`], [`LocalBootstrap::finalize_codes`]);
//! a collective after finalize is a [`BootstrapError::InvalidArgument`].

use crate::{this_host, Bootstrap, BootstrapError, HostMap};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

/// Which collective a round is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Allgather,
    Barrier,
    Broadcast { root: usize },
}

impl std::fmt::Display for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Allgather => write!(f, "allgather"),
            Op::Barrier => write!(f, "barrier"),
            Op::Broadcast { root } => write!(f, "broadcast from rank {root}"),
        }
    }
}

#[derive(Debug)]
struct State {
    /// Number of completed rounds; the open round is `completed + 1`.
    completed: u64,
    /// The open round's collective, once a rank has joined it.
    op: Option<Op>,
    /// Which ranks have joined the open round.
    arrived: Vec<bool>,
    narrived: usize,
    /// The open round's contributions, by rank.
    contributions: Vec<Option<Vec<u8>>>,
    /// The last completed round's result (allgather: every contribution;
    /// broadcast: the root's; barrier: nothing).
    last: Arc<Vec<Vec<u8>>>,
    /// Why collectives can no longer complete.
    abandoned: Option<String>,
    /// Each rank's finalize code.
    finalized: Vec<Option<i32>>,
}

impl State {
    fn abandon(&mut self, why: String) {
        if self.abandoned.is_none() {
            self.abandoned = Some(why);
        }
    }

    /// Error if the open round can never complete; the group is then
    /// abandoned.
    fn check_alive(&mut self) -> Result<(), BootstrapError> {
        if self.abandoned.is_none() {
            let round = self.completed + 1;
            let gone = (0..self.finalized.len())
                .find(|&q| !self.arrived[q] && self.finalized[q].is_some());
            if let Some(q) = gone {
                self.abandon(format!(
                    "rank {q} has finalized and will not join collective #{round}"
                ));
            }
        }
        match &self.abandoned {
            Some(why) => Err(BootstrapError::PeerLost(format!(
                "{why}; the local bootstrap group is abandoned"
            ))),
            None => Ok(()),
        }
    }
}

#[derive(Debug)]
struct Group {
    size: usize,
    state: Mutex<State>,
    changed: Condvar,
}

impl Group {
    fn lock(&self) -> Result<MutexGuard<'_, State>, BootstrapError> {
        self.state.lock().map_err(|_| poisoned())
    }

    /// The state even when a thread panicked while holding it (to record
    /// that the group is abandoned).
    fn lock_anyway(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

fn poisoned() -> BootstrapError {
    BootstrapError::PeerLost(
        "a rank panicked inside a bootstrap collective; the local bootstrap group is abandoned"
            .into(),
    )
}

/// One rank of a job whose ranks are threads of this process (see the
/// module documentation).
pub struct LocalBootstrap {
    rank: usize,
    hosts: HostMap,
    group: Arc<Group>,
    /// Serializes the calls of several threads of this rank.
    turn: Mutex<()>,
}

impl std::fmt::Debug for LocalBootstrap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalBootstrap")
            .field("rank", &self.rank)
            .field("size", &self.group.size)
            .finish()
    }
}

impl LocalBootstrap {
    /// The `n` ranks of a new job, indexed by rank (empty for `n == 0`).
    pub fn group(n: usize) -> Vec<LocalBootstrap> {
        let group = Arc::new(Group {
            size: n,
            state: Mutex::new(State {
                completed: 0,
                op: None,
                arrived: vec![false; n],
                narrived: 0,
                contributions: vec![None; n],
                last: Arc::new(Vec::new()),
                abandoned: None,
                finalized: vec![None; n],
            }),
            changed: Condvar::new(),
        });
        let entries = vec![(0, this_host()); n];
        (0..n)
            .map(|rank| LocalBootstrap {
                rank,
                hosts: HostMap::new(rank, &entries).expect("one host holding every rank"),
                group: group.clone(),
                turn: Mutex::new(()),
            })
            .collect()
    }

    /// The code this rank passed to [`Bootstrap::finalize`], if it did.
    pub fn finalize_code(&self) -> Option<i32> {
        self.group.lock_anyway().finalized[self.rank]
    }

    /// Every rank's finalize code, by rank (`None`: not finalized).
    pub fn finalize_codes(&self) -> Vec<Option<i32>> {
        self.group.lock_anyway().finalized.clone()
    }

    /// Why the group was abandoned (see the module documentation), if it
    /// was.
    pub fn abandoned(&self) -> Option<String> {
        self.group.lock_anyway().abandoned.clone()
    }

    /// Join the open round with `op` and `mine`, wait until it completes,
    /// and return its result.
    fn collective(&self, op: Op, mine: Option<&[u8]>) -> Result<Arc<Vec<Vec<u8>>>, BootstrapError> {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let g = &*self.group;
        let mut st = g.lock()?;
        let r = self.rank;
        if std::thread::panicking() {
            st.abandon(format!("rank {r} panicked"));
            g.changed.notify_all();
        }
        if st.finalized[r].is_some() {
            return Err(BootstrapError::InvalidArgument(
                "bootstrap collective after finalize".into(),
            ));
        }
        st.check_alive()?;
        let round = st.completed + 1;
        match st.op {
            None => st.op = Some(op),
            Some(other) if other != op => {
                st.abandon(format!(
                    "rank {r} called {op} as collective #{round} while another rank called {other}"
                ));
                g.changed.notify_all();
                return Err(BootstrapError::Protocol(format!(
                    "rank {r} is out of step: it called {op} as collective #{round} but another \
                     rank called {other} (do all ranks call the bootstrap collectives in the \
                     same order?)"
                )));
            }
            Some(_) => {}
        }
        st.arrived[r] = true;
        st.narrived += 1;
        st.contributions[r] = mine.map(<[u8]>::to_vec);
        if st.narrived == g.size {
            let result = match op {
                Op::Allgather => st
                    .contributions
                    .iter_mut()
                    .map(|c| c.take().unwrap_or_default())
                    .collect(),
                Op::Barrier => Vec::new(),
                Op::Broadcast { root } => vec![st.contributions[root].take().unwrap_or_default()],
            };
            st.last = Arc::new(result);
            st.completed = round;
            st.op = None;
            st.narrived = 0;
            st.arrived.iter_mut().for_each(|a| *a = false);
            st.contributions.iter_mut().for_each(|c| *c = None);
            g.changed.notify_all();
        } else {
            // The round cannot complete past this one without this rank, so
            // `completed >= round` means exactly this round completed.
            while st.completed < round {
                st.check_alive()?;
                st = g.changed.wait(st).map_err(|_| poisoned())?;
            }
        }
        Ok(st.last.clone())
    }
}

impl Bootstrap for LocalBootstrap {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.group.size
    }
    fn hosts(&self) -> &HostMap {
        &self.hosts
    }
    fn allgather(&self, mine: &[u8]) -> Result<Vec<Vec<u8>>, BootstrapError> {
        Ok(self.collective(Op::Allgather, Some(mine))?.to_vec())
    }
    fn barrier(&self) -> Result<(), BootstrapError> {
        self.collective(Op::Barrier, None).map(drop)
    }
    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, BootstrapError> {
        if root >= self.group.size {
            return Err(BootstrapError::InvalidArgument(format!(
                "broadcast root {root} is not a rank of a job of {} ranks",
                self.group.size
            )));
        }
        let mine = (self.rank == root).then_some(data);
        let out = self.collective(Op::Broadcast { root }, mine)?;
        Ok(out.first().cloned().unwrap_or_default())
    }
    /// Abandons the group (the other ranks' collectives return errors),
    /// then panics with `rank R aborted the job with code C`.
    fn abort(&self, code: i32) -> ! {
        let what = format!("rank {} aborted the job with code {code}", self.rank);
        {
            let mut st = self.group.lock_anyway();
            st.abandon(what.clone());
            self.group.changed.notify_all();
        }
        panic!("{what}")
    }
    /// Records `code` (see [`LocalBootstrap::finalize_code`]); a later
    /// finalize replaces it.
    fn finalize(&self, code: i32) -> Result<(), BootstrapError> {
        let _turn = self.turn.lock().unwrap_or_else(|e| e.into_inner());
        let mut st = self.group.lock_anyway();
        st.finalized[self.rank] = Some(code);
        // Ranks waiting for this one in a collective must notice.
        self.group.changed.notify_all();
        Ok(())
    }
    fn name(&self) -> &'static str {
        "local"
    }
}

impl Drop for LocalBootstrap {
    fn drop(&mut self) {
        let mut st = self.group.lock_anyway();
        let r = self.rank;
        if std::thread::panicking() {
            st.abandon(format!("rank {r} panicked"));
        } else if st.finalized[r].is_none() {
            st.abandon(format!("rank {r} left the job without finalize"));
        }
        self.group.changed.notify_all();
    }
}

#[cfg(test)]
mod tests;
