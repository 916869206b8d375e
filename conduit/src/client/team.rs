//! Teams and collectives (GASNet-EX's `gex_TM_*` and `gex_Coll_*`): the
//! world team, split by colour and key, rank translation, and broadcast,
//! reduction to one and reduction to all, blocking and non-blocking.
//!
//! Every member of a team calls its collectives in the same order (as
//! GASNet-EX and MPI require). Broadcasts go down an n-ary fan-out tree
//! (`GASNET_OFI_COLL_FANOUT`, default 2); reductions with a commutative
//! operator go up a binary tree, with a non-commutative one serially in
//! team-rank order, so the result is `((x0 ∘ x1) ∘ x2) ∘ ...`; reduction to
//! all is a reduction to team rank 0 then a broadcast, except for a
//! commutative operator on at most one chunk, which takes recursive
//! doubling. Data travels in AM Medium chunks (`GASNET_OFI_MAX_MEDIUM`
//! bytes), pipelined through the tree. Collectives advance when this rank
//! waits for or tests one, polls, or waits in a barrier.
//!
//! ```no_run
//! use conduit::client::{Client, CollOp};
//!
//! let c = Client::init().unwrap();
//! let world = c.world().unwrap();
//! let sum = world.allreduce(CollOp::Sum, &[c.rank() as u64]).unwrap();
//! assert_eq!(sum[0], (0..c.size() as u64).sum::<u64>());
//! // Odd and even ranks in two teams.
//! let half = world.split(Some(c.rank() as u32 % 2), 0).unwrap().unwrap();
//! let mut v = [0u8; 4];
//! if half.rank() == 0 {
//!     v = *b"root";
//! }
//! half.broadcast(0, &mut v).unwrap();
//! ```

use super::engine::Core;
use super::{ClientOf, Error};
use crate::sync::Mode;
use crate::transport::Transport;
pub use coll::{mat2, DType, Op as CollOp, Reduction, UserOp};
use coll::{CollOp as Start, SplitEntry};
use std::sync::Arc;

/// A type reductions take: the six of GASNet-EX's `GEX_DT_*` that the
/// built-in operators serve.
pub trait CollValue: Copy + Send + Sync + 'static {
    /// Its data type.
    const DTYPE: DType;
    /// Append its bytes (native order).
    fn put(self, out: &mut Vec<u8>);
    /// Read it from `DTYPE.size()` bytes.
    fn get(b: &[u8]) -> Self;
    /// The bytes of `v` (native order). The default appends element by
    /// element; the built-in types copy the slice at once.
    fn to_bytes(v: &[Self]) -> Vec<u8> {
        let mut out = Vec::with_capacity(std::mem::size_of_val(v));
        for x in v {
            x.put(&mut out);
        }
        out
    }
    /// The values in `b` (whole elements of `DTYPE.size()` bytes). The
    /// default reads element by element; the built-in types copy at once.
    fn from_bytes(b: &[u8]) -> Vec<Self> {
        b.chunks_exact(Self::DTYPE.size()).map(Self::get).collect()
    }
}

macro_rules! coll_value {
    ($($t:ty => $d:ident),*) => {$(
        impl CollValue for $t {
            const DTYPE: DType = DType::$d;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
            fn get(b: &[u8]) -> Self {
                let mut a = [0u8; std::mem::size_of::<$t>()];
                a.copy_from_slice(b);
                <$t>::from_ne_bytes(a)
            }
            fn to_bytes(v: &[Self]) -> Vec<u8> {
                bytemuck::cast_slice::<$t, u8>(v).to_vec()
            }
            fn from_bytes(b: &[u8]) -> Vec<Self> {
                // Whole elements only, as the default (a reduction's
                // result always is).
                let whole = b.len() / std::mem::size_of::<$t>() * std::mem::size_of::<$t>();
                bytemuck::pod_collect_to_vec(&b[..whole])
            }
        }
    )*};
}

coll_value!(i32 => I32, u32 => U32, i64 => I64, u64 => U64, f32 => F32, f64 => F64);

fn to_bytes<V: CollValue>(v: &[V]) -> Vec<u8> {
    V::to_bytes(v)
}

fn from_bytes<V: CollValue>(b: &[u8]) -> Vec<V> {
    V::from_bytes(b)
}

/// A team of ranks (from [`ClientOf::world`] or [`Team::split`]).
pub struct Team<'c, M: Mode, S, T: Transport> {
    core: &'c Core<M, T, S>,
    id: u32,
    team: Arc<coll::Team>,
}

impl<M: Mode, S, T: Transport> std::fmt::Debug for Team<'_, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Team")
            .field("id", &self.id)
            .field("members", &self.team.members)
            .field("rank", &self.team.me)
            .finish()
    }
}

/// A non-blocking collective in flight ([`Team::broadcast_nb`],
/// [`Team::reduce_nb`], [`Team::allreduce_nb`]): complete it with
/// [`CollEvent::wait`] (or poll it with [`CollEvent::test`]). It advances
/// whenever this rank waits or polls. Dropping it unwaited leaves the
/// collective to finish in later polls (or in [`Team::flush`]); its result
/// is then dropped.
#[must_use = "a collective's result is read by waiting for it"]
pub struct CollEvent<'t, 'c, M: Mode, S, T: Transport> {
    team: &'t Team<'c, M, S, T>,
    seq: u32,
}

impl<M: Mode, S, T: Transport> std::fmt::Debug for CollEvent<'_, '_, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CollEvent(team {}, seq {})", self.team.id, self.seq)
    }
}

impl<M: Mode, S, T: Transport> CollEvent<'_, '_, M, S, T> {
    /// Whether it completed (one poll of the network, then advancing
    /// collectives).
    pub fn test(&self) -> Result<bool, Error> {
        super::engine::not_in_handler("a collective's test")?;
        let core = self.team.core;
        core.progress_within(0, super::engine::Progress::Full)?;
        core.exit_if_requested()?;
        core.coll_test(self.team.id, self.seq)
    }

    /// Wait for it: the broadcast data, the reduction's result (`None` on
    /// the ranks other than a reduction's root).
    pub fn wait(self) -> Result<Option<Vec<u8>>, Error> {
        super::engine::not_in_handler("a collective's wait")?;
        let (team, seq) = (self.team, self.seq);
        // Waited for: not abandoned, whatever the wait returns.
        std::mem::forget(self);
        team.core.coll_wait(team.id, seq)
    }
}

impl<M: Mode, S, T: Transport> Drop for CollEvent<'_, '_, M, S, T> {
    fn drop(&mut self) {
        self.team.core.coll_abandon(self.team.id, self.seq);
    }
}

/// A split's vote: the agreed id is another team's on this member.
const SPLIT_ID_TAKEN: u32 = 1;
/// A split's vote: this member could not make the team (it returns why).
const SPLIT_FAILED: u32 = 2;

impl<M: Mode, S, T: Transport> ClientOf<M, S, T> {
    /// The team of every rank (GASNet-EX's primordial team).
    pub fn world(&self) -> Result<Team<'_, M, S, T>, Error> {
        let core = self.core();
        Ok(Team {
            core,
            id: 0,
            team: core.world_team()?,
        })
    }
}

impl<'c, M: Mode, S, T: Transport> Team<'c, M, S, T> {
    /// This rank's rank in the team.
    pub fn rank(&self) -> usize {
        self.team.me
    }

    /// Members.
    pub fn size(&self) -> usize {
        self.team.size()
    }

    /// The job ranks of the members, in team-rank order.
    pub fn members(&self) -> &[usize] {
        &self.team.members
    }

    /// The job rank of team rank `r` (an error names a rank outside the
    /// team).
    pub fn to_job(&self, r: usize) -> Result<usize, Error> {
        Ok(self.team.to_job(r)?)
    }

    /// The team rank of job rank `r`, if it is a member.
    pub fn to_team(&self, r: usize) -> Option<usize> {
        self.team.to_team(r)
    }

    fn check_root(&self, root: usize) -> Result<(), Error> {
        self.team.to_job(root).map(|_| ()).map_err(Into::into)
    }

    fn start(&self, op: Start) -> Result<CollEvent<'_, 'c, M, S, T>, Error> {
        super::engine::not_in_handler("a collective")?;
        let seq = self.core.coll_start(self.id, &self.team, op)?;
        Ok(CollEvent { team: self, seq })
    }

    /// Split the team (collective over it, as `gex_TM_Split`): members
    /// giving the same `colour` form a new team, ordered by `key` then by
    /// their rank here; `None` (GASNet's `GEX_COLOR_NONE`) joins no team
    /// and gets `None`.
    pub fn split(&self, colour: Option<u32>, key: u32) -> Result<Option<Team<'c, M, S, T>>, Error> {
        let n = self.size();
        let me = self.rank();
        let entry = SplitEntry {
            parent_rank: me,
            colour,
            key,
        }
        .encode()?;
        loop {
            // Every member's entry and proposed id, gathered by a reduction
            // with bit-wise or over a table where each fills its own row.
            let mut table = vec![0u32; n * 5];
            table[me * 5..me * 5 + 4].copy_from_slice(&entry);
            table[me * 5 + 4] = self.core.team_id_proposal();
            let all = self.allreduce(CollOp::Bor, &table)?;
            let mut entries = Vec::with_capacity(n);
            for row in all.chunks_exact(5) {
                entries.push(SplitEntry::decode([row[0], row[1], row[2], row[3]])?);
            }
            let made = match coll::split(&self.team, &entries)? {
                None => None,
                Some(team) => {
                    let id = team
                        .members
                        .iter()
                        .filter_map(|&j| self.team.to_team(j))
                        .map(|p| all[p * 5 + 4])
                        .max()
                        .unwrap_or(0);
                    Some((id, self.core.add_team(id, team)))
                }
            };
            // The id is the largest of the new team's proposals, so a
            // member whose threads split other teams at the same time may
            // already have it (another team's largest proposal came from
            // another peer): every member of this team learns whether any
            // member could not take it, and all try again with ids above
            // every one seen (`add_team` raised this rank's next proposal).
            let vote = match &made {
                Some((_, Ok(_))) | None => 0,
                Some((_, Err(Error::TeamIdTaken { .. }))) => SPLIT_ID_TAKEN,
                Some((_, Err(_))) => SPLIT_FAILED,
            };
            let votes = self.allreduce(CollOp::Bor, &[vote]);
            let made = match made {
                Some((id, Ok(team))) => Some((id, team)),
                Some((_, Err(Error::TeamIdTaken { .. }))) | None => None,
                Some((_, Err(e))) => return Err(e),
            };
            let votes = match votes {
                Ok(v) => v[0],
                Err(e) => {
                    if let Some((id, _)) = made {
                        self.core.withdraw_team(id);
                    }
                    return Err(e);
                }
            };
            if votes == 0 {
                return Ok(made.map(|(id, team)| Team {
                    core: self.core,
                    id,
                    team,
                }));
            }
            if let Some((id, _)) = made {
                self.core.withdraw_team(id);
            }
            if votes & SPLIT_FAILED != 0 {
                return Err(Error::SplitFailedElsewhere);
            }
            tracing::debug!("team split: an agreed id was taken on a member; agreeing again");
        }
    }

    /// Broadcast `buf` from team rank `root` to every member's `buf` (all
    /// members give the same length).
    pub fn broadcast(&self, root: usize, buf: &mut [u8]) -> Result<(), Error> {
        super::engine::not_in_handler("a collective")?;
        self.check_root(root)?;
        // Posted on the root's board (a team that shares memory), with
        // nothing else of it in flight: here and now, from and into `buf`.
        if self.core.coll_broadcast_now(self.id, root, buf)? {
            return Ok(());
        }
        let is_root = self.rank() == root;
        let src = is_root.then(|| buf.to_vec());
        let got = self.broadcast_nb(root, buf.len(), src)?.wait()?;
        // The root's result is its own data, already in `buf`.
        if let (Some(d), false) = (got, is_root) {
            buf.copy_from_slice(&d);
        }
        Ok(())
    }

    /// Start a broadcast of `len` bytes from `root`, whose `src` holds them
    /// (`None` elsewhere); the event's result is the data on every member.
    pub fn broadcast_nb(
        &self,
        root: usize,
        len: usize,
        src: Option<Vec<u8>>,
    ) -> Result<CollEvent<'_, 'c, M, S, T>, Error> {
        self.check_root(root)?;
        let src = if self.rank() == root { src } else { None };
        self.start(Start::Broadcast { root, len, src })
    }

    /// Reduce every member's `src` element-wise with `op` to team rank
    /// `root`: `Some(result)` there, `None` elsewhere.
    pub fn reduce<V: CollValue>(
        &self,
        root: usize,
        op: CollOp,
        src: &[V],
    ) -> Result<Option<Vec<V>>, Error> {
        let r = self
            .reduce_nb(root, Reduction::Builtin(op, V::DTYPE), to_bytes(src))?
            .wait()?;
        Ok(r.map(|b| from_bytes(&b)))
    }

    /// Reduce every member's `src` element-wise with `op`; every member
    /// gets the result.
    pub fn allreduce<V: CollValue>(&self, op: CollOp, src: &[V]) -> Result<Vec<V>, Error> {
        super::engine::not_in_handler("a collective")?;
        let reduction = Reduction::Builtin(op, V::DTYPE);
        let src = to_bytes(src);
        // On a team that shares memory, with nothing else of it in flight,
        // it runs here and now (the same protocol, without the machinery).
        if let Some(r) = self.core.coll_allreduce_now(self.id, &reduction, &src)? {
            return Ok(from_bytes(&r));
        }
        let r = self.allreduce_nb(reduction, src)?.wait()?;
        Ok(from_bytes(&r.unwrap_or_default()))
    }

    /// Start a reduction of `src` (bytes of the reduction's elements) to
    /// `root`; the event's result is `Some` on the root.
    pub fn reduce_nb(
        &self,
        root: usize,
        reduction: Reduction,
        src: Vec<u8>,
    ) -> Result<CollEvent<'_, 'c, M, S, T>, Error> {
        self.check_root(root)?;
        self.start(Start::ReduceToOne {
            root,
            src,
            reduction,
        })
    }

    /// Start a reduction of `src` to every member.
    pub fn allreduce_nb(
        &self,
        reduction: Reduction,
        src: Vec<u8>,
    ) -> Result<CollEvent<'_, 'c, M, S, T>, Error> {
        self.start(Start::ReduceToAll { src, reduction })
    }

    /// Wait until every collective this rank started on the team is
    /// complete here and every one-sided write into the members'
    /// collective caches is over (Open MPI coll/ofi's flush). Events keep
    /// their results.
    pub fn flush(&self) -> Result<(), Error> {
        super::engine::not_in_handler("a team's flush")?;
        self.core.coll_flush(self.id)
    }

    /// Destroy the team, collective over its members (GASNet-EX's
    /// `gex_TM_Destroy`): every member waits until its own collectives on
    /// the team are complete and their writes over ([`Team::flush`]), the
    /// members synchronise, then each releases what the team holds (its
    /// collective cache: a memory file, its registration with the
    /// provider, the mappings of the other members' caches). A team that
    /// is dropped without it keeps those for the life of the client, so a
    /// program that makes teams in a loop destroys them.
    ///
    /// Taking the handle proves that no collective event of the team is
    /// still borrowed here; atomic domains made on it stay usable (they
    /// hold its membership only).
    ///
    /// Errors: [`Error::DestroyWorld`] for the world team, and any error
    /// of the flush or the synchronisation (the team's resources are then
    /// kept: another member may still be using them).
    ///
    /// ```no_run
    /// use conduit::client::{Client, CollOp};
    ///
    /// let c = Client::init().unwrap();
    /// let world = c.world().unwrap();
    /// for round in 0..10_000u64 {
    ///     let pair = world.split(Some(c.rank() as u32 / 2), 0).unwrap().unwrap();
    ///     pair.allreduce(CollOp::Sum, &[round]).unwrap();
    ///     pair.destroy().unwrap();
    /// }
    /// ```
    pub fn destroy(self) -> Result<(), Error> {
        self.retire()
    }

    /// [`Team::destroy`] through a shared handle (for a handle that cannot
    /// be given up, such as one a foreign-language API keeps): after it,
    /// every collective on this handle returns [`Error::NoTeam`], and an
    /// event of the team still unwaited returns that error.
    pub fn retire(&self) -> Result<(), Error> {
        super::engine::not_in_handler("a team's destroy")?;
        self.core.coll_destroy(self.id)
    }

    /// Create an atomic domain over `V` with the operations `ops`,
    /// collective over the team (as `gex_AD_Create` on a team): its
    /// operations name targets by their rank in this team. The
    /// implementation is chosen as for [`ClientOf::atomic_domain`], with
    /// "every rank shares memory" meaning every member.
    ///
    /// Errors: as [`ClientOf::atomic_domain`]; members that created
    /// different domains all get [`Error::AtomicDomainMismatch`].
    pub fn atomic_domain<V: super::AtomicValue>(
        &self,
        ops: &[super::AtomicOp],
    ) -> Result<super::AtomicDomain<'c, V, M, S, T>, Error> {
        self.atomic_domain_using(ops, super::atomic::Chosen::Env)
    }

    /// [`Team::atomic_domain`] with this domain's implementation chosen
    /// by the caller, as [`ClientOf::atomic_domain_with`] does for the job.
    pub fn atomic_domain_with<V: super::AtomicValue>(
        &self,
        ops: &[super::AtomicOp],
        mode: crate::config::AtomicsMode,
    ) -> Result<super::AtomicDomain<'c, V, M, S, T>, Error> {
        self.atomic_domain_using(ops, super::atomic::Chosen::Caller(mode))
    }

    fn atomic_domain_using<V: super::AtomicValue>(
        &self,
        ops: &[super::AtomicOp],
        chosen: super::atomic::Chosen,
    ) -> Result<super::AtomicDomain<'c, V, M, S, T>, Error> {
        let core = self.core;
        let all_shared = core.pshm.as_ref().is_some_and(|sh| {
            self.team
                .members
                .iter()
                .all(|&j| j == core.rank || sh.peer(j).is_some())
        });
        let team = Some(self.team.clone());
        super::atomic::make_domain(core, ops, chosen, all_shared, team, |id| {
            // Equal everywhere iff every member's id or-ed together, and
            // every complement or-ed together, give back its own.
            let got = self.allreduce(CollOp::Bor, &[id, !id])?;
            if got == [id, !id] {
                Ok(())
            } else {
                Err(Error::AtomicDomainMismatch)
            }
        })
    }

    /// A barrier over the team (a reduction of one word).
    pub fn barrier(&self) -> Result<(), Error> {
        self.allreduce(CollOp::Bor, &[0u32]).map(|_| ())
    }
}
