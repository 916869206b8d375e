//! Active Message injection, token queries and polling (the limits are
//! in `am_limits`, handler-safe locks in `hsl`).

use crate::handlers::token;
use crate::state::{self, api, fatal, Api};
use crate::types::consts::*;
use crate::types::{gex_AM_Arg_t, gex_Flags_t, gex_TI_t, gex_Token_Info_t, Handle};
use conduit::client::Error;
use std::ffi::{c_int, c_uint, c_void};

/// The arguments of an AM call as the conduit takes them.
#[inline]
pub(crate) fn args<'a>(call: &str, nargs: c_uint, args: *const gex_AM_Arg_t) -> &'a [u32] {
    if nargs > 16 {
        fatal(
            call,
            &format!("nargs={nargs} is more than gex_AM_MaxArgs() (16)"),
        )
    }
    if nargs == 0 {
        return &[];
    }
    // SAFETY: the header's inline wrappers pass an array of `nargs`
    // arguments; gex_AM_Arg_t (int32_t) and u32 have the same layout.
    unsafe { std::slice::from_raw_parts(args as *const u32, nargs as usize) }
}

/// The payload of an AM call.
#[inline]
pub(crate) fn payload<'a>(call: &str, src: *const c_void, nbytes: usize) -> &'a [u8] {
    if nbytes == 0 {
        return &[];
    }
    if src.is_null() {
        fatal(call, &format!("source_addr is NULL with nbytes={nbytes}"))
    }
    crate::state::check_array(call, "source_addr", "nbytes", src as *const u8, nbytes);
    // SAFETY: GASNet-EX requires source_addr to be readable for nbytes
    // until local completion, which every AM call here reaches before it
    // returns (and `check_array` kept the length within one slice's).
    unsafe { std::slice::from_raw_parts(src as *const u8, nbytes) }
}

/// Local completion: the payload is always reusable on return; an event
/// asked for is GEX_EVENT_INVALID (already complete). DEFER is refused.
#[inline]
pub(crate) fn local_completion(call: &str, lc_opt: *mut Handle, reply: bool) {
    match lc_opt as usize {
        EVENT_NOW => {}
        EVENT_DEFER => fatal(call, "lc_opt=GEX_EVENT_DEFER is not permitted for AMs (the specification allows NOW, GROUP, or an event pointer)"),
        EVENT_GROUP if reply => fatal(call, "lc_opt=GEX_EVENT_GROUP is not permitted for replies"),
        EVENT_GROUP => {}
        0 => fatal(call, "lc_opt is NULL (pass GEX_EVENT_NOW, GEX_EVENT_GROUP or the address of a gex_Event_t)"),
        // SAFETY: any other value is the address of the caller's gex_Event_t.
        _ => unsafe { *lc_opt = std::ptr::null_mut() },
    }
}

/// A Long's destination address as an offset in `rank`'s segment. With
/// no bytes nothing is written, and GASNet-EX passes `dest_addr` to the
/// handler as given ("even for the degenerate case when nbytes==0"): the
/// offset then wraps, so the target's base plus it is `dest_addr` again.
pub(crate) fn long_offset(
    a: &Api,
    call: &str,
    rank: usize,
    dest: *mut c_void,
    nbytes: usize,
) -> usize {
    if nbytes == 0 {
        if let Some(s) = a.segs.borrow().get(rank) {
            return (dest as u64).wrapping_sub(s.base) as usize;
        }
    }
    state::segment_offset(a, call, "dest_addr", rank, dest, nbytes)
}

/// Report a conduit error from an AM call.
#[cold]
pub(crate) fn failed(call: &str, e: &Error) -> ! {
    fatal(call, &e.report())
}

#[inline]
fn done(call: &str, r: Result<bool, Error>) -> c_int {
    match r {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(e) => failed(call, &e),
    }
}

/// What a request carries besides its arguments.
enum Body {
    Short,
    Medium(*const c_void, usize, *mut Handle),
    Long(*const c_void, usize, *mut c_void, *mut Handle),
}

/// The common path of the request entry points.
#[inline]
#[allow(clippy::too_many_arguments)]
fn request(
    call: &str,
    tm: Handle,
    rank: u32,
    handler: u8,
    body: Body,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    let a = api(call);
    let r = crate::team::tm_rank(a, call, tm, rank);
    let args = args(call, nargs, argv);
    let c = &a.client;
    let now = flags & FLAG_IMMEDIATE == 0;
    let sent = match body {
        Body::Short if now => c.request_short(r, handler, args).map(|_| true),
        Body::Short => c.try_request_short(r, handler, args),
        Body::Medium(src, n, lc) => {
            let p = payload(call, src, n);
            local_completion(call, lc, false);
            if now {
                c.request_medium(r, handler, args, p).map(|_| true)
            } else {
                c.try_request_medium(r, handler, args, p)
            }
        }
        Body::Long(src, n, dest, lc) => {
            let p = payload(call, src, n);
            let off = long_offset(a, call, r, dest, n);
            local_completion(call, lc, false);
            if now {
                c.request_long(r, handler, args, p, off).map(|_| true)
            } else {
                c.try_request_long(r, handler, args, p, off)
            }
        }
    };
    done(call, sent)
}

/// Short request (the gex_AM_RequestShortN family).
#[no_mangle]
pub extern "C" fn gasnetc_AM_RequestShort(
    tm: Handle,
    rank: u32,
    handler: u8,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    request(
        "gex_AM_RequestShort",
        tm,
        rank,
        handler,
        Body::Short,
        flags,
        nargs,
        argv,
    )
}

/// Medium request.
#[no_mangle]
pub extern "C" fn gasnetc_AM_RequestMedium(
    tm: Handle,
    rank: u32,
    handler: u8,
    src: *const c_void,
    nbytes: usize,
    lc_opt: *mut Handle,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    let body = Body::Medium(src, nbytes, lc_opt);
    request(
        "gex_AM_RequestMedium",
        tm,
        rank,
        handler,
        body,
        flags,
        nargs,
        argv,
    )
}

/// Long request.
#[no_mangle]
pub extern "C" fn gasnetc_AM_RequestLong(
    tm: Handle,
    rank: u32,
    handler: u8,
    src: *const c_void,
    nbytes: usize,
    dest: *mut c_void,
    lc_opt: *mut Handle,
    flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    let body = Body::Long(src, nbytes, dest, lc_opt);
    request(
        "gex_AM_RequestLong",
        tm,
        rank,
        handler,
        body,
        flags,
        nargs,
        argv,
    )
}

/// Short reply.
#[no_mangle]
pub extern "C" fn gasnetc_AM_ReplyShort(
    tok: Handle,
    handler: u8,
    _flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_ReplyShort";
    let t = token(CALL, tok);
    let args = args(CALL, nargs, argv);
    // SAFETY: `token` checked this is the running handler's token.
    let r = unsafe { t.conduit() }.reply_short(handler, args);
    done(CALL, r.map(|_| true))
}

/// Medium reply.
#[no_mangle]
pub extern "C" fn gasnetc_AM_ReplyMedium(
    tok: Handle,
    handler: u8,
    src: *const c_void,
    nbytes: usize,
    lc_opt: *mut Handle,
    _flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_ReplyMedium";
    let t = token(CALL, tok);
    let args = args(CALL, nargs, argv);
    let p = payload(CALL, src, nbytes);
    local_completion(CALL, lc_opt, true);
    // SAFETY: as for Short.
    let r = unsafe { t.conduit() }.reply_medium(handler, args, p);
    done(CALL, r.map(|_| true))
}

/// Long reply.
#[no_mangle]
pub extern "C" fn gasnetc_AM_ReplyLong(
    tok: Handle,
    handler: u8,
    src: *const c_void,
    nbytes: usize,
    dest: *mut c_void,
    lc_opt: *mut Handle,
    _flags: gex_Flags_t,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) -> c_int {
    const CALL: &str = "gex_AM_ReplyLong";
    let a = api(CALL);
    let t = token(CALL, tok);
    let args = args(CALL, nargs, argv);
    let p = payload(CALL, src, nbytes);
    // SAFETY: as for Short.
    let ct = unsafe { t.conduit() };
    let off = long_offset(a, CALL, ct.source(), dest, nbytes);
    local_completion(CALL, lc_opt, true);
    done(CALL, ct.reply_long(handler, args, p, off).map(|_| true))
}

/// `gex_Token_Info`: source rank, endpoint, entry, request and Long flags
/// (every query is supported).
#[no_mangle]
pub extern "C" fn gex_Token_Info(
    tok: Handle,
    info: *mut gex_Token_Info_t,
    mask: gex_TI_t,
) -> gex_TI_t {
    const CALL: &str = "gex_Token_Info";
    let t = token(CALL, tok);
    if info.is_null() {
        fatal(CALL, "info is NULL")
    }
    let entry = t.entry;
    let is_long = t.is_long;
    // SAFETY: as for Short.
    let ct = unsafe { t.conduit() };
    // SAFETY: checked non-NULL; the caller provides a gex_Token_Info_t.
    let i = unsafe { &mut *info };
    i.gex_srcrank = ct.source() as u32;
    i.gex_ep = state::handle(&state::EP_OBJ);
    i.gex_entry = entry;
    i.gex_is_req = c_int::from(ct.is_request());
    i.gex_is_long = c_int::from(is_long);
    let _ = mask;
    TI_SRCRANK | TI_EP | TI_ENTRY | TI_IS_REQ | TI_IS_LONG
}

/// `gasnet_AMPoll`: run handlers of arrived messages.
#[no_mangle]
pub extern "C" fn gasnet_AMPoll() -> c_int {
    const CALL: &str = "gasnet_AMPoll";
    let a = api(CALL);
    if let Err(e) = a.client.poll() {
        failed(CALL, &e)
    }
    GASNET_OK
}

/// One poll of `GASNET_BLOCKUNTIL`'s loop.
#[no_mangle]
pub extern "C" fn gasnetc_AMPoll_idle() {
    gasnet_AMPoll();
}
