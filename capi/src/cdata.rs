//! Client data (`gex_{Client,EP,Segment,TM}_{Set,Query}CData`): one
//! pointer per object for the client, NULL until set. The atomic domain's
//! is in `ad`.

use crate::state::{api, fatal, handle, CLIENT_OBJ, EP_OBJ, SEGMENT_OBJ};
use crate::types::Handle;
use std::ffi::c_void;

/// Which of the process's single objects `h` is, checked against `obj`.
fn slot(call: &str, what: &str, h: Handle, obj: &'static u8, i: usize) -> usize {
    if h != handle(obj) {
        fatal(
            call,
            &format!(
                "{what}={h:p} is not the {what} gex_Client_Init (or gex_Segment_Attach) returned"
            ),
        )
    }
    i
}

fn set(call: &str, i: usize, val: *const c_void) {
    api(call).cdata[i].set(val);
}

fn query(call: &str, i: usize) -> *mut c_void {
    api(call).cdata[i].get() as *mut c_void
}

/// `gex_Client_SetCData`.
#[no_mangle]
pub extern "C" fn gex_Client_SetCData(client: Handle, val: *const c_void) {
    const CALL: &str = "gex_Client_SetCData";
    set(CALL, slot(CALL, "client", client, &CLIENT_OBJ, 0), val)
}

/// `gex_Client_QueryCData`.
#[no_mangle]
pub extern "C" fn gex_Client_QueryCData(client: Handle) -> *mut c_void {
    const CALL: &str = "gex_Client_QueryCData";
    query(CALL, slot(CALL, "client", client, &CLIENT_OBJ, 0))
}

/// `gex_EP_SetCData`.
#[no_mangle]
pub extern "C" fn gex_EP_SetCData(ep: Handle, val: *const c_void) {
    const CALL: &str = "gex_EP_SetCData";
    set(CALL, slot(CALL, "ep", ep, &EP_OBJ, 1), val)
}

/// `gex_EP_QueryCData`.
#[no_mangle]
pub extern "C" fn gex_EP_QueryCData(ep: Handle) -> *mut c_void {
    const CALL: &str = "gex_EP_QueryCData";
    query(CALL, slot(CALL, "ep", ep, &EP_OBJ, 1))
}

/// `gex_Segment_SetCData`.
#[no_mangle]
pub extern "C" fn gex_Segment_SetCData(seg: Handle, val: *const c_void) {
    const CALL: &str = "gex_Segment_SetCData";
    set(CALL, slot(CALL, "seg", seg, &SEGMENT_OBJ, 2), val)
}

/// `gex_Segment_QueryCData`.
#[no_mangle]
pub extern "C" fn gex_Segment_QueryCData(seg: Handle) -> *mut c_void {
    const CALL: &str = "gex_Segment_QueryCData";
    query(CALL, slot(CALL, "seg", seg, &SEGMENT_OBJ, 2))
}

/// `gex_TM_SetCData`: the primordial team's or a split team's.
#[no_mangle]
pub extern "C" fn gex_TM_SetCData(tm: Handle, val: *const c_void) {
    const CALL: &str = "gex_TM_SetCData";
    let a = api(CALL);
    crate::team::cdata(a, CALL, tm).set(val)
}

/// `gex_TM_QueryCData`.
#[no_mangle]
pub extern "C" fn gex_TM_QueryCData(tm: Handle) -> *mut c_void {
    const CALL: &str = "gex_TM_QueryCData";
    let a = api(CALL);
    crate::team::cdata(a, CALL, tm).get() as *mut c_void
}
