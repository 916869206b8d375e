//! Handler-safe locks (`gex_HSL_*`).

use crate::state::fatal;
use crate::types::consts::*;
use crate::types::gex_HSL_t;
use std::ffi::c_int;

fn hsl<'a>(call: &str, l: *mut gex_HSL_t) -> &'a mut gex_HSL_t {
    if l.is_null() {
        fatal(call, "hsl is NULL")
    }
    // SAFETY: checked non-NULL; the caller passes its gex_HSL_t.
    unsafe { &mut *l }
}

/// `gex_HSL_Init`.
#[no_mangle]
pub extern "C" fn gex_HSL_Init(l: *mut gex_HSL_t) {
    let h = hsl("gex_HSL_Init", l);
    h.held = 0;
    h.reserved = 0;
}

/// `gex_HSL_Destroy`.
#[no_mangle]
pub extern "C" fn gex_HSL_Destroy(l: *mut gex_HSL_t) {
    if hsl("gex_HSL_Destroy", l).held != 0 {
        fatal("gex_HSL_Destroy", "the lock is held")
    }
}

/// `gex_HSL_Lock`: in the SEQ library one thread runs both the client and
/// its handlers, so a lock already held can never be released: that is a
/// deadlock, reported.
#[no_mangle]
pub extern "C" fn gex_HSL_Lock(l: *mut gex_HSL_t) {
    let h = hsl("gex_HSL_Lock", l);
    if h.held != 0 {
        fatal(
            "gex_HSL_Lock",
            "the lock is already held by this thread (deadlock)",
        )
    }
    h.held = 1;
}

/// `gex_HSL_Unlock`.
#[no_mangle]
pub extern "C" fn gex_HSL_Unlock(l: *mut gex_HSL_t) {
    let h = hsl("gex_HSL_Unlock", l);
    if h.held == 0 {
        fatal("gex_HSL_Unlock", "the lock is not held")
    }
    h.held = 0;
}

/// `gex_HSL_Trylock`: 0 when acquired, GASNET_ERR_NOT_READY when held.
#[no_mangle]
pub extern "C" fn gex_HSL_Trylock(l: *mut gex_HSL_t) -> c_int {
    let h = hsl("gex_HSL_Trylock", l);
    if h.held != 0 {
        return GASNET_ERR_NOT_READY;
    }
    h.held = 1;
    GASNET_OK
}
