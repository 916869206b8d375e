//! Barriers: `gex_Coll_Barrier{NB,Blocking}` (anonymous) and GASNet's
//! split-phase legacy barrier with named and anonymous forms.

use crate::am::failed;
use crate::state::{api, fatal};
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

/// A gex_Coll barrier while a legacy barrier is notified and not waited
/// for: the specification forbids it, and the blocking barrier over the
/// primordial team would run into the legacy one's protocol.
fn busy(call: &str) -> ! {
    fatal(
        call,
        "a GASNet-1 barrier is in progress (gasnet_barrier_notify without its wait): GASNet-EX collectives over the primordial team must not overlap it",
    )
}

/// `gex_Coll_BarrierNB`: an anonymous barrier; its event completes when
/// every rank has entered it.
///
/// On every team, the primordial one included, it is a team collective (a
/// reduction of one word, `coll::team_barrier_nb`): any number may be in
/// flight with each other and with the team's other collectives, matched
/// across ranks by call order, as the specification allows. The
/// dissemination barrier that `gex_Coll_BarrierBlocking` and the legacy
/// barrier use is a separate protocol that runs one barrier at a time, so it does
/// not serve non-blocking barriers: which barrier a call becomes must not
/// depend on what has completed locally, or ranks would disagree.
#[no_mangle]
pub extern "C" fn gex_Coll_BarrierNB(tm: Handle, _flags: gex_Flags_t) -> Handle {
    const CALL: &str = "gex_Coll_BarrierNB";
    let a = api(CALL);
    if crate::team::is_world(tm) && a.legacy.get().is_some() {
        busy(CALL)
    }
    crate::coll::team_barrier_nb(CALL, crate::team::team(a, CALL, tm))
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
    // The dissemination barrier, whatever non-blocking barriers are in
    // flight: they are team collectives, which its wait advances.
    if a.legacy.get().is_some() {
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

/// The flags of a notify: 0 (named), GASNET_BARRIERFLAG_ANONYMOUS or
/// GASNET_BARRIERFLAG_UNNAMED, optionally with GASNET_BARRIERFLAG_MISMATCH
/// (this rank forces a mismatch on every rank).
fn check_notify_flags(call: &str, flags: c_int) {
    if flags & !(BARRIERFLAG_ANONYMOUS | BARRIERFLAG_UNNAMED | BARRIERFLAG_MISMATCH) != 0 {
        fatal(
            call,
            &format!(
                "flags=0x{flags:x}: accepted are 0 (named), GASNET_BARRIERFLAG_ANONYMOUS and GASNET_BARRIERFLAG_UNNAMED, each optionally with GASNET_BARRIERFLAG_MISMATCH"
            ),
        )
    }
}

/// The flags of a wait or try. GASNET_BARRIERFLAG_MISMATCH is accepted
/// there with no effect, as in GASNet (only a notify's forces a mismatch;
/// a program passes the notify's flags again).
fn check_wait_flags(call: &str, flags: c_int) {
    if flags & !(BARRIERFLAG_ANONYMOUS | BARRIERFLAG_UNNAMED | BARRIERFLAG_MISMATCH) != 0 {
        fatal(
            call,
            &format!(
                "flags=0x{flags:x}: accepted are 0 (named), GASNET_BARRIERFLAG_ANONYMOUS, GASNET_BARRIERFLAG_UNNAMED and GASNET_BARRIERFLAG_MISMATCH"
            ),
        )
    }
}

/// A handler's barrier call is wrong whatever the barrier's phase: said
/// before any phase check.
fn not_in_handler(call: &str) {
    if conduit::client::in_handler() {
        failed(call, &Error::InHandler("a barrier call"));
    }
}

/// `gasnet_barrier_notify`: start a barrier, named with `id` unless
/// `flags` says anonymous; with GASNET_BARRIERFLAG_MISMATCH every rank's
/// wait or try reports GASNET_ERR_BARRIER_MISMATCH.
#[no_mangle]
pub extern "C" fn gasnet_barrier_notify(id: c_int, flags: c_int) {
    const CALL: &str = "gasnet_barrier_notify";
    not_in_handler(CALL);
    let a = api(CALL);
    check_notify_flags(CALL, flags);
    if a.legacy.get().is_some() {
        fatal(
            CALL,
            "a barrier is already in progress (gasnet_barrier_notify without its wait)",
        )
    }
    let r = if flags & BARRIERFLAG_MISMATCH != 0 {
        a.client.barrier_notify_mismatch()
    } else {
        a.client.barrier_notify(named(flags, id))
    };
    if let Err(e) = r {
        failed(CALL, &e)
    }
    a.legacy.set(Some((id, flags)));
}

/// A wait or try needs a notified barrier. Its id and flags need not be
/// the notify's (GASNet allows that since 1.20): they are checked against
/// the barrier's outcome ([`outcome`]).
fn check_phase(call: &str, flags: c_int) {
    not_in_handler(call);
    let a = api(call);
    check_wait_flags(call, flags);
    if a.legacy.get().is_none() {
        fatal(
            call,
            "no barrier was notified (call gasnet_barrier_notify first)",
        )
    }
}

/// What a completed (or not yet completed) barrier returns to a wait or
/// try with `id` and `flags`, by GASNet's rule: GASNET_ERR_BARRIER_MISMATCH
/// when named notifies with different ids met, or when this wait is named
/// and the barrier agreed on a different id (whatever this rank's notify
/// said); an anonymous wait, or a barrier where every notify was
/// anonymous, matches any id. gasnet_barrier_result reports the notifies'
/// agreement either way.
fn outcome(call: &str, r: Result<bool, Error>, id: c_int, flags: c_int) -> c_int {
    let a = api(call);
    match r {
        Ok(false) => GASNET_ERR_NOT_READY,
        Ok(true) => {
            a.legacy.set(None);
            report_deferred(call);
            match (named(flags, id), a.client.barrier_result()) {
                (Some(want), Some(agreed)) if want != agreed => GASNET_ERR_BARRIER_MISMATCH,
                _ => GASNET_OK,
            }
        }
        Err(Error::BarrierMismatch) => {
            a.legacy.set(None);
            GASNET_ERR_BARRIER_MISMATCH
        }
        Err(e) => failed(call, &e),
    }
}

/// `gasnet_barrier_wait`: GASNET_OK, or GASNET_ERR_BARRIER_MISMATCH (see
/// [`outcome`]).
#[no_mangle]
pub extern "C" fn gasnet_barrier_wait(id: c_int, flags: c_int) -> c_int {
    const CALL: &str = "gasnet_barrier_wait";
    check_phase(CALL, flags);
    outcome(
        CALL,
        api(CALL).client.barrier_wait().map(|_| true),
        id,
        flags,
    )
}

/// `gasnet_barrier_try`: as wait, or GASNET_ERR_NOT_READY.
#[no_mangle]
pub extern "C" fn gasnet_barrier_try(id: c_int, flags: c_int) -> c_int {
    const CALL: &str = "gasnet_barrier_try";
    check_phase(CALL, flags);
    outcome(CALL, api(CALL).client.barrier_try(), id, flags)
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
