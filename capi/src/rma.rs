//! RMA: blocking, explicit-event (NB) and implicit-event (NBI) puts and
//! gets, and the event and NBI syncs.

use crate::am::failed;
use crate::state::{api, fatal, segment_offset, Ev};
use crate::types::consts::*;
use crate::types::{gex_EC_t, gex_Flags_t, Handle};
use conduit::client::{RawLocal, RawOp};
use std::ffi::{c_int, c_void};

fn local(call: &str, arg: &str, p: *const c_void, nbytes: usize) {
    if p.is_null() && nbytes > 0 {
        fatal(call, &format!("{arg} is NULL with nbytes={nbytes}"))
    }
    crate::state::check_array(call, arg, "nbytes", p as *const u8, nbytes);
}

#[allow(clippy::too_many_arguments)]
fn put_op(
    call: &str,
    tm: Handle,
    rank: u32,
    dest: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    lc: RawLocal,
    implicit: bool,
) -> Option<RawOp> {
    let a = api(call);
    let r = crate::team::tm_rank(a, call, tm, rank);
    let off = segment_offset(a, call, "dest", r, dest, nbytes);
    local(call, "src", src, nbytes);
    // SAFETY: GASNet-EX requires `src` readable for nbytes until local
    // completion: on return for NOW, until the event or NBI sync for DEFER.
    match unsafe {
        a.client
            .raw_put(r, off, src as *const u8, nbytes, lc, implicit)
    } {
        Ok(op) => op,
        Err(e) => failed(call, &e),
    }
}

fn get_op(
    call: &str,
    tm: Handle,
    dest: *mut c_void,
    rank: u32,
    src: *mut c_void,
    nbytes: usize,
    implicit: bool,
) -> Option<RawOp> {
    let a = api(call);
    let r = crate::team::tm_rank(a, call, tm, rank);
    let off = segment_offset(a, call, "src", r, src, nbytes);
    local(call, "dest", dest, nbytes);
    // SAFETY: GASNet-EX requires `dest` writable and untouched until the
    // operation completes (its event or NBI sync).
    match unsafe { a.client.raw_get(r, off, dest as *mut u8, nbytes, implicit) } {
        Ok(op) => op,
        Err(e) => failed(call, &e),
    }
}

fn wait(call: &str, op: Option<RawOp>) {
    if let Some(op) = op {
        if let Err(e) = api(call).client.raw_wait(op) {
            failed(call, &e)
        }
    }
}

/// `gex_RMA_PutBlocking`.
#[no_mangle]
pub extern "C" fn gex_RMA_PutBlocking(
    tm: Handle,
    rank: u32,
    dest: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_RMA_PutBlocking";
    let a = api(CALL);
    let r = crate::team::tm_rank(a, CALL, tm, rank);
    let off = segment_offset(a, CALL, "dest", r, dest, nbytes);
    local(CALL, "src", src, nbytes);
    let s: &[u8] = if nbytes == 0 {
        &[]
    } else {
        // SAFETY: GASNet-EX requires src readable for nbytes during the call.
        unsafe { std::slice::from_raw_parts(src as *const u8, nbytes) }
    };
    if let Err(e) = a.client.put(r, off, s) {
        failed(CALL, &e)
    }
    0
}

/// `gex_RMA_GetBlocking`.
#[no_mangle]
pub extern "C" fn gex_RMA_GetBlocking(
    tm: Handle,
    dest: *mut c_void,
    rank: u32,
    src: *mut c_void,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_RMA_GetBlocking";
    let op = get_op(CALL, tm, dest, rank, src, nbytes, false);
    wait(CALL, op);
    0
}

/// The local-completion mode of an NB put; writes the LC event (already
/// complete) when one is asked for.
fn nb_local(call: &str, lc_opt: *mut Handle) -> RawLocal {
    match lc_opt as usize {
        EVENT_NOW => RawLocal::Now,
        EVENT_DEFER => RawLocal::Deferred,
        EVENT_GROUP => fatal(
            call,
            "lc_opt=GEX_EVENT_GROUP is not permitted for an NB put",
        ),
        0 => fatal(
            call,
            "lc_opt is NULL (pass GEX_EVENT_NOW, GEX_EVENT_DEFER or the address of a gex_Event_t)",
        ),
        _ => {
            // SAFETY: any other value is the address of the caller's
            // gex_Event_t; the put below reaches local completion before it
            // returns, so the LC event is GEX_EVENT_INVALID.
            unsafe { *lc_opt = std::ptr::null_mut() };
            RawLocal::Now
        }
    }
}

fn event(call: &str, op: Option<RawOp>) -> Handle {
    match op {
        Some(op) => api(call).events.borrow_mut().insert(Ev::Rma(op)),
        None => std::ptr::null_mut(),
    }
}

/// `gex_RMA_PutNB`.
#[no_mangle]
pub extern "C" fn gex_RMA_PutNB(
    tm: Handle,
    rank: u32,
    dest: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    lc_opt: *mut Handle,
    _flags: gex_Flags_t,
) -> Handle {
    const CALL: &str = "gex_RMA_PutNB";
    let lc = nb_local(CALL, lc_opt);
    let op = put_op(CALL, tm, rank, dest, src, nbytes, lc, false);
    event(CALL, op)
}

/// `gex_RMA_GetNB`.
#[no_mangle]
pub extern "C" fn gex_RMA_GetNB(
    tm: Handle,
    dest: *mut c_void,
    rank: u32,
    src: *mut c_void,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> Handle {
    const CALL: &str = "gex_RMA_GetNB";
    let op = get_op(CALL, tm, dest, rank, src, nbytes, false);
    event(CALL, op)
}

/// `gex_RMA_PutNBI`.
#[no_mangle]
pub extern "C" fn gex_RMA_PutNBI(
    tm: Handle,
    rank: u32,
    dest: *mut c_void,
    src: *const c_void,
    nbytes: usize,
    lc_opt: *mut Handle,
    _flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_RMA_PutNBI";
    let lc = match lc_opt as usize {
        EVENT_NOW | EVENT_GROUP => RawLocal::Now,
        EVENT_DEFER => RawLocal::Deferred,
        _ => fatal(CALL, &format!("lc_opt={lc_opt:p}: an NBI put takes GEX_EVENT_NOW, GEX_EVENT_DEFER or GEX_EVENT_GROUP")),
    };
    let a = api(CALL);
    let implicit = crate::region::implicit(a);
    if let Some(op) = put_op(CALL, tm, rank, dest, src, nbytes, lc, implicit) {
        crate::region::keep(a, op, true);
    }
    0
}

/// `gex_RMA_GetNBI`.
#[no_mangle]
pub extern "C" fn gex_RMA_GetNBI(
    tm: Handle,
    dest: *mut c_void,
    rank: u32,
    src: *mut c_void,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_RMA_GetNBI";
    let a = api(CALL);
    let implicit = crate::region::implicit(a);
    if let Some(op) = get_op(CALL, tm, dest, rank, src, nbytes, implicit) {
        crate::region::keep(a, op, false);
    }
    0
}

/// Whether event `h` is complete (polling once); a complete event is
/// released. `wait` waits instead.
pub(crate) fn finish_event(call: &str, h: Handle, wait: bool) -> bool {
    let a = api(call);
    let ev = a.events.borrow().get(call, h);
    let done = match ev {
        None => true,
        Some(Ev::Rma(op)) => {
            if !wait {
                match a.client.raw_test(&op) {
                    Ok(true) => {}
                    Ok(false) => return false,
                    Err(e) => failed(call, &e),
                }
            }
            if let Err(e) = a.client.raw_wait(op) {
                a.events.borrow_mut().remove(h);
                failed(call, &e)
            }
            true
        }
        Some(Ev::Coll(i)) => crate::coll::finish(call, i, wait),
        Some(Ev::Region(i)) => crate::region::finish(call, i, wait),
    };
    if done {
        a.events.borrow_mut().remove(h);
    }
    done
}

/// `gex_Event_Test`: 0 when complete.
#[no_mangle]
pub extern "C" fn gex_Event_Test(event: Handle) -> c_int {
    if finish_event("gex_Event_Test", event, false) {
        GASNET_OK
    } else {
        GASNET_ERR_NOT_READY
    }
}

/// `gex_Event_Wait`.
#[no_mangle]
pub extern "C" fn gex_Event_Wait(event: Handle) {
    finish_event("gex_Event_Wait", event, true);
}

/// `gex_Event_QueryLeaf`: the local-completion leaf (`GEX_EC_LC`) of a
/// root event. Every operation of this library reaches local completion
/// before its initiation returns (puts and AM payloads are injected or
/// copied; `GEX_FLAG_ENABLE_LEAF_LC` VIS puts complete on return), so the
/// leaf has always happened: `GEX_EVENT_INVALID`, as the specification
/// allows. `root` must be `GEX_EVENT_INVALID` or a pending event; other
/// categories are not leaves here.
#[no_mangle]
pub extern "C" fn gex_Event_QueryLeaf(root: Handle, event_category: u32) -> Handle {
    const CALL: &str = "gex_Event_QueryLeaf";
    if event_category != EC_LC {
        fatal(
            CALL,
            &format!(
                "event_category={event_category:#x}: the only leaf event is GEX_EC_LC ({EC_LC:#x})"
            ),
        )
    }
    if root as usize == EVENT_NO_OP {
        fatal(CALL, "root=GEX_EVENT_NO_OP is not a root event")
    }
    // Checks that a non-INVALID root is a pending event.
    api(CALL).events.borrow().get(CALL, root);
    std::ptr::null_mut()
}

fn events<'a>(call: &str, p: *mut Handle, n: usize) -> &'a mut [Handle] {
    if n == 0 {
        return &mut [];
    }
    if p.is_null() {
        fatal(call, &format!("pevent is NULL with numevents={n}"))
    }
    crate::state::check_array(call, "pevent", "numevents", p as *const Handle, n);
    // SAFETY: GASNet-EX requires an array of numevents events.
    unsafe { std::slice::from_raw_parts_mut(p, n) }
}

/// Test each live event once; completed ones become INVALID. Returns
/// (completed now, still pending).
fn sweep(call: &str, evs: &mut [Handle]) -> (usize, usize) {
    let (mut done, mut pending) = (0, 0);
    for e in evs.iter_mut().filter(|e| !e.is_null()) {
        if finish_event(call, *e, false) {
            *e = std::ptr::null_mut();
            done += 1;
        } else {
            pending += 1;
        }
    }
    (done, pending)
}

/// `gex_Event_TestAll`: 0 when every event is complete.
#[no_mangle]
pub extern "C" fn gex_Event_TestAll(p: *mut Handle, n: usize, _flags: gex_Flags_t) -> c_int {
    let evs = events("gex_Event_TestAll", p, n);
    if sweep("gex_Event_TestAll", evs).1 == 0 {
        GASNET_OK
    } else {
        GASNET_ERR_NOT_READY
    }
}

/// `gex_Event_WaitAll`.
#[no_mangle]
pub extern "C" fn gex_Event_WaitAll(p: *mut Handle, n: usize, _flags: gex_Flags_t) {
    for e in events("gex_Event_WaitAll", p, n).iter_mut() {
        if !e.is_null() {
            finish_event("gex_Event_WaitAll", *e, true);
            *e = std::ptr::null_mut();
        }
    }
}

/// `gex_Event_TestSome`: 0 when at least one completed (or none was live).
#[no_mangle]
pub extern "C" fn gex_Event_TestSome(p: *mut Handle, n: usize, _flags: gex_Flags_t) -> c_int {
    let (done, pending) = sweep("gex_Event_TestSome", events("gex_Event_TestSome", p, n));
    if done > 0 || pending == 0 {
        GASNET_OK
    } else {
        GASNET_ERR_NOT_READY
    }
}

/// `gex_Event_WaitSome`.
#[no_mangle]
pub extern "C" fn gex_Event_WaitSome(p: *mut Handle, n: usize, _flags: gex_Flags_t) {
    let evs = events("gex_Event_WaitSome", p, n);
    loop {
        let (done, pending) = sweep("gex_Event_WaitSome", evs);
        if done > 0 || pending == 0 {
            return;
        }
    }
}

/// Complete what is over among `ops` (all of them with `wait`): the ones
/// still in flight, and the first error of those completed.
pub(crate) fn settle(
    call: &str,
    ops: Vec<RawOp>,
    wait: bool,
) -> (Vec<RawOp>, Option<conduit::client::Error>) {
    let a = api(call);
    let mut left = Vec::new();
    let mut first = None;
    for op in ops {
        let over = wait
            || match a.client.raw_test(&op) {
                Ok(d) => d,
                Err(e) => failed(call, &e),
            };
        if over {
            if let Err(e) = a.client.raw_wait(op) {
                first.get_or_insert(e);
            }
        } else {
            left.push(op);
        }
    }
    (left, first)
}

/// Sync the NBI operations in `mask`; with `wait` false, report whether
/// they are all complete (completing what is done).
fn nbi(call: &str, mask: gex_EC_t, wait: bool) -> bool {
    let a = api(call);
    let mut all = true;
    for (bit, list) in [(EC_PUT, &a.nbi_puts), (EC_GET, &a.nbi_gets)] {
        if mask & bit == 0 {
            continue;
        }
        let ops = std::mem::take(&mut *list.borrow_mut());
        let (left, mut first) = settle(call, ops, wait);
        all &= left.is_empty();
        list.borrow_mut().extend(left);
        if bit == EC_PUT {
            match a.client.raw_nbi_puts(wait) {
                Ok(done) => all &= done,
                Err(e) => {
                    first.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first {
            failed(call, &e)
        }
    }
    all
}

/// `gex_NBI_Test`: 0 when the NBI operations in `mask` are complete.
#[no_mangle]
pub extern "C" fn gex_NBI_Test(mask: gex_EC_t, _flags: gex_Flags_t) -> c_int {
    if nbi("gex_NBI_Test", mask, false) {
        GASNET_OK
    } else {
        GASNET_ERR_NOT_READY
    }
}

/// `gex_NBI_Wait`.
#[no_mangle]
pub extern "C" fn gex_NBI_Wait(mask: gex_EC_t, _flags: gex_Flags_t) {
    nbi("gex_NBI_Wait", mask, true);
}
