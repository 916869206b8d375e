//! Atomic domains (GASNet-EX's `gex_AD_*`): remote atomic operations on
//! one type, with a set of operations fixed when the domain is created, so
//! that one implementation serves them all and they are atomic with
//! respect to each other.
//!
//! ```no_run
//! use conduit::client::{AtomicOp, Client};
//!
//! let c = Client::init().unwrap();
//! c.attach_segment(1 << 20).unwrap();
//! // Collective: every rank creates the same domains in the same order.
//! let ad = c.atomic_domain::<u64>(&[AtomicOp::Fadd, AtomicOp::Get, AtomicOp::Set]).unwrap();
//! println!("atomics by {:?}", ad.implementation());
//! let before = ad.fetch_add(0, 0, 1).unwrap();
//! c.barrier().unwrap();
//! if c.rank() == 0 {
//!     assert_eq!(ad.get(0, 0).unwrap(), c.size() as u64);
//! }
//! # let _ = before;
//! ```

use super::engine::Core;
use super::{ClientOf, Error};
use crate::config::AtomicsMode;
use crate::sync::Mode;
use crate::transport::Transport;
use am::barrier::Value;
pub use rma::atomic::{AtomicOp, AtomicType, AtomicValue, OpSet};
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// How a domain performs its operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomicImpl {
    /// The provider's atomics (`fi_atomic`, `fi_fetch_atomic`,
    /// `fi_compare_atomic`).
    Native,
    /// An Active Message to the target, which performs the operation with
    /// a CPU atomic instruction; targets whose segment is mapped here (the
    /// ranks of this rank's supernode) are operated on directly.
    ActiveMessage,
}

impl AtomicImpl {
    /// `native` or `am`.
    pub fn name(self) -> &'static str {
        match self {
            AtomicImpl::Native => "native",
            AtomicImpl::ActiveMessage => "am",
        }
    }
}

/// An atomic domain over values of type `V`, from
/// [`ClientOf::atomic_domain`]. Its operations are blocking: each returns
/// once it has been performed at the target. Correct results need that no
/// other access (loads, stores, puts, gets, another domain's operations)
/// touches the same locations while the domain's operations may run, as
/// GASNet-EX requires.
pub struct AtomicDomain<'c, V: AtomicValue, M: Mode, S, T: Transport> {
    core: &'c Core<M, T, S>,
    ops: OpSet,
    imp: AtomicImpl,
    /// The team it was created over (`None`: the job); ranks are its.
    team: Option<Arc<coll::Team>>,
    _v: PhantomData<V>,
}

impl<V: AtomicValue, M: Mode, S, T: Transport> std::fmt::Debug for AtomicDomain<'_, V, M, S, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AtomicDomain")
            .field("type", &V::TYPE)
            .field("ops", &self.ops.to_string())
            .field("impl", &self.imp)
            .finish()
    }
}

impl<M: Mode, S, T: Transport> ClientOf<M, S, T> {
    /// Create an atomic domain over `V` with the operations `ops`
    /// (collective: every rank creates the same domains in the same
    /// order). The implementation follows `GASNET_OFI_ATOMICS`:
    ///
    /// * `auto`: by Active Message when every rank of the job shares
    ///   memory with this one (CPU atomics through the mappings are the
    ///   fastest path there), else native when the provider performs
    ///   every operation of the domain on `V` (`fi_atomicvalid` and its
    ///   fetch / compare forms), else by Active Message;
    /// * `native`: native, or an error naming the operation the provider
    ///   does not perform;
    /// * `am`: by Active Message.
    ///
    /// Errors: an operation not valid on `V` (bit-wise operations on
    /// floats), no operations, `native` impossible, or ranks that created
    /// different domains (checked by a named barrier: every rank takes
    /// part, a rank whose domain is refused on one of the grounds before
    /// too, so the others get [`Error::AtomicDomainMismatch`] instead of a
    /// domain it lacks). A rank that skips the call altogether is not
    /// caught: the named barrier matches an anonymous one (GASNet's rule),
    /// so its next barrier would pair with the creation.
    pub fn atomic_domain<V: AtomicValue>(
        &self,
        ops: &[AtomicOp],
    ) -> Result<AtomicDomain<'_, V, M, S, T>, Error> {
        self.atomic_domain_using(ops, Chosen::Env)
    }

    /// [`ClientOf::atomic_domain`] with this domain's implementation chosen
    /// by the caller instead of by `GASNET_OFI_ATOMICS` (which still
    /// chooses for the job's other domains): `AtomicsMode::Native` fails
    /// as `GASNET_OFI_ATOMICS=native` does when the provider does not
    /// perform an operation, and also when the job was started with
    /// `GASNET_OFI_ATOMICS=am` (its endpoints were opened without
    /// FI_ATOMIC) or when every rank shares memory with this one and the
    /// job started without `GASNET_OFI_ATOMICS=native` or
    /// `GASNET_OFI_COLL_RMA=on` (the provider then carries nothing between
    /// them: [`Error::NativeUnreachable`]); `AtomicsMode::Am` always
    /// succeeds; `AtomicsMode::Auto` chooses as `GASNET_OFI_ATOMICS=auto`
    /// does, whatever the variable says (so under `native` or `am` it can
    /// differ from [`ClientOf::atomic_domain`]). For a
    /// runtime that times both ways in one job, or keeps one domain by
    /// Active Message while the job's others go native.
    ///
    /// Every rank must create the same domain with the same choice: the
    /// named barrier compares the implementation each rank ends with
    /// (ranks that end differently all get
    /// [`Error::AtomicDomainMismatch`]; a rank refused native atomics,
    /// or whose operations are not valid on `V`, still takes part, then
    /// returns its refusal, so none is left waiting).
    pub fn atomic_domain_with<V: AtomicValue>(
        &self,
        ops: &[AtomicOp],
        mode: AtomicsMode,
    ) -> Result<AtomicDomain<'_, V, M, S, T>, Error> {
        self.atomic_domain_using(ops, Chosen::Caller(mode))
    }

    fn atomic_domain_using<V: AtomicValue>(
        &self,
        ops: &[AtomicOp],
        chosen: Chosen,
    ) -> Result<AtomicDomain<'_, V, M, S, T>, Error> {
        let core = self.core();
        let all_shared = core.pshm.as_ref().is_some_and(|sh| sh.all_local);
        make_domain(core, ops, chosen, all_shared, None, |id| {
            // Every rank must have made the same domain: a named barrier
            // whose id is the domain's description tells.
            core.barrier_notify(Value::new(Some(id)))?;
            match core.barrier_wait() {
                Err(Error::BarrierMismatch) => Err(Error::AtomicDomainMismatch),
                r => r,
            }
        })
    }
}

/// Who chose a domain's implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Chosen {
    /// `GASNET_OFI_ATOMICS`.
    Env,
    /// The caller, for this domain.
    Caller(AtomicsMode),
}

/// What a rank ended with, beside the implementations (0, 1): native
/// atomics refused.
const REFUSED: u32 = 2;

/// The id ranks compare when they make a domain: its operations, type and
/// what this rank ended with (an [`AtomicImpl`] or [`REFUSED`]).
fn domain_id(ops: OpSet, ty: AtomicType, outcome: u32) -> u32 {
    ops.bits() | (ty as u32) << 25 | outcome << 28 | 1 << 31
}

/// Make a domain over `V` with `ops`, implemented as `chosen` says:
/// `all_shared` says every member of its team shares memory with this
/// rank, `team` is the team (`None`: the job), `agree` checks every member
/// made the same one (given the domain's description).
pub(super) fn make_domain<'c, V: AtomicValue, M: Mode, S, T: Transport>(
    core: &'c Core<M, T, S>,
    ops: &[AtomicOp],
    chosen: Chosen,
    all_shared: bool,
    team: Option<Arc<coll::Team>>,
    agree: impl FnOnce(u32) -> Result<(), Error>,
) -> Result<AtomicDomain<'c, V, M, S, T>, Error> {
    super::engine::not_in_handler("atomic_domain")?;
    let ops: OpSet = ops.iter().copied().collect();
    let (mode, imp) = match choose(core, ops, V::TYPE, chosen, all_shared, team.as_deref()) {
        Ok(c) => c,
        Err(e) => {
            // Refused here: still agree (on a refusal), so members that
            // asked for a valid domain fail with the mismatch instead of
            // creating one this rank does not have (and none waits for
            // this rank), then say why.
            let _ = agree(domain_id(ops, V::TYPE, REFUSED));
            return Err(e);
        }
    };
    let why = match (mode, imp) {
        (AtomicsMode::Auto, AtomicImpl::ActiveMessage) if all_shared => {
            "every member shares memory with this rank".to_string()
        }
        (AtomicsMode::Auto, AtomicImpl::ActiveMessage) => ops
            .iter()
            .find_map(|op| {
                core.native_atomic_check(V::TYPE, op).err().map(|why| {
                    format!(
                        "{} cannot perform {op} on {} natively in this job: {why}",
                        core.tp.facts().provider,
                        V::TYPE
                    )
                })
            })
            .unwrap_or_default(),
        (AtomicsMode::Auto, AtomicImpl::Native) => format!(
            "{} performs every operation (fi_*atomicvalid)",
            core.tp.facts().provider
        ),
        (m, _) => match chosen {
            Chosen::Env => format!("GASNET_OFI_ATOMICS={}", m.name()),
            Chosen::Caller(_) => format!("{} chosen for this domain", m.name()),
        },
    };
    let line = format!(
        "atomic domain over {} with {ops}: {} ({why})",
        V::TYPE,
        imp.name()
    );
    tracing::debug!("{line}");
    let first = team.as_ref().map_or(core.rank == 0, |t| t.me == 0);
    if first && core.cfg.general.verbose_env {
        gex_env::eprintln_whole!("ofi-conduit: {line}");
    }
    let id = domain_id(ops, V::TYPE, imp as u32);
    // Before the agreement: a member may send a native atomic as soon as
    // it is through, and this rank's progress must then read the provider.
    if imp == AtomicImpl::Native {
        core.atomics.provider_in_use.store(true, Ordering::Relaxed);
    }
    agree(id)?;
    Ok(AtomicDomain {
        core,
        ops,
        imp,
        team,
        _v: PhantomData,
    })
}

/// The mode in effect and the implementation this rank takes for a domain
/// over `ty` with `ops`, or why it refuses the domain.
fn choose<M: Mode, S, T: Transport>(
    core: &Core<M, T, S>,
    ops: OpSet,
    ty: AtomicType,
    chosen: Chosen,
    all_shared: bool,
    team: Option<&coll::Team>,
) -> Result<(AtomicsMode, AtomicImpl), Error> {
    rma::atomic::check_domain(ty, ops)?;
    let (mode, asked, remedy) = match chosen {
        Chosen::Env => (
            core.cfg.extended.atomics,
            "GASNET_OFI_ATOMICS=native",
            "use GASNET_OFI_ATOMICS=auto or am",
        ),
        Chosen::Caller(m) => (
            m,
            "atomic domain created with AtomicsMode::Native",
            "create it with AtomicsMode::Auto or Am",
        ),
    };
    // A member other than this rank (the provider reaches this rank's own
    // endpoints whatever happens).
    let others = team.map_or(core.size > 1, |t| t.members.iter().any(|&j| j != core.rank));
    let native = || -> Result<(), Error> {
        if core.own_addresses_only && others {
            // Only when every rank is local and the job did not ask for
            // the provider between them at start-up.
            return Err(Error::NativeUnreachable);
        }
        for op in ops.iter() {
            core.native_atomic_check(ty, op)
                .map_err(|why| Error::NotNative {
                    asked,
                    remedy,
                    provider: core.tp.facts().provider.clone(),
                    op,
                    ty,
                    why,
                })?;
        }
        Ok(())
    };
    let imp = match mode {
        AtomicsMode::Am => AtomicImpl::ActiveMessage,
        AtomicsMode::Native => {
            native()?;
            AtomicImpl::Native
        }
        AtomicsMode::Auto if all_shared => AtomicImpl::ActiveMessage,
        AtomicsMode::Auto => match native() {
            Ok(()) => AtomicImpl::Native,
            Err(_) => AtomicImpl::ActiveMessage,
        },
    };
    Ok((mode, imp))
}

impl<V: AtomicValue, M: Mode, S, T: Transport> AtomicDomain<'_, V, M, S, T> {
    /// How the domain performs its operations.
    pub fn implementation(&self) -> AtomicImpl {
        self.imp
    }

    /// The domain's operations.
    pub fn ops(&self) -> OpSet {
        self.ops
    }

    /// Perform `op` on the `V` at `offset` of `rank`'s segment (`rank` in
    /// the domain's team: a job rank for a domain of the job) with
    /// operands `a` and `b` (as GASNet-EX's `op1`, `op2`; ignored where the
    /// operation takes fewer). Returns the target's value before the
    /// operation for fetching operations, `None` for the others.
    ///
    /// Errors: `op` not in the domain, a rank outside the job, a target
    /// outside the segment or not aligned to `V`'s size (nothing is
    /// performed then), or the operation's failure.
    pub fn op(
        &self,
        rank: usize,
        offset: usize,
        op: AtomicOp,
        a: V,
        b: V,
    ) -> Result<Option<V>, Error> {
        super::engine::not_in_handler("an atomic operation")?;
        if !self.ops.contains(op) {
            return Err(rma::atomic::AtomicError::NotInDomain { op, ops: self.ops }.into());
        }
        let (a, b) = (a.to_bits(), b.to_bits());
        let rank = match &self.team {
            Some(t) => t.to_job(rank)?,
            None => rank,
        };
        let old = match self.imp {
            AtomicImpl::Native => self.core.atomic_native(0, rank, offset, V::TYPE, op, a, b),
            AtomicImpl::ActiveMessage => self.core.atomic_am(0, rank, offset, V::TYPE, op, a, b),
        }?;
        self.core.exit_if_requested()?;
        Ok(op.is_fetching().then(|| V::from_bits(old)))
    }

    fn fetching(&self, rank: usize, offset: usize, op: AtomicOp, a: V, b: V) -> Result<V, Error> {
        Ok(self
            .op(rank, offset, op, a, b)?
            .expect("a fetching operation returns a value"))
    }

    /// `Get`: the value.
    pub fn get(&self, rank: usize, offset: usize) -> Result<V, Error> {
        self.fetching(
            rank,
            offset,
            AtomicOp::Get,
            V::from_bits(0),
            V::from_bits(0),
        )
    }

    /// `Set`: write `v`.
    pub fn set(&self, rank: usize, offset: usize, v: V) -> Result<(), Error> {
        self.op(rank, offset, AtomicOp::Set, v, v).map(|_| ())
    }

    /// `Fadd`: add `v`, return the value before.
    pub fn fetch_add(&self, rank: usize, offset: usize, v: V) -> Result<V, Error> {
        self.fetching(rank, offset, AtomicOp::Fadd, v, v)
    }

    /// `Fcas`: write `new` if the value equals `expected`; return the value
    /// before (equal to `expected` when the swap happened).
    pub fn compare_swap(
        &self,
        rank: usize,
        offset: usize,
        expected: V,
        new: V,
    ) -> Result<V, Error> {
        self.fetching(rank, offset, AtomicOp::Fcas, expected, new)
    }

    /// `Swap`: write `v`, return the value before.
    pub fn swap(&self, rank: usize, offset: usize, v: V) -> Result<V, Error> {
        self.fetching(rank, offset, AtomicOp::Swap, v, v)
    }
}
