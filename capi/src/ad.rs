//! Atomic domains: `gex_AD_Create` / `Destroy` / `Query*` and the typed
//! `gex_AD_OpNB_*` / `gex_AD_OpNBI_*` over the conduit's domains (native
//! provider atomics or Active Messages, chosen per domain as
//! `GASNET_OFI_ATOMICS` says, or under `auto` as a `GEX_FLAG_AD_FAVOR_*`
//! hint says; CPU atomics through the mappings for targets in this rank's
//! supernode).
//!
//! The conduit's operations complete before they return, so an NB call
//! returns `GEX_EVENT_INVALID` (allowed for an operation completed
//! synchronously) and an NBI call leaves nothing for `gex_NBI_Wait`.
//! Domains are created over any team; targets are named by their rank in
//! it (or by job rank with `GEX_FLAG_RANK_IS_JOBRANK`).

use crate::am::failed;
use crate::state::{api, fatal, segment_offset, Api};
use crate::team::{team, tm_rank, CTeam};
use crate::types::consts::*;
use crate::types::{gex_DT_t, gex_Flags_t, gex_OP_t, gex_Rank_t, Handle};
use conduit::client::{AtomicDomain, AtomicOp, AtomicValue, Seq};
use conduit::config::AtomicsMode;
use conduit::transport::ofi::{OfiTransport, Unsynced};
use std::cell::Cell;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{fence, Ordering};

type Dom<V> = AtomicDomain<'static, V, Seq, (), OfiTransport<Unsynced>>;

/// The domain over one of the six types.
enum AnyDom {
    I32(Dom<i32>),
    U32(Dom<u32>),
    I64(Dom<i64>),
    U64(Dom<u64>),
    F32(Dom<f32>),
    F64(Dom<f64>),
}

/// An atomic domain; its handle is its address.
pub(crate) struct AdObj {
    dom: AnyDom,
    tm: Handle,
    dt: gex_DT_t,
    ops: gex_OP_t,
    flags: gex_Flags_t,
    cdata: Cell<*const c_void>,
    /// Destroyed: kept (a tombstone), so that a stale handle is named as
    /// such and never reaches a domain created later at its address.
    destroyed: Cell<bool>,
}

/// Every `GEX_OP_*` an atomic may name, with the conduit's operation.
const OPS: [(gex_OP_t, AtomicOp); 25] = [
    (OP_SET, AtomicOp::Set),
    (OP_GET, AtomicOp::Get),
    (OP_SWAP, AtomicOp::Swap),
    (OP_CAS, AtomicOp::Cas),
    (OP_FCAS, AtomicOp::Fcas),
    (OP_ADD, AtomicOp::Add),
    (OP_FADD, AtomicOp::Fadd),
    (OP_SUB, AtomicOp::Sub),
    (OP_FSUB, AtomicOp::Fsub),
    (OP_INC, AtomicOp::Inc),
    (OP_FINC, AtomicOp::Finc),
    (OP_DEC, AtomicOp::Dec),
    (OP_FDEC, AtomicOp::Fdec),
    (OP_MULT, AtomicOp::Mult),
    (OP_FMULT, AtomicOp::Fmult),
    (OP_MIN, AtomicOp::Min),
    (OP_FMIN, AtomicOp::Fmin),
    (OP_MAX, AtomicOp::Max),
    (OP_FMAX, AtomicOp::Fmax),
    (OP_AND, AtomicOp::And),
    (OP_FAND, AtomicOp::Fand),
    (OP_OR, AtomicOp::Or),
    (OP_FOR, AtomicOp::For),
    (OP_XOR, AtomicOp::Xor),
    (OP_FXOR, AtomicOp::Fxor),
];

fn op_of(op: gex_OP_t) -> Option<AtomicOp> {
    OPS.iter().find(|(g, _)| *g == op).map(|(_, o)| *o)
}

fn dt_name(dt: gex_DT_t) -> &'static str {
    match dt {
        DT_I32 => "GEX_DT_I32",
        DT_U32 => "GEX_DT_U32",
        DT_I64 => "GEX_DT_I64",
        DT_U64 => "GEX_DT_U64",
        DT_FLT => "GEX_DT_FLT",
        DT_DBL => "GEX_DT_DBL",
        _ => "?",
    }
}

/// The implementation a `GEX_FLAG_AD_FAVOR_*` hint in `flags` picks, when
/// `GASNET_OFI_ATOMICS` (`env`) leaves the choice to the conduit (`auto`;
/// `native` and `am` are the user's and win over a program's hint):
/// favouring this rank or its neighbourhood takes the Active Message
/// implementation, which performs operations on this rank's own segment
/// and on segments mapped here (the shared-memory path) as CPU atomics,
/// without the provider; favouring remote targets, or no hint, is `auto`
/// itself (native where the provider performs every operation, unless
/// every member shares memory with this rank, so that nothing is remote).
/// `None`: the conduit's default choice. More than one of the mutually
/// exclusive hints is a fatal error naming them.
fn favoured(call: &str, flags: gex_Flags_t, env: AtomicsMode) -> Option<AtomicsMode> {
    let named: Vec<&str> = [
        (FLAG_AD_FAVOR_MY_RANK, "GEX_FLAG_AD_FAVOR_MY_RANK"),
        (FLAG_AD_FAVOR_MY_NBRHD, "GEX_FLAG_AD_FAVOR_MY_NBRHD"),
        (FLAG_AD_FAVOR_REMOTE, "GEX_FLAG_AD_FAVOR_REMOTE"),
    ]
    .into_iter()
    .filter(|(f, _)| flags & f != 0)
    .map(|(_, n)| n)
    .collect();
    if named.len() > 1 {
        fatal(
            call,
            &format!(
                "flags=0x{flags:x} names {}: the GEX_FLAG_AD_FAVOR_* hints are mutually exclusive (give at most one)",
                named.join(" and ")
            ),
        )
    }
    let local = flags & (FLAG_AD_FAVOR_MY_RANK | FLAG_AD_FAVOR_MY_NBRHD) != 0;
    (local && env == AtomicsMode::Auto).then_some(AtomicsMode::Am)
}

/// The hint that chose (`favoured` returned `Some`), for
/// `GASNET_VERBOSEENV`.
fn hint_name(flags: gex_Flags_t) -> &'static str {
    if flags & FLAG_AD_FAVOR_MY_RANK != 0 {
        "GEX_FLAG_AD_FAVOR_MY_RANK"
    } else {
        "GEX_FLAG_AD_FAVOR_MY_NBRHD"
    }
}

fn create<V: AtomicValue>(
    team: &'static CTeam,
    call: &str,
    ops: &[AtomicOp],
    mode: Option<AtomicsMode>,
) -> Dom<V> {
    let made = match mode {
        None => team.atomic_domain::<V>(ops),
        Some(m) => team.atomic_domain_with::<V>(ops, m),
    };
    match made {
        Ok(d) => d,
        Err(e) => failed(call, &e),
    }
}

/// `gex_AD_Create`: collective over the team `tm`; `ops` is a bit-wise or
/// of `GEX_OP_*` atomics, all valid on `dt`.
#[no_mangle]
pub extern "C" fn gex_AD_Create(
    ad_p: *mut Handle,
    tm: Handle,
    dt: gex_DT_t,
    ops: gex_OP_t,
    flags: gex_Flags_t,
) {
    const CALL: &str = "gex_AD_Create";
    let a = api(CALL);
    let t = team(a, CALL, tm);
    if ad_p.is_null() {
        fatal(CALL, "ad_p is NULL")
    }
    let mut list = Vec::new();
    let mut left = ops;
    for (g, o) in OPS {
        if ops & g != 0 {
            list.push(o);
            left &= !g;
        }
    }
    if left != 0 || list.is_empty() {
        fatal(
            CALL,
            &format!("ops=0x{ops:x} is not a set of atomic operations (GEX_OP_SET .. GEX_OP_FXOR; unknown bits 0x{left:x})"),
        )
    }
    let cfg = a.client.config();
    let mode = favoured(CALL, flags, cfg.extended.atomics);
    if mode.is_some() && cfg.general.verbose_env && t.rank() == 0 {
        // The conduit's line that follows says "am chosen for this domain".
        conduit::eprintln_whole!(
            "ofi-conduit: gex_AD_Create: {} under GASNET_OFI_ATOMICS=auto: by Active Message (CPU atomics on this rank's own and mapped segments)",
            hint_name(flags)
        );
    }
    let dom = match dt {
        DT_I32 => AnyDom::I32(create(t, CALL, &list, mode)),
        DT_U32 => AnyDom::U32(create(t, CALL, &list, mode)),
        DT_I64 => AnyDom::I64(create(t, CALL, &list, mode)),
        DT_U64 => AnyDom::U64(create(t, CALL, &list, mode)),
        DT_FLT => AnyDom::F32(create(t, CALL, &list, mode)),
        DT_DBL => AnyDom::F64(create(t, CALL, &list, mode)),
        _ => fatal(
            CALL,
            &format!("dt=0x{dt:x} is not an atomic data type: accepted are GEX_DT_I32, GEX_DT_U32, GEX_DT_I64, GEX_DT_U64, GEX_DT_FLT and GEX_DT_DBL"),
        ),
    };
    let obj = Box::new(AdObj {
        dom,
        tm,
        dt,
        ops,
        flags,
        cdata: Cell::new(std::ptr::null()),
        destroyed: Cell::new(false),
    });
    let h = &*obj as *const AdObj as Handle;
    a.ads.borrow_mut().push(obj);
    // SAFETY: checked non-NULL; GASNet-EX requires a writable handle.
    unsafe { *ad_p = h };
}

/// Run `f` on the live domain behind `ad`; a fatal error for any other
/// handle.
fn with<R>(call: &str, ad: Handle, f: impl FnOnce(&'static Api, &AdObj) -> R) -> R {
    let a = api(call);
    let ads = a.ads.borrow();
    let obj = ads
        .iter()
        .find(|o| std::ptr::eq(&***o as *const AdObj as *const c_void, ad));
    match obj {
        Some(o) if !o.destroyed.get() => f(a, o),
        _ => fatal(
            call,
            &format!("ad={ad:p} is not a live atomic domain (GEX_AD_INVALID, destroyed, or never created)"),
        ),
    }
}

/// `gex_AD_Destroy`: the domain's operations are all complete already;
/// the handle is retired (using it afterwards is a fatal error).
#[no_mangle]
pub extern "C" fn gex_AD_Destroy(ad: Handle) {
    const CALL: &str = "gex_AD_Destroy";
    with(CALL, ad, |_, _| ());
    let a = api(CALL);
    let Ok(ads) = a.ads.try_borrow_mut() else {
        fatal(
            CALL,
            "called while an atomic operation is running (from a handler)",
        )
    };
    // Kept as a tombstone, not freed: a domain created later could take
    // its address, and the stale handle would then reach that domain.
    if let Some(o) = ads
        .iter()
        .find(|o| std::ptr::eq(&***o as *const AdObj as *const c_void, ad))
    {
        o.destroyed.set(true);
    }
}

/// `gex_AD_QueryFlags`.
#[no_mangle]
pub extern "C" fn gex_AD_QueryFlags(ad: Handle) -> gex_Flags_t {
    with("gex_AD_QueryFlags", ad, |_, o| o.flags)
}

/// `gex_AD_QueryTM`.
#[no_mangle]
pub extern "C" fn gex_AD_QueryTM(ad: Handle) -> Handle {
    with("gex_AD_QueryTM", ad, |_, o| o.tm)
}

/// `gex_AD_QueryDT`.
#[no_mangle]
pub extern "C" fn gex_AD_QueryDT(ad: Handle) -> gex_DT_t {
    with("gex_AD_QueryDT", ad, |_, o| o.dt)
}

/// `gex_AD_QueryOps`.
#[no_mangle]
pub extern "C" fn gex_AD_QueryOps(ad: Handle) -> gex_OP_t {
    with("gex_AD_QueryOps", ad, |_, o| o.ops)
}

/// `gex_AD_SetCData`.
#[no_mangle]
pub extern "C" fn gex_AD_SetCData(ad: Handle, val: *const c_void) {
    with("gex_AD_SetCData", ad, |_, o| o.cdata.set(val))
}

/// `gex_AD_QueryCData`.
#[no_mangle]
pub extern "C" fn gex_AD_QueryCData(ad: Handle) -> *mut c_void {
    with("gex_AD_QueryCData", ad, |_, o| o.cdata.get() as *mut c_void)
}

/// One typed atomic: checks, the fences `flags` ask for, the operation,
/// the fetched value into `*result_p`.
#[allow(clippy::too_many_arguments)]
fn op<V: AtomicValue>(
    call: &str,
    ad: Handle,
    dt: gex_DT_t,
    pick: impl FnOnce(&AnyDom) -> Option<&Dom<V>>,
    result_p: *mut V,
    tgt_rank: gex_Rank_t,
    tgt_addr: *mut c_void,
    opcode: gex_OP_t,
    op1: V,
    op2: V,
    flags: gex_Flags_t,
) {
    with(call, ad, |a, o| {
        let Some(dom) = pick(&o.dom) else {
            fatal(
                call,
                &format!(
                    "the domain is over {}, not {} (the call's type must be the domain's)",
                    dt_name(o.dt),
                    dt_name(dt)
                ),
            )
        };
        let Some(aop) = op_of(opcode) else {
            fatal(
                call,
                &format!("opcode=0x{opcode:x} is not one atomic operation (one GEX_OP_* bit)"),
            )
        };
        if o.ops & opcode == 0 {
            fatal(
                call,
                &format!(
                    "opcode=GEX_OP_{} is not one of the domain's operations (ops=0x{:x})",
                    aop.name().to_uppercase(),
                    o.ops
                ),
            )
        }
        let t = team(a, call, o.tm);
        let (job, rank) = if flags & FLAG_RANK_IS_JOBRANK != 0 {
            let job = crate::state::check_rank(a, call, tgt_rank);
            match t.to_team(job) {
                Some(r) => (job, r),
                None => fatal(
                    call,
                    &format!(
                        "tgt_rank={tgt_rank} (GEX_FLAG_RANK_IS_JOBRANK) is not a member of the domain's team"
                    ),
                ),
            }
        } else {
            (tm_rank(a, call, o.tm, tgt_rank), tgt_rank as usize)
        };
        let offset = segment_offset(a, call, "tgt_addr", job, tgt_addr, std::mem::size_of::<V>());
        if aop.is_fetching() && result_p.is_null() {
            fatal(
                call,
                &format!(
                    "result_p is NULL for the fetching GEX_OP_{}",
                    aop.name().to_uppercase()
                ),
            )
        }
        if flags & FLAG_AD_REL != 0 {
            fence(Ordering::Release);
        }
        let old = match dom.op(rank, offset, aop, op1, op2) {
            Ok(v) => v,
            Err(e) => failed(call, &e),
        };
        if flags & FLAG_AD_ACQ != 0 {
            fence(Ordering::Acquire);
        }
        if let Some(v) = old {
            // SAFETY: checked non-NULL; GASNet-EX requires `result_p` to
            // point to a writable object of the domain's type.
            unsafe { result_p.write_unaligned(v) };
        }
    })
}

macro_rules! ad_ops {
    ($($nb:ident, $nbi:ident, $t:ty, $dt:ident, $var:ident;)*) => {$(
        #[doc = concat!("`", stringify!($nb), "`: performed before it returns (`GEX_EVENT_INVALID`).")]
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $nb(
            ad: Handle,
            result_p: *mut $t,
            tgt_rank: gex_Rank_t,
            tgt_addr: *mut c_void,
            opcode: gex_OP_t,
            operand1: $t,
            operand2: $t,
            flags: gex_Flags_t,
        ) -> Handle {
            op(
                stringify!($nb),
                ad,
                $dt,
                |d| match d {
                    AnyDom::$var(d) => Some(d),
                    _ => None,
                },
                result_p,
                tgt_rank,
                tgt_addr,
                opcode,
                operand1,
                operand2,
                flags,
            );
            std::ptr::null_mut()
        }

        #[doc = concat!("`", stringify!($nbi), "`: performed before it returns (0).")]
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $nbi(
            ad: Handle,
            result_p: *mut $t,
            tgt_rank: gex_Rank_t,
            tgt_addr: *mut c_void,
            opcode: gex_OP_t,
            operand1: $t,
            operand2: $t,
            flags: gex_Flags_t,
        ) -> c_int {
            op(
                stringify!($nbi),
                ad,
                $dt,
                |d| match d {
                    AnyDom::$var(d) => Some(d),
                    _ => None,
                },
                result_p,
                tgt_rank,
                tgt_addr,
                opcode,
                operand1,
                operand2,
                flags,
            );
            0
        }
    )*};
}

ad_ops! {
    gex_AD_OpNB_I32, gex_AD_OpNBI_I32, i32, DT_I32, I32;
    gex_AD_OpNB_U32, gex_AD_OpNBI_U32, u32, DT_U32, U32;
    gex_AD_OpNB_I64, gex_AD_OpNBI_I64, i64, DT_I64, I64;
    gex_AD_OpNB_U64, gex_AD_OpNBI_U64, u64, DT_U64, U64;
    gex_AD_OpNB_FLT, gex_AD_OpNBI_FLT, f32, DT_FLT, F32;
    gex_AD_OpNB_DBL, gex_AD_OpNBI_DBL, f64, DT_DBL, F64;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hints choose only under `auto`; favouring this rank or its
    /// neighbourhood is the AM implementation, favouring remote targets
    /// (or nothing) the conduit's default.
    #[test]
    fn favour_hints_choose_under_auto_only() {
        use AtomicsMode::{Am, Auto, Native};
        let c = "gex_AD_Create";
        assert_eq!(favoured(c, FLAG_AD_FAVOR_MY_RANK, Auto), Some(Am));
        assert_eq!(favoured(c, FLAG_AD_FAVOR_MY_NBRHD, Auto), Some(Am));
        assert_eq!(favoured(c, FLAG_AD_FAVOR_REMOTE, Auto), None);
        assert_eq!(favoured(c, 0, Auto), None);
        for env in [Native, Am] {
            for f in [
                FLAG_AD_FAVOR_MY_RANK,
                FLAG_AD_FAVOR_MY_NBRHD,
                FLAG_AD_FAVOR_REMOTE,
                0,
            ] {
                assert_eq!(favoured(c, f, env), None, "{f:x} under {env:?}");
            }
        }
        // Other flag bits are not hints.
        assert_eq!(
            favoured(c, FLAG_AD_FAVOR_MY_RANK | FLAG_AD_REL, Auto),
            Some(Am)
        );
    }
}
