//! The limits of Active Messages: `gex_AM_MaxArgs`, the least upper
//! bounds (`gex_AM_LUB*`), the per-call maxima (`gex_AM_Max*`) and the
//! maxima of a reply from a running handler (`gex_Token_Max*`).

use crate::handlers::token;
use crate::state::{api, fatal};
use crate::types::{gex_Flags_t, Handle};
use std::ffi::c_uint;

/// `gex_AM_MaxArgs`.
#[no_mangle]
pub extern "C" fn gex_AM_MaxArgs() -> c_uint {
    16
}

fn max_medium(call: &str) -> usize {
    api(call).client.max_medium()
}

fn max_long(call: &str) -> usize {
    api(call).client.max_long()
}

/// The most a Long Prepare with `client_buf == NULL` allocates: what
/// `gex_AM_Max*Long` give with `GEX_FLAG_AM_PREPARE_LEAST_ALLOC` (larger
/// `least_payload` values are erroneous; a Prepare still tries them).
pub(crate) const ALLOC_LONG: usize = 1 << 20;

/// A Long's maximum for a Prepare under `flags`: with
/// `GEX_FLAG_AM_PREPARE_LEAST_ALLOC`, the space this library allocates.
fn max_long_for(call: &str, flags: gex_Flags_t) -> usize {
    let max = max_long(call);
    if flags & crate::types::consts::FLAG_AM_PREPARE_LEAST_ALLOC != 0 {
        max.min(ALLOC_LONG)
    } else {
        max
    }
}

/// `gex_AM_LUBRequestMedium`.
#[no_mangle]
pub extern "C" fn gex_AM_LUBRequestMedium() -> usize {
    max_medium("gex_AM_LUBRequestMedium")
}

/// `gex_AM_LUBReplyMedium`.
#[no_mangle]
pub extern "C" fn gex_AM_LUBReplyMedium() -> usize {
    max_medium("gex_AM_LUBReplyMedium")
}

/// `gex_AM_LUBRequestLong`.
#[no_mangle]
pub extern "C" fn gex_AM_LUBRequestLong() -> usize {
    max_long("gex_AM_LUBRequestLong")
}

/// `gex_AM_LUBReplyLong`.
#[no_mangle]
pub extern "C" fn gex_AM_LUBReplyLong() -> usize {
    max_long("gex_AM_LUBReplyLong")
}

fn check_max(call: &str, tm: Handle, other: u32, numargs: c_uint) {
    let a = api(call);
    if other != u32::MAX {
        crate::team::tm_rank(a, call, tm, other);
    } else if !crate::team::is_pair(tm) {
        crate::team::team(a, call, tm);
    }
    if numargs > 16 {
        fatal(
            call,
            &format!("numargs={numargs} is more than gex_AM_MaxArgs() (16)"),
        )
    }
}

/// `gex_AM_MaxRequestMedium`.
#[no_mangle]
pub extern "C" fn gex_AM_MaxRequestMedium(
    tm: Handle,
    other: u32,
    _lc: *const Handle,
    _f: gex_Flags_t,
    numargs: c_uint,
) -> usize {
    check_max("gex_AM_MaxRequestMedium", tm, other, numargs);
    max_medium("gex_AM_MaxRequestMedium")
}

/// `gex_AM_MaxReplyMedium`.
#[no_mangle]
pub extern "C" fn gex_AM_MaxReplyMedium(
    tm: Handle,
    other: u32,
    _lc: *const Handle,
    _f: gex_Flags_t,
    numargs: c_uint,
) -> usize {
    check_max("gex_AM_MaxReplyMedium", tm, other, numargs);
    max_medium("gex_AM_MaxReplyMedium")
}

/// `gex_AM_MaxRequestLong`.
#[no_mangle]
pub extern "C" fn gex_AM_MaxRequestLong(
    tm: Handle,
    other: u32,
    _lc: *const Handle,
    f: gex_Flags_t,
    numargs: c_uint,
) -> usize {
    check_max("gex_AM_MaxRequestLong", tm, other, numargs);
    max_long_for("gex_AM_MaxRequestLong", f)
}

/// `gex_AM_MaxReplyLong`.
#[no_mangle]
pub extern "C" fn gex_AM_MaxReplyLong(
    tm: Handle,
    other: u32,
    _lc: *const Handle,
    f: gex_Flags_t,
    numargs: c_uint,
) -> usize {
    check_max("gex_AM_MaxReplyLong", tm, other, numargs);
    max_long_for("gex_AM_MaxReplyLong", f)
}

/// The checks of `gex_Token_Max*`: the running request handler's token,
/// at most 16 arguments.
fn check_token_max(call: &str, tok: Handle, numargs: c_uint) {
    let t = token(call, tok);
    // SAFETY: as for Short.
    if !unsafe { t.conduit() }.is_request() {
        fatal(
            call,
            "the token is a reply handler's (the queries are for request handlers, which may reply)",
        )
    }
    if numargs > 16 {
        fatal(
            call,
            &format!("numargs={numargs} is more than gex_AM_MaxArgs() (16)"),
        )
    }
}

/// `gex_Token_MaxReplyMedium`.
#[no_mangle]
pub extern "C" fn gex_Token_MaxReplyMedium(
    tok: Handle,
    _lc: *const Handle,
    _f: gex_Flags_t,
    numargs: c_uint,
) -> usize {
    const CALL: &str = "gex_Token_MaxReplyMedium";
    check_token_max(CALL, tok, numargs);
    max_medium(CALL)
}

/// `gex_Token_MaxReplyLong`.
#[no_mangle]
pub extern "C" fn gex_Token_MaxReplyLong(
    tok: Handle,
    _lc: *const Handle,
    _f: gex_Flags_t,
    numargs: c_uint,
) -> usize {
    const CALL: &str = "gex_Token_MaxReplyLong";
    check_token_max(CALL, tok, numargs);
    max_long(CALL)
}
