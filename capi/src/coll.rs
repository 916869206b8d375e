//! Collectives on any team: `gex_Coll_BroadcastNB`,
//! `gex_Coll_ReduceToOneNB`, `gex_Coll_ReduceToAllNB` over the conduit's
//! collectives (the fan-out tree, the reductions and the registered
//! collective cache of docs/design.md), with built-in operators on the
//! built-in types and user operators (`GEX_OP_USER`, and
//! `GEX_OP_USER_NC`, reduced in team-rank order) on any element size.
//!
//! The source is copied when the collective starts; the result is copied
//! to `dst` when the event completes (`gex_Event_Test` / `Wait`).

use crate::am::failed;
use crate::state::{api, fatal, Api, Ev};
use crate::team::{team, CTeam};
use crate::types::consts::*;
use crate::types::{gex_Coll_ReduceFn_t, gex_DT_t, gex_Flags_t, gex_OP_t, gex_Rank_t, Handle};
use conduit::client::{CollEvent, CollOp, DType, Reduction, Seq, UserOp};
use conduit::transport::ofi::{OfiTransport, Unsynced};
use std::ffi::c_void;
use std::sync::Arc;

/// A collective whose event has not completed: where its result goes.
pub(crate) struct Pending {
    ev: CollEvent<'static, 'static, Seq, (), OfiTransport<Unsynced>>,
    /// Where the result is copied (NULL: nowhere, as on a reduction's
    /// non-root ranks).
    dst: *mut u8,
    len: usize,
}

/// Store a started collective; its event handle.
fn insert(a: &Api, p: Pending) -> Handle {
    let i = crate::state::slot_insert(&mut a.colls.borrow_mut(), p);
    a.events.borrow_mut().insert(Ev::Coll(i))
}

/// Test (or wait for) the collective in slot `i`; once complete, its
/// result is in place and the slot free.
pub(crate) fn finish(call: &str, i: usize, wait: bool) -> bool {
    let a = api(call);
    // Out of its slot while it progresses: a user reduction function that
    // (against the specification) calls back in meets no borrowed table.
    let Some(p) = a.colls.borrow_mut().get_mut(i).and_then(Option::take) else {
        fatal(call, "the event's collective is gone")
    };
    if !wait {
        match p.ev.test() {
            Ok(true) => {}
            Ok(false) => {
                a.colls.borrow_mut()[i] = Some(p);
                return false;
            }
            Err(e) => failed(call, &e),
        }
    }
    let (dst, len) = (p.dst, p.len);
    match p.ev.wait() {
        Ok(Some(data)) if !dst.is_null() => {
            if data.len() != len {
                fatal(
                    call,
                    &format!(
                        "the collective produced {} bytes, {len} expected",
                        data.len()
                    ),
                )
            }
            // SAFETY: GASNet-EX requires `dst` writable for the result's
            // length until the event completes; `data` is a separate
            // buffer of that length.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, len) }
        }
        Ok(_) => {}
        Err(e) => failed(call, &e),
    }
    true
}

/// `nbytes` bytes at `p`, copied; a fatal error naming `arg` for NULL.
fn bytes(call: &str, arg: &str, p: *const c_void, nbytes: usize) -> Vec<u8> {
    if nbytes == 0 {
        return Vec::new();
    }
    if p.is_null() {
        fatal(call, &format!("{arg} is NULL with {nbytes} bytes to read"))
    }
    if nbytes > isize::MAX as usize {
        fatal(
            call,
            &format!("{arg}: {nbytes} bytes is more than any buffer"),
        )
    }
    // SAFETY: GASNet-EX requires `src` readable for its length.
    unsafe { std::slice::from_raw_parts(p.cast::<u8>(), nbytes) }.to_vec()
}

fn out(call: &str, arg: &str, p: *mut c_void, nbytes: usize) -> *mut u8 {
    if p.is_null() && nbytes > 0 {
        fatal(call, &format!("{arg} is NULL with {nbytes} bytes to write"))
    }
    p.cast()
}

fn root_of(call: &str, t: &CTeam, root: gex_Rank_t) -> usize {
    let r = root as usize;
    if r >= t.size() {
        fatal(
            call,
            &format!("root={root} is not a rank of the team (0..{})", t.size()),
        )
    }
    r
}

/// `gex_Coll_BroadcastNB`: `nbytes` from `src` on team rank `root` to
/// `dst` on every member.
#[no_mangle]
pub extern "C" fn gex_Coll_BroadcastNB(
    tm: Handle,
    root: gex_Rank_t,
    dst: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> Handle {
    const CALL: &str = "gex_Coll_BroadcastNB";
    let a = api(CALL);
    let t = team(a, CALL, tm);
    let root = root_of(CALL, t, root);
    let dst = out(CALL, "dst", dst, nbytes);
    let data = (t.rank() == root).then(|| bytes(CALL, "src", src, nbytes));
    // The root's dst equal to its src: nothing to copy (elsewhere src is
    // ignored).
    let dst = if t.rank() == root && src == dst as *const c_void {
        std::ptr::null_mut()
    } else {
        dst
    };
    match t.broadcast_nb(root, nbytes, data) {
        Ok(ev) => insert(
            a,
            Pending {
                ev,
                dst,
                len: nbytes,
            },
        ),
        Err(e) => failed(CALL, &e),
    }
}

/// The built-in type `dt`, checked against `dt_sz`.
fn dtype(call: &str, dt: gex_DT_t, dt_sz: usize) -> Option<DType> {
    let (d, size) = match dt {
        DT_I32 => (DType::I32, 4),
        DT_U32 => (DType::U32, 4),
        DT_I64 => (DType::I64, 8),
        DT_U64 => (DType::U64, 8),
        DT_FLT => (DType::F32, 4),
        DT_DBL => (DType::F64, 8),
        DT_USER => return None,
        _ => fatal(
            call,
            &format!("dt=0x{dt:x} is not a data type: accepted are GEX_DT_I32, GEX_DT_U32, GEX_DT_I64, GEX_DT_U64, GEX_DT_FLT, GEX_DT_DBL and GEX_DT_USER"),
        ),
    };
    if dt_sz != size {
        fatal(
            call,
            &format!("dt_sz={dt_sz} is not the size of the data type ({size} bytes)"),
        )
    }
    Some(d)
}

/// The reduction `op` on `dt` names (a user function is called with
/// `cdata`).
fn reduction(
    call: &str,
    dt: gex_DT_t,
    dt_sz: usize,
    op: gex_OP_t,
    user_op: gex_Coll_ReduceFn_t,
    cdata: *mut c_void,
) -> Reduction {
    if dt_sz == 0 {
        fatal(call, "dt_sz=0: an element has at least one byte")
    }
    let d = dtype(call, dt, dt_sz);
    let builtin = match op {
        OP_ADD => Some(CollOp::Sum),
        OP_MULT => Some(CollOp::Prod),
        OP_MIN => Some(CollOp::Min),
        OP_MAX => Some(CollOp::Max),
        OP_AND => Some(CollOp::Band),
        OP_OR => Some(CollOp::Bor),
        OP_XOR => Some(CollOp::Bxor),
        OP_USER | OP_USER_NC => None,
        _ => fatal(
            call,
            &format!("op=0x{op:x} is not a reduction operator: accepted are GEX_OP_ADD, GEX_OP_MULT, GEX_OP_MIN, GEX_OP_MAX, GEX_OP_AND, GEX_OP_OR, GEX_OP_XOR, GEX_OP_USER and GEX_OP_USER_NC"),
        ),
    };
    match (builtin, d) {
        (Some(o), Some(d)) => {
            let r = Reduction::Builtin(o, d);
            if let Err(e) = r.validate() {
                fatal(call, &e.to_string())
            }
            r
        }
        (Some(_), None) => fatal(
            call,
            "dt=GEX_DT_USER needs op=GEX_OP_USER or GEX_OP_USER_NC",
        ),
        (None, _) => {
            let Some(f) = user_op else {
                fatal(call, "user_op is NULL with a user-defined operator")
            };
            let cdata = cdata as usize;
            let elem = dt_sz;
            // GASNet's operator writes `left op right` over the right
            // operand; the conduit's keeps the left one: pass the right
            // operand in a copy and take the result back.
            let apply = move |acc: &mut [u8], other: &[u8]| {
                let mut right = other.to_vec();
                // SAFETY: the user's function reads `count` elements at
                // arg1 and writes `count` at arg2_and_out, both that long.
                unsafe {
                    f(
                        acc.as_ptr().cast(),
                        right.as_mut_ptr().cast(),
                        acc.len() / elem,
                        cdata as *const c_void,
                    )
                };
                acc.copy_from_slice(&right);
            };
            Reduction::User {
                op: UserOp {
                    f: Arc::new(apply),
                    commutative: op == OP_USER,
                },
                elem_size: dt_sz,
            }
        }
    }
}

fn count(call: &str, dt_sz: usize, dt_cnt: usize) -> usize {
    if dt_cnt == 0 {
        fatal(call, "dt_cnt=0: a reduction has at least one element")
    }
    match dt_sz.checked_mul(dt_cnt) {
        Some(n) => n,
        None => fatal(call, &format!("dt_sz={dt_sz} x dt_cnt={dt_cnt} overflows")),
    }
}

/// Start a reduction on `tm` (to `root`, or to all with `None`).
#[allow(clippy::too_many_arguments)]
fn reduce(
    call: &str,
    tm: Handle,
    root: Option<gex_Rank_t>,
    dst: *mut c_void,
    src: *const c_void,
    dt: gex_DT_t,
    dt_sz: usize,
    dt_cnt: usize,
    op: gex_OP_t,
    user_op: gex_Coll_ReduceFn_t,
    user_cdata: *mut c_void,
) -> Handle {
    let a = api(call);
    let t = team(a, call, tm);
    let root = root.map(|r| root_of(call, t, r));
    let red = reduction(call, dt, dt_sz, op, user_op, user_cdata);
    let n = count(call, dt_sz, dt_cnt);
    let data = bytes(call, "src", src, n);
    // dst is written on every member, or only on the root.
    let dst = if root.is_none_or(|r| t.rank() == r) {
        out(call, "dst", dst, n)
    } else {
        std::ptr::null_mut()
    };
    let started = match root {
        Some(r) => t.reduce_nb(r, red, data),
        None => t.allreduce_nb(red, data),
    };
    match started {
        Ok(ev) => insert(a, Pending { ev, dst, len: n }),
        Err(e) => failed(call, &e),
    }
}

/// `gex_Coll_ReduceToOneNB`: every member's `dt_cnt` elements of `src`
/// reduced element-wise with `op` into `dst` on team rank `root`.
#[no_mangle]
pub extern "C" fn gex_Coll_ReduceToOneNB(
    tm: Handle,
    root: gex_Rank_t,
    dst: *mut c_void,
    src: *const c_void,
    dt: gex_DT_t,
    dt_sz: usize,
    dt_cnt: usize,
    op: gex_OP_t,
    user_op: gex_Coll_ReduceFn_t,
    user_cdata: *mut c_void,
    _flags: gex_Flags_t,
) -> Handle {
    reduce(
        "gex_Coll_ReduceToOneNB",
        tm,
        Some(root),
        dst,
        src,
        dt,
        dt_sz,
        dt_cnt,
        op,
        user_op,
        user_cdata,
    )
}

/// `gex_Coll_ReduceToAllNB`: as `gex_Coll_ReduceToOneNB`, the result in
/// every member's `dst`.
#[no_mangle]
pub extern "C" fn gex_Coll_ReduceToAllNB(
    tm: Handle,
    dst: *mut c_void,
    src: *const c_void,
    dt: gex_DT_t,
    dt_sz: usize,
    dt_cnt: usize,
    op: gex_OP_t,
    user_op: gex_Coll_ReduceFn_t,
    user_cdata: *mut c_void,
    _flags: gex_Flags_t,
) -> Handle {
    reduce(
        "gex_Coll_ReduceToAllNB",
        tm,
        None,
        dst,
        src,
        dt,
        dt_sz,
        dt_cnt,
        op,
        user_op,
        user_cdata,
    )
}
/// A barrier over a split team (`gex_Coll_BarrierNB` on a team other than
/// the primordial one): a reduction of one word.
pub(crate) fn team_barrier_nb(call: &str, t: &'static CTeam) -> Handle {
    let a = api(call);
    match t.allreduce_nb(Reduction::Builtin(CollOp::Bor, DType::U32), vec![0; 4]) {
        Ok(ev) => insert(
            a,
            Pending {
                ev,
                dst: std::ptr::null_mut(),
                len: 4,
            },
        ),
        Err(e) => failed(call, &e),
    }
}
