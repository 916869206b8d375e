//! Value-based RMA: `gex_RMA_GetBlockingVal`, `gex_RMA_PutBlockingVal`,
//! `gex_RMA_PutNBIVal`, `gex_RMA_PutNBVal`. The value's `nbytes`
//! low-order bytes (1 to `SIZEOF_GEX_RMA_VALUE_T`, 8) are moved as that
//! many bytes of a native integer; the value is consumed on return.

use crate::am::failed;
use crate::state::{api, fatal, segment_offset, Ev};
use crate::team::tm_rank;
use crate::types::{gex_Flags_t, Handle};
use conduit::client::RawLocal;
use std::ffi::{c_int, c_void};

/// `gex_RMA_Value_t`.
pub type gex_RMA_Value_t = u64;

const VALUE_BYTES: usize = std::mem::size_of::<gex_RMA_Value_t>();

fn check_len(call: &str, nbytes: usize) {
    if nbytes == 0 || nbytes > VALUE_BYTES {
        fatal(
            call,
            &format!("nbytes={nbytes}: value-based RMA moves 1 to {VALUE_BYTES} bytes (SIZEOF_GEX_RMA_VALUE_T)"),
        )
    }
}

/// Where the `nbytes` low-order bytes of a value's native bytes start.
fn low(nbytes: usize) -> usize {
    if cfg!(target_endian = "big") {
        VALUE_BYTES - nbytes
    } else {
        0
    }
}

/// Start a put of `value`'s low-order `nbytes` bytes (the value is copied
/// or injected before this returns).
fn put_value(
    call: &str,
    tm: Handle,
    rank: u32,
    dest: *mut c_void,
    value: gex_RMA_Value_t,
    nbytes: usize,
    implicit: bool,
) -> Option<conduit::client::RawOp> {
    check_len(call, nbytes);
    let a = api(call);
    let r = tm_rank(a, call, tm, rank);
    let off = segment_offset(a, call, "dest", r, dest, nbytes);
    let bytes = value.to_ne_bytes();
    let at = low(nbytes);
    // SAFETY: `bytes` lives on this frame until the put reached local
    // completion, which RawLocal::Now makes happen before raw_put returns.
    match unsafe {
        a.client.raw_put(
            r,
            off,
            bytes[at..].as_ptr(),
            nbytes,
            RawLocal::Now,
            implicit,
        )
    } {
        Ok(op) => op,
        Err(e) => failed(call, &e),
    }
}

/// `gex_RMA_PutBlockingVal`.
#[no_mangle]
pub extern "C" fn gex_RMA_PutBlockingVal(
    tm: Handle,
    rank: u32,
    dest: *mut c_void,
    value: gex_RMA_Value_t,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_RMA_PutBlockingVal";
    if let Some(op) = put_value(CALL, tm, rank, dest, value, nbytes, false) {
        if let Err(e) = api(CALL).client.raw_wait(op) {
            failed(CALL, &e)
        }
    }
    0
}

/// `gex_RMA_PutNBIVal`.
#[no_mangle]
pub extern "C" fn gex_RMA_PutNBIVal(
    tm: Handle,
    rank: u32,
    dest: *mut c_void,
    value: gex_RMA_Value_t,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_RMA_PutNBIVal";
    let a = api(CALL);
    let implicit = crate::region::implicit(a);
    if let Some(op) = put_value(CALL, tm, rank, dest, value, nbytes, implicit) {
        crate::region::keep(a, op, true);
    }
    0
}

/// `gex_RMA_PutNBVal`.
#[no_mangle]
pub extern "C" fn gex_RMA_PutNBVal(
    tm: Handle,
    rank: u32,
    dest: *mut c_void,
    value: gex_RMA_Value_t,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> Handle {
    const CALL: &str = "gex_RMA_PutNBVal";
    match put_value(CALL, tm, rank, dest, value, nbytes, false) {
        Some(op) => api(CALL).events.borrow_mut().insert(Ev::Rma(op)),
        None => std::ptr::null_mut(),
    }
}

/// `gex_RMA_GetBlockingVal`: the `nbytes` bytes at `src` of `rank`'s
/// segment as the low-order bytes of the value (the others 0).
#[no_mangle]
pub extern "C" fn gex_RMA_GetBlockingVal(
    tm: Handle,
    rank: u32,
    src: *mut c_void,
    nbytes: usize,
    _flags: gex_Flags_t,
) -> gex_RMA_Value_t {
    const CALL: &str = "gex_RMA_GetBlockingVal";
    check_len(CALL, nbytes);
    let a = api(CALL);
    let r = tm_rank(a, CALL, tm, rank);
    let off = segment_offset(a, CALL, "src", r, src, nbytes);
    let mut bytes = [0u8; VALUE_BYTES];
    let at = low(nbytes);
    if let Err(e) = a.client.get(r, off, &mut bytes[at..at + nbytes]) {
        failed(CALL, &e)
    }
    gex_RMA_Value_t::from_ne_bytes(bytes)
}
