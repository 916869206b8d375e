//! Barriers: `gex_Coll_Barrier{NB,Blocking}` (anonymous) and GASNet's
//! split-phase legacy barrier with named and anonymous forms.

use crate::am::failed;
use crate::state::{api, fatal, Ev};
use crate::types::consts::*;
use crate::types::{gex_Flags_t, Handle};
use conduit::client::Error;
use std::ffi::c_int;

/// After a barrier completed: report what progress deferred meanwhile (a
/// peer's malformed AM, a failed send) now, as the next poll would.
fn report_deferred(call: &str) {
    if let Err(e) = api(call).client.poll() {
        failed(call, &e)
    }
}

fn busy(call: &str) -> ! {
    fatal(
        call,
        "a barrier is already in progress (gasnet_barrier_notify or gex_Coll_BarrierNB without its wait)",
    )
}

/// `gex_Coll_BarrierNB`: an anonymous barrier; its event completes when
/// every rank has entered it.
#[no_mangle]
pub extern "C" fn gex_Coll_BarrierNB(tm: Handle, _flags: gex_Flags_t) -> Handle {
    const CALL: &str = "gex_Coll_BarrierNB";
    let a = api(CALL);
    if !crate::team::is_world(tm) {
        return crate::coll::team_barrier_nb(CALL, crate::team::team(a, CALL, tm));
    }
    if a.coll_barrier.get() || a.legacy.get().is_some() {
        busy(CALL)
    }
    if let Err(e) = a.client.barrier_notify(None) {
        failed(CALL, &e)
    }
    a.coll_barrier.set(true);
    a.events.borrow_mut().insert(Ev::Barrier)
}

/// Test (or wait for) the `gex_Coll_BarrierNB` in progress.
pub(crate) fn finish_coll(call: &str, wait: bool) -> bool {
    let a = api(call);
    let r = if wait {
        a.client.barrier_wait().map(|_| true)
    } else {
        a.client.barrier_try()
    };
    match r {
        Ok(true) => {
            a.coll_barrier.set(false);
            report_deferred(call);
            true
        }
        Ok(false) => false,
        Err(e) => failed(call, &e),
    }
}

/// `gex_Coll_BarrierBlocking`.
#[no_mangle]
pub extern "C" fn gex_Coll_BarrierBlocking(tm: Handle, _flags: gex_Flags_t) {
    const CALL: &str = "gex_Coll_BarrierBlocking";
    let a = api(CALL);
    if !crate::team::is_world(tm) {
        if let Err(e) = crate::team::team(a, CALL, tm).barrier() {
            failed(CALL, &e)
        }
        return report_deferred(CALL);
    }
    if a.coll_barrier.get() || a.legacy.get().is_some() {
        busy(CALL)
    }
    if let Err(e) = a.client.barrier() {
        failed(CALL, &e)
    }
    report_deferred(CALL);
}

fn named(flags: c_int, id: c_int) -> Option<u32> {
    if flags & (BARRIERFLAG_ANONYMOUS | BARRIERFLAG_UNNAMED) != 0 {
        None
    } else {
        Some(id as u32)
    }
}

fn check_flags(call: &str, flags: c_int) {
    if flags & !(BARRIERFLAG_ANONYMOUS | BARRIERFLAG_UNNAMED) != 0 {
        fatal(
            call,
            &format!(
                "flags=0x{flags:x}: accepted are 0 (named), GASNET_BARRIERFLAG_ANONYMOUS and GASNET_BARRIERFLAG_UNNAMED"
            ),
        )
    }
}

/// `gasnet_barrier_notify`: start a barrier, named with `id` unless
/// `flags` says anonymous.
#[no_mangle]
pub extern "C" fn gasnet_barrier_notify(id: c_int, flags: c_int) {
    const CALL: &str = "gasnet_barrier_notify";
    let a = api(CALL);
    check_flags(CALL, flags);
    if a.coll_barrier.get() || a.legacy.get().is_some() {
        busy(CALL)
    }
    if let Err(e) = a.client.barrier_notify(named(flags, id)) {
        failed(CALL, &e)
    }
    a.legacy.set(Some((id, flags)));
}

/// The id and flags of a wait or try must be those of the notify.
fn check_phase(call: &str, id: c_int, flags: c_int) {
    let a = api(call);
    check_flags(call, flags);
    match a.legacy.get() {
        None => fatal(
            call,
            "no barrier was notified (call gasnet_barrier_notify first)",
        ),
        Some((nid, nflags)) => {
            if named(nflags, nid) != named(flags, id) {
                fatal(
                    call,
                    &format!(
                        "id={id} flags={flags} differ from the notify's id={nid} flags={nflags}"
                    ),
                )
            }
        }
    }
}

fn outcome(call: &str, r: Result<bool, Error>) -> c_int {
    let a = api(call);
    match r {
        Ok(false) => GASNET_ERR_NOT_READY,
        Ok(true) => {
            a.legacy.set(None);
            report_deferred(call);
            GASNET_OK
        }
        Err(Error::BarrierMismatch) => {
            a.legacy.set(None);
            GASNET_ERR_BARRIER_MISMATCH
        }
        Err(e) => failed(call, &e),
    }
}

/// `gasnet_barrier_wait`: GASNET_OK, or GASNET_ERR_BARRIER_MISMATCH when
/// named barriers with different ids met.
#[no_mangle]
pub extern "C" fn gasnet_barrier_wait(id: c_int, flags: c_int) -> c_int {
    const CALL: &str = "gasnet_barrier_wait";
    check_phase(CALL, id, flags);
    outcome(CALL, api(CALL).client.barrier_wait().map(|_| true))
}

/// `gasnet_barrier_try`: as wait, or GASNET_ERR_NOT_READY.
#[no_mangle]
pub extern "C" fn gasnet_barrier_try(id: c_int, flags: c_int) -> c_int {
    const CALL: &str = "gasnet_barrier_try";
    check_phase(CALL, id, flags);
    outcome(CALL, api(CALL).client.barrier_try())
}

/// `gasnet_barrier`: notify then wait.
#[no_mangle]
pub extern "C" fn gasnet_barrier(id: c_int, flags: c_int) -> c_int {
    gasnet_barrier_notify(id, flags);
    gasnet_barrier_wait(id, flags)
}

/// `gasnet_barrier_result`: GASNET_BARRIERFLAG_ANONYMOUS when every rank
/// was anonymous in the last completed barrier; else 0 with its id.
#[no_mangle]
pub extern "C" fn gasnet_barrier_result(id: *mut c_int) -> c_int {
    const CALL: &str = "gasnet_barrier_result";
    let a = api(CALL);
    if id.is_null() {
        fatal(CALL, "id is NULL")
    }
    match a.client.barrier_result() {
        None => BARRIERFLAG_ANONYMOUS,
        Some(v) => {
            // SAFETY: checked non-NULL; the caller passes an int.
            unsafe { *id = v as c_int };
            0
        }
    }
}
