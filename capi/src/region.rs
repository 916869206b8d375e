//! NBI access regions (`gex_NBI_BeginAccessRegion` /
//! `gex_NBI_EndAccessRegion`): the implicit-event operations started
//! between the two calls are not synced by `gex_NBI_Test`/`Wait`; the
//! region's end returns one event that completes when all of them have.
//! Regions do not nest.

use crate::am::failed;
use crate::state::{api, fatal, Api, Ev};
use crate::types::{gex_Flags_t, Handle};
use conduit::client::RawOp;

/// Whether an NBI operation started now belongs to the implicit NBI set
/// (`false` inside an access region: the region's event tracks it, so the
/// conduit must not batch it with other NBI puts).
pub(crate) fn implicit(a: &Api) -> bool {
    a.region.borrow().is_none()
}

/// Keep a started NBI operation: in the open region, or with the NBI
/// puts or gets.
pub(crate) fn keep(a: &Api, op: RawOp, put: bool) {
    if let Some(r) = a.region.borrow_mut().as_mut() {
        r.push(op);
        return;
    }
    if put {
        a.nbi_puts.borrow_mut().push(op);
    } else {
        a.nbi_gets.borrow_mut().push(op);
    }
}

/// `gex_NBI_BeginAccessRegion`.
#[no_mangle]
pub extern "C" fn gex_NBI_BeginAccessRegion(_flags: gex_Flags_t) {
    const CALL: &str = "gex_NBI_BeginAccessRegion";
    let a = api(CALL);
    let mut r = a.region.borrow_mut();
    if r.is_some() {
        fatal(
            CALL,
            "an access region is already open (regions do not nest: call gex_NBI_EndAccessRegion first)",
        )
    }
    *r = Some(Vec::new());
}

/// `gex_NBI_EndAccessRegion`: the event of the region's operations
/// (`GEX_EVENT_INVALID` when all are already complete).
#[no_mangle]
pub extern "C" fn gex_NBI_EndAccessRegion(_flags: gex_Flags_t) -> Handle {
    const CALL: &str = "gex_NBI_EndAccessRegion";
    let a = api(CALL);
    let Some(ops) = a.region.borrow_mut().take() else {
        fatal(
            CALL,
            "no access region is open (call gex_NBI_BeginAccessRegion first)",
        )
    };
    if ops.is_empty() {
        return std::ptr::null_mut();
    }
    let i = crate::state::slot_insert(&mut a.regions.borrow_mut(), ops);
    a.events.borrow_mut().insert(Ev::Region(i))
}

/// Test (or wait for) the region event in slot `i`.
pub(crate) fn finish(call: &str, i: usize, wait: bool) -> bool {
    let a = api(call);
    let Some(ops) = a.regions.borrow_mut().get_mut(i).and_then(Option::take) else {
        fatal(call, "the event's access region is gone")
    };
    let (left, first) = crate::rma::settle(call, ops, wait);
    if let Some(e) = first {
        failed(call, &e)
    }
    if left.is_empty() {
        return true;
    }
    a.regions.borrow_mut()[i] = Some(left);
    false
}
