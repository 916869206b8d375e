//! Handler registration (`gex_EP_RegisterHandlers`) and the trampolines
//! that call C handlers with their token and 0..16 arguments.

use crate::state::{self, api, error_return, Api};
use crate::types::consts::*;
use crate::types::{gex_AM_Entry_t, Handle};
use conduit::client::{Handler, Payload, Token, Widen};
use std::ffi::{c_int, c_void, CStr};

/// What a C handler's `gex_Token_t` points to while it runs.
pub(crate) struct CToken {
    /// The conduit's token (valid while the handler runs).
    pub tok: *mut c_void,
    /// The handler's entry (library-owned copy).
    pub entry: *const gex_AM_Entry_t,
    /// Whether the message is a Long.
    pub is_long: bool,
}

impl CToken {
    /// The conduit's token behind a C token.
    ///
    /// # Safety
    /// `self` must be the running handler's token (checked by [`token`]).
    pub unsafe fn conduit(&mut self) -> &mut Token<'static, ()> {
        // SAFETY: `tok` was made from the `&mut Token` the dispatcher gave
        // the trampoline, which outlives the handler call this runs inside.
        unsafe { &mut *(self.tok as *mut Token<'static, ()>) }
    }
}

/// The running handler's token, checked to be `token`: a fatal error for
/// a token outside its handler (GASNet-EX: a token is valid only there).
pub(crate) fn token(call: &str, token: Handle) -> &'static mut CToken {
    let cur = state::current_token();
    if token.is_null() || token != cur {
        state::fatal(
            call,
            &format!(
                "token={token:p} is not the token of a running AM handler (tokens are valid only inside their handler)"
            ),
        )
    }
    // SAFETY: `token` is the running handler's, which points to the
    // CToken on the trampoline's stack, live until the handler returns; no
    // other reference to it exists while C code runs.
    unsafe { &mut *(token as *mut CToken) }
}

type Fp = unsafe extern "C" fn();

macro_rules! arg {
    ($i:literal) => {
        i32
    };
}

/// Call C handler `$f` with the token `$t` (and, for Medium and Long,
/// buffer `$b` and length `$len`) and the arguments in `$a`, by count.
macro_rules! call_n {
    (short $f:expr, $a:ident, $t:ident; $( $n:literal => [$($i:literal),*] ),*) => {
        match $a.len() {
            $( $n => {
                // SAFETY: GASNet-EX requires a registered handler to take the
                // token and exactly the registered number of gex_AM_Arg_t
                // arguments, which the conduit checked this message carries.
                let g = unsafe {
                    std::mem::transmute::<Fp, unsafe extern "C" fn(*mut c_void $(, arg!($i))*)>($f)
                };
                // SAFETY: as above.
                unsafe { g($t $(, $a[$i] as i32)*) }
            } )*
            n => state::fatal("AM dispatch", &format!("{n} arguments: more than gex_AM_MaxArgs() (16)")),
        }
    };
    (payload $f:expr, $a:ident, $t:ident, $b:ident, $len:ident; $( $n:literal => [$($i:literal),*] ),*) => {
        match $a.len() {
            $( $n => {
                // SAFETY: as for Short, with the payload's address and length
                // after the token.
                let g = unsafe {
                    std::mem::transmute::<Fp, unsafe extern "C" fn(*mut c_void, *mut c_void, usize $(, arg!($i))*)>($f)
                };
                // SAFETY: as above.
                unsafe { g($t, $b, $len $(, $a[$i] as i32)*) }
            } )*
            n => state::fatal("AM dispatch", &format!("{n} arguments: more than gex_AM_MaxArgs() (16)")),
        }
    };
}

macro_rules! dispatch_arms {
    ($($head:tt)*) => {
        call_n!($($head)*;
            0 => [], 1 => [0], 2 => [0, 1], 3 => [0, 1, 2], 4 => [0, 1, 2, 3],
            5 => [0, 1, 2, 3, 4], 6 => [0, 1, 2, 3, 4, 5], 7 => [0, 1, 2, 3, 4, 5, 6],
            8 => [0, 1, 2, 3, 4, 5, 6, 7], 9 => [0, 1, 2, 3, 4, 5, 6, 7, 8],
            10 => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], 11 => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
            12 => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
            13 => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
            14 => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13],
            15 => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
            16 => [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15])
    };
}

pub(crate) fn run_short(f: Fp, entry: usize, tok: &mut Token<'_, ()>, args: &[u32]) {
    let mut ct = CToken {
        tok: tok as *mut Token<'_, ()> as *mut c_void,
        entry: entry as *const gex_AM_Entry_t,
        is_long: false,
    };
    let t = &mut ct as *mut CToken as *mut c_void;
    state::in_handler(t, || dispatch_arms!(short f, args, t));
}

pub(crate) fn run_payload(
    f: Fp,
    entry: usize,
    tok: &mut Token<'_, ()>,
    args: &[u32],
    buf: *const u8,
    n: usize,
) {
    // A Long of no bytes: dest_addr exactly as the initiator gave it (its
    // offset wrapped; NULL included, which the conduit's payload cannot
    // hold), as GASNet-EX promises.
    let buf = match tok.long_offset() {
        Some(off) if n == 0 => {
            let base = crate::state::try_api()
                .and_then(|a| a.segs.borrow().get(a.client.rank()).map(|s| s.base));
            match base {
                Some(base) => base.wrapping_add(off as u64) as usize as *const u8,
                None => buf,
            }
        }
        _ => buf,
    };
    let mut ct = CToken {
        tok: tok as *mut Token<'_, ()> as *mut c_void,
        entry: entry as *const gex_AM_Entry_t,
        is_long: tok.long_offset().is_some(),
    };
    let t = &mut ct as *mut CToken as *mut c_void;
    let buf = buf as *mut c_void;
    state::in_handler(t, || dispatch_arms!(payload f, args, t, buf, n));
}

fn entry_name(e: &gex_AM_Entry_t) -> String {
    if e.gex_name.is_null() {
        String::new()
    } else {
        // SAFETY: a non-NULL gex_name is a NUL-terminated string (GASNet-EX).
        let s = unsafe { CStr::from_ptr(e.gex_name) }.to_string_lossy();
        format!(" (\"{s}\")")
    }
}

/// Check one entry; the conduit handler to register for it.
/// Also returns the entry `gex_Token_Info` reports (a copy of `e`, whose
/// index `register` sets once chosen).
fn handler_for(i: usize, e: &gex_AM_Entry_t) -> Result<(Handler<()>, *mut gex_AM_Entry_t), String> {
    let what = format!("table[{i}]{}", entry_name(e));
    let Some(f) = e.gex_fnptr else {
        return Err(format!("{what}: gex_fnptr is NULL"));
    };
    if e.gex_index != 0 && e.gex_index < 128 {
        return Err(format!(
            "{what}: gex_index={} is outside the client's range (0 to assign one, or {}..255)",
            e.gex_index, 128
        ));
    }
    if e.gex_nargs > 16 {
        return Err(format!(
            "{what}: gex_nargs={} is more than gex_AM_MaxArgs() (16)",
            e.gex_nargs
        ));
    }
    let cat = e.gex_flags & (AM_SHORT | AM_MEDIUM | AM_LONG);
    let dir = e.gex_flags & (AM_REQUEST | AM_REPLY);
    let known = AM_SHORT | AM_MEDIUM | AM_LONG | AM_REQUEST | AM_REPLY;
    if e.gex_flags & !known != 0
        || cat == 0
        || dir == 0
        || cat == AM_SHORT | AM_MEDIUM
        || cat & AM_SHORT != 0 && cat != AM_SHORT
    {
        return Err(format!(
            "{what}: gex_flags=0x{:x} must be one of GEX_FLAG_AM_SHORT, _MEDIUM, _LONG, _MEDLONG or'ed with one of GEX_FLAG_AM_REQUEST, _REPLY, _REQREP",
            e.gex_flags
        ));
    }
    let copy: *mut gex_AM_Entry_t = Box::leak(Box::new(*e));
    let entry = copy as usize;
    let nargs = e.gex_nargs as u8;
    let req = dir & AM_REQUEST != 0;
    let h = if cat == AM_SHORT {
        let g = move |t: &mut Token<'_, ()>, a: &[u32]| run_short(f, entry, t, a);
        if req {
            Handler::request_short(nargs, g)
        } else {
            Handler::reply_short(nargs, g)
        }
    } else {
        // A handler that takes Longs (GEX_FLAG_AM_LONG or _MEDLONG) is
        // registered as a Long handler: it gets a Long's payload in place
        // (a Medium handler widened to Longs would get a copy).
        let m = move |t: &mut Token<'_, ()>, a: &[u32], p: &[u8]| {
            run_payload(f, entry, t, a, p.as_ptr(), p.len())
        };
        let l = move |t: &mut Token<'_, ()>, a: &[u32], p: Payload<'_>| {
            run_payload(f, entry, t, a, p.as_ptr(), p.len())
        };
        match (cat & AM_LONG == 0, req) {
            (true, true) => Handler::request_medium(nargs, m),
            (true, false) => Handler::reply_medium(nargs, m),
            (false, true) => Handler::request_long(nargs, l),
            (false, false) => Handler::reply_long(nargs, l),
        }
    };
    let h = h.widened(Widen {
        either_side: dir == AM_REQUEST | AM_REPLY,
        medium_or_long: cat == AM_MEDIUM | AM_LONG,
        untyped: false,
    });
    Ok((h, copy))
}

fn register(a: &Api, table: &mut [gex_AM_Entry_t]) -> Result<(), String> {
    let mut hs = Vec::with_capacity(table.len());
    for (i, e) in table.iter().enumerate() {
        hs.push(Some(handler_for(i, e)?));
    }
    // Fixed indices first, then the "don't care" ones in table order.
    for pass_fixed in [true, false] {
        for (i, e) in table.iter_mut().enumerate() {
            if (e.gex_index != 0) != pass_fixed {
                continue;
            }
            let (h, copy) = hs[i].take().expect("each entry is registered once");
            match a.client.register(e.gex_index, h) {
                Ok(idx) => {
                    e.gex_index = idx;
                    // SAFETY: `copy` is the leaked entry of this handler
                    // (never freed); no handler of it can run before its
                    // registration returned.
                    unsafe { (*copy).gex_index = idx };
                }
                Err(err) => {
                    return Err(format!("table[{i}]{}: {}", entry_name(e), err.report()));
                }
            }
        }
    }
    Ok(())
}

/// `gex_EP_RegisterHandlers`.
#[no_mangle]
pub extern "C" fn gex_EP_RegisterHandlers(
    ep: Handle,
    table: *mut gex_AM_Entry_t,
    numentries: usize,
) -> c_int {
    const CALL: &str = "gex_EP_RegisterHandlers";
    let a = api(CALL);
    if ep != state::handle(&state::EP_OBJ) {
        return error_return(
            CALL,
            GASNET_ERR_BAD_ARG,
            &format!("ep={ep:p} is not the endpoint returned by gex_Client_Init"),
        );
    }
    if numentries == 0 {
        return GASNET_OK;
    }
    if table.is_null() {
        return error_return(
            CALL,
            GASNET_ERR_BAD_ARG,
            &format!("table is NULL with numentries={numentries}"),
        );
    }
    crate::state::check_array(CALL, "table", "numentries", table as *const _, numentries);
    // SAFETY: GASNet-EX requires `table` to hold `numentries` entries; the
    // call writes back only gex_index.
    let t = unsafe { std::slice::from_raw_parts_mut(table, numentries) };
    match register(a, t) {
        Ok(()) => GASNET_OK,
        Err(why) => error_return(CALL, GASNET_ERR_BAD_ARG, &why),
    }
}
