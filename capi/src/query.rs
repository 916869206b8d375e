//! Queries of the client's objects (GASNet-EX's `gex_{Client,EP,Segment,
//! TM}_Query*`, `gex_TM_TranslateRankToEP`, the deprecated
//! `gex_Segment_QueryBound`) and the system utilities
//! `gex_System_{Get,Set}VerboseErrors` and `gex_System_QueryMaxThreads`.
//!
//! The library has one client, one endpoint (index 0) and at most one
//! segment per process; a handle that is not one of them is a fatal error
//! naming the argument.

use crate::state::{api, fatal, handle, Api, CLIENT_OBJ, EP_OBJ, SEGMENT_OBJ};
use crate::team::{is_world, split_flags, tm_rank};
use crate::types::{gex_Flags_t, gex_Rank_t, Handle};
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

/// `gex_EP_Index_t`.
pub type gex_EP_Index_t = u32;

/// `gex_EP_Location_t`: a (job rank, endpoint index) pair.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct gex_EP_Location_t {
    /// The job rank.
    pub gex_rank: gex_Rank_t,
    /// The endpoint's index in that process (0: the primordial endpoint).
    pub gex_ep_index: gex_EP_Index_t,
}

/// Whether non-fatal error returns print a message (GASNet-EX's default:
/// they do).
static VERBOSE: AtomicBool = AtomicBool::new(true);

/// Whether error returns print their message now.
pub(crate) fn verbose_errors() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

fn check(call: &str, what: &str, h: Handle, obj: &'static u8, made_by: &str) {
    if h != handle(obj) {
        fatal(
            call,
            &format!("{what}={h:p} is not the {what} {made_by} returned"),
        )
    }
}

fn client(call: &str, h: Handle) -> &'static Api {
    let a = api(call);
    check(call, "client", h, &CLIENT_OBJ, "gex_Client_Init");
    a
}

fn ep(call: &str, h: Handle) -> &'static Api {
    let a = api(call);
    check(call, "ep", h, &EP_OBJ, "gex_Client_Init");
    a
}

/// The attached segment's (base, size); a fatal error for another handle
/// or before `gex_Segment_Attach`.
fn segment(call: &str, h: Handle) -> (*mut c_void, usize) {
    let a = api(call);
    check(call, "seg", h, &SEGMENT_OBJ, "gex_Segment_Attach");
    let segs = a.segs.borrow();
    match segs.get(a.client.rank()) {
        Some(s) => (s.base as *mut c_void, s.size as usize),
        None => fatal(call, "seg names no attached segment"),
    }
}

/// The flags of `tm`: `gex_Client_Init`'s for the primordial team, the
/// split's for a team made by `gex_TM_Split`.
fn tm_flags(a: &'static Api, call: &str, tm: Handle) -> gex_Flags_t {
    if is_world(tm) {
        return a.flags;
    }
    split_flags(a, call, tm)
}

/// `gex_Client_QueryFlags`: the flags passed to `gex_Client_Init`.
#[no_mangle]
pub extern "C" fn gex_Client_QueryFlags(c: Handle) -> gex_Flags_t {
    client("gex_Client_QueryFlags", c).flags
}

/// `gex_Client_QueryName`: the name passed to `gex_Client_Init` (a copy
/// the library keeps).
#[no_mangle]
pub extern "C" fn gex_Client_QueryName(c: Handle) -> *const c_char {
    client("gex_Client_QueryName", c).name.as_ptr()
}

/// `gex_EP_QueryClient`.
#[no_mangle]
pub extern "C" fn gex_EP_QueryClient(e: Handle) -> Handle {
    ep("gex_EP_QueryClient", e);
    handle(&CLIENT_OBJ)
}

/// `gex_EP_QueryFlags`: the primordial endpoint's, which are the flags
/// `gex_Client_Init` created it with.
#[no_mangle]
pub extern "C" fn gex_EP_QueryFlags(e: Handle) -> gex_Flags_t {
    ep("gex_EP_QueryFlags", e).flags
}

/// `gex_EP_QuerySegment`: the bound segment, or `GEX_SEGMENT_INVALID`
/// before `gex_Segment_Attach`.
#[no_mangle]
pub extern "C" fn gex_EP_QuerySegment(e: Handle) -> Handle {
    let a = ep("gex_EP_QuerySegment", e);
    if a.segs.borrow().is_empty() {
        std::ptr::null_mut()
    } else {
        handle(&SEGMENT_OBJ)
    }
}

/// `gex_EP_QueryIndex`: 0, the primordial endpoint's index.
#[no_mangle]
pub extern "C" fn gex_EP_QueryIndex(e: Handle) -> gex_EP_Index_t {
    ep("gex_EP_QueryIndex", e);
    0
}

/// `gex_Segment_QueryClient`.
#[no_mangle]
pub extern "C" fn gex_Segment_QueryClient(seg: Handle) -> Handle {
    segment("gex_Segment_QueryClient", seg);
    handle(&CLIENT_OBJ)
}

/// `gex_Segment_QueryFlags`: 0 (the specification defines no segment
/// flags).
#[no_mangle]
pub extern "C" fn gex_Segment_QueryFlags(seg: Handle) -> gex_Flags_t {
    segment("gex_Segment_QueryFlags", seg);
    0
}

/// `gex_Segment_QueryAddr`: the segment's base address in this process.
#[no_mangle]
pub extern "C" fn gex_Segment_QueryAddr(seg: Handle) -> *mut c_void {
    segment("gex_Segment_QueryAddr", seg).0
}

/// `gex_Segment_QuerySize`: its length in bytes (what `gex_Segment_Attach`
/// was given, rounded up to the page size).
#[no_mangle]
pub extern "C" fn gex_Segment_QuerySize(seg: Handle) -> usize {
    segment("gex_Segment_QuerySize", seg).1
}

/// `gex_TM_QueryClient`.
#[no_mangle]
pub extern "C" fn gex_TM_QueryClient(tm: Handle) -> Handle {
    const CALL: &str = "gex_TM_QueryClient";
    crate::team::team(api(CALL), CALL, tm);
    handle(&CLIENT_OBJ)
}

/// `gex_TM_QueryEP`: every team's endpoint is the primordial one.
#[no_mangle]
pub extern "C" fn gex_TM_QueryEP(tm: Handle) -> Handle {
    const CALL: &str = "gex_TM_QueryEP";
    crate::team::team(api(CALL), CALL, tm);
    handle(&EP_OBJ)
}

/// `gex_TM_QueryFlags`: the flags the team was created with.
#[no_mangle]
pub extern "C" fn gex_TM_QueryFlags(tm: Handle) -> gex_Flags_t {
    const CALL: &str = "gex_TM_QueryFlags";
    tm_flags(api(CALL), CALL, tm)
}

/// `gex_TM_TranslateRankToEP`: member `rank` of `tm` as (job rank,
/// endpoint 0). `flags` must be 0 (reserved).
#[no_mangle]
pub extern "C" fn gex_TM_TranslateRankToEP(
    tm: Handle,
    rank: gex_Rank_t,
    flags: gex_Flags_t,
) -> gex_EP_Location_t {
    const CALL: &str = "gex_TM_TranslateRankToEP";
    let a = api(CALL);
    crate::team::not_pair(CALL, tm);
    if flags != 0 {
        fatal(
            CALL,
            &format!("flags=0x{flags:x}: the flags are reserved and must be 0"),
        )
    }
    gex_EP_Location_t {
        gex_rank: tm_rank(a, CALL, tm, rank) as gex_Rank_t,
        gex_ep_index: 0,
    }
}

/// `gex_TM_Pair`: the ad hoc TM-pair for point-to-point calls from
/// `local_ep` to endpoint `remote_ep_index` of the process whose job rank
/// each call names. Every process has one endpoint (index 0), so there is
/// one TM-pair; any other index is a fatal error.
#[no_mangle]
pub extern "C" fn gex_TM_Pair(local_ep: Handle, remote_ep_index: gex_EP_Index_t) -> Handle {
    const CALL: &str = "gex_TM_Pair";
    ep(CALL, local_ep);
    if remote_ep_index != 0 {
        fatal(
            CALL,
            &format!("remote_ep_index={remote_ep_index}: every process has one endpoint, index 0 (GASNET_MAXEPS is 1)"),
        )
    }
    handle(&crate::state::PAIR_OBJ)
}

/// `gex_Segment_QueryBound` (deprecated since specification 0.13): as
/// `gex_EP_QueryBoundSegmentNB` waited for, except that it returns
/// non-zero (`GASNET_ERR_BAD_ARG`) and leaves the outputs unmodified when
/// `(tm, rank)` has no bound segment (before `gex_Segment_Attach`).
#[no_mangle]
pub extern "C" fn gex_Segment_QueryBound(
    tm: Handle,
    rank: gex_Rank_t,
    owneraddr_p: *mut *mut c_void,
    localaddr_p: *mut *mut c_void,
    size_p: *mut usize,
) -> c_int {
    const CALL: &str = "gex_Segment_QueryBound";
    let a = api(CALL);
    let r = tm_rank(a, CALL, tm, rank);
    if a.segs.borrow().get(r).is_none() {
        return crate::types::consts::GASNET_ERR_BAD_ARG;
    }
    crate::start::gex_EP_QueryBoundSegmentNB(tm, rank, owneraddr_p, localaddr_p, size_p, 0);
    crate::types::consts::GASNET_OK
}

/// `gex_System_GetVerboseErrors`: 1 while non-fatal error returns print
/// their message (the default), else 0.
#[no_mangle]
pub extern "C" fn gex_System_GetVerboseErrors() -> c_int {
    c_int::from(verbose_errors())
}

/// `gex_System_SetVerboseErrors`: 1 prints the message of each non-fatal
/// error return, 0 does not; other values are reserved (a fatal error).
#[no_mangle]
pub extern "C" fn gex_System_SetVerboseErrors(enable: c_int) {
    match enable {
        0 | 1 => VERBOSE.store(enable == 1, Ordering::Relaxed),
        v => fatal(
            "gex_System_SetVerboseErrors",
            &format!("enable={v}: only 0 and 1 are accepted (other values are reserved)"),
        ),
    }
}

/// `gex_System_QueryMaxThreads`: 1 (this is the SEQ library).
#[no_mangle]
pub extern "C" fn gex_System_QueryMaxThreads() -> u64 {
    1
}
