//! Negotiated-payload AMs: `gex_AM_Prepare*` hands out a buffer (the
//! client's or one of ours), `gex_AM_Commit*N` sends what was written.
//! One Prepare may be outstanding per thread, as the specification says.

use crate::am::{args, failed, local_completion, long_offset};
use crate::handlers::token;
use crate::state::{api, fatal};
use crate::types::{gex_AM_Arg_t, gex_Flags_t, Handle};
use std::cell::RefCell;
use std::ffi::{c_int, c_uint, c_void};

enum Dest {
    Rank(usize),
    Token(Handle),
}

struct Prepared {
    dest: Dest,
    long: bool,
    /// The client's buffer, or ours.
    client_buf: *const u8,
    own: Vec<u64>,
    size: usize,
    numargs: c_uint,
    dest_addr: *mut c_void,
}

impl Prepared {
    fn addr(&self) -> *mut c_void {
        if self.client_buf.is_null() {
            self.own.as_ptr() as *mut c_void
        } else {
            self.client_buf as *mut c_void
        }
    }
}

thread_local! {
    static PREPARED: RefCell<Option<Box<Prepared>>> = const { RefCell::new(None) };
}

/// The handle of the outstanding Prepare (its box's address).
fn sd_handle() -> Handle {
    PREPARED.with(|p| {
        p.borrow()
            .as_ref()
            .map_or(std::ptr::null_mut(), |b| &**b as *const Prepared as Handle)
    })
}

#[allow(clippy::too_many_arguments)]
fn prepare(
    call: &str,
    dest: Dest,
    long: bool,
    client_buf: *const c_void,
    least: usize,
    most: usize,
    dest_addr: *mut c_void,
    lc_opt: *mut Handle,
    numargs: c_uint,
) -> Handle {
    let a = api(call);
    if PREPARED.with(|p| p.borrow().is_some()) {
        fatal(
            call,
            "a previous gex_AM_Prepare* on this thread has not been committed",
        )
    }
    if numargs > 16 {
        fatal(
            call,
            &format!("numargs={numargs} is more than gex_AM_MaxArgs() (16)"),
        )
    }
    let max = if long {
        a.client.max_long()
    } else {
        a.client.max_medium()
    };
    if least > max {
        fatal(
            call,
            &format!("least_payload={least} exceeds the maximum of {max} bytes"),
        )
    }
    if most < least {
        fatal(
            call,
            &format!("most_payload={most} is less than least_payload={least}"),
        )
    }
    if client_buf.is_null() {
        if !lc_opt.is_null() {
            fatal(call, "lc_opt must be NULL when client_buf is NULL")
        }
    } else {
        local_completion(call, lc_opt, matches!(dest, Dest::Token(_)));
    }
    // Our own buffers for Longs are capped at `ALLOC_LONG` (what the
    // LEAST_ALLOC maximum says), or at `least` beyond it.
    let size = if long && client_buf.is_null() {
        most.min(max).min(least.max(crate::am_limits::ALLOC_LONG))
    } else {
        most.min(max)
    };
    let mut own = Vec::new();
    if client_buf.is_null() {
        // A buffer as large as the payload may be: its allocation failing
        // is a fatal error naming the sizes, not an abort of the process.
        if own.try_reserve_exact(size.div_ceil(8)).is_err() {
            fatal(
                call,
                &format!("cannot allocate {size} bytes for the payload (least_payload={least}, most_payload={most}): out of memory"),
            )
        }
        own.resize(size.div_ceil(8), 0u64);
    }
    PREPARED.with(|p| {
        *p.borrow_mut() = Some(Box::new(Prepared {
            dest,
            long,
            client_buf: client_buf as *const u8,
            own,
            size,
            numargs,
            dest_addr,
        }))
    });
    sd_handle()
}

/// `gex_AM_PrepareRequestMedium`.
#[no_mangle]
pub extern "C" fn gex_AM_PrepareRequestMedium(
    tm: Handle,
    rank: u32,
    client_buf: *const c_void,
    least: usize,
    most: usize,
    lc_opt: *mut Handle,
    _flags: gex_Flags_t,
    numargs: c_uint,
) -> Handle {
    const CALL: &str = "gex_AM_PrepareRequestMedium";
    let r = crate::team::tm_rank(api(CALL), CALL, tm, rank);
    prepare(
        CALL,
        Dest::Rank(r),
        false,
        client_buf,
        least,
        most,
        std::ptr::null_mut(),
        lc_opt,
        numargs,
    )
}

/// `gex_AM_PrepareReplyMedium`.
#[no_mangle]
pub extern "C" fn gex_AM_PrepareReplyMedium(
    tok: Handle,
    client_buf: *const c_void,
    least: usize,
    most: usize,
    lc_opt: *mut Handle,
    _flags: gex_Flags_t,
    numargs: c_uint,
) -> Handle {
    const CALL: &str = "gex_AM_PrepareReplyMedium";
    token(CALL, tok);
    prepare(
        CALL,
        Dest::Token(tok),
        false,
        client_buf,
        least,
        most,
        std::ptr::null_mut(),
        lc_opt,
        numargs,
    )
}

/// `gex_AM_PrepareRequestLong`.
#[no_mangle]
pub extern "C" fn gex_AM_PrepareRequestLong(
    tm: Handle,
    rank: u32,
    client_buf: *const c_void,
    least: usize,
    most: usize,
    dest_addr: *mut c_void,
    lc_opt: *mut Handle,
    _flags: gex_Flags_t,
    numargs: c_uint,
) -> Handle {
    const CALL: &str = "gex_AM_PrepareRequestLong";
    let r = crate::team::tm_rank(api(CALL), CALL, tm, rank);
    prepare(
        CALL,
        Dest::Rank(r),
        true,
        client_buf,
        least,
        most,
        dest_addr,
        lc_opt,
        numargs,
    )
}

/// `gex_AM_PrepareReplyLong`.
#[no_mangle]
pub extern "C" fn gex_AM_PrepareReplyLong(
    tok: Handle,
    client_buf: *const c_void,
    least: usize,
    most: usize,
    dest_addr: *mut c_void,
    lc_opt: *mut Handle,
    _flags: gex_Flags_t,
    numargs: c_uint,
) -> Handle {
    const CALL: &str = "gex_AM_PrepareReplyLong";
    token(CALL, tok);
    prepare(
        CALL,
        Dest::Token(tok),
        true,
        client_buf,
        least,
        most,
        dest_addr,
        lc_opt,
        numargs,
    )
}

fn check_sd(call: &str, sd: Handle) {
    if sd.is_null() || sd != sd_handle() {
        fatal(call, &format!("sd={sd:p} is not the source descriptor of this thread's outstanding gex_AM_Prepare*"))
    }
}

/// `gex_AM_SrcDescAddr`.
#[no_mangle]
pub extern "C" fn gex_AM_SrcDescAddr(sd: Handle) -> *mut c_void {
    check_sd("gex_AM_SrcDescAddr", sd);
    PREPARED.with(|p| {
        p.borrow()
            .as_ref()
            .map_or(std::ptr::null_mut(), |b| b.addr())
    })
}

/// `gex_AM_SrcDescSize`.
#[no_mangle]
pub extern "C" fn gex_AM_SrcDescSize(sd: Handle) -> usize {
    check_sd("gex_AM_SrcDescSize", sd);
    PREPARED.with(|p| p.borrow().as_ref().map_or(0, |b| b.size))
}

const COMMITS: [&str; 4] = [
    "gex_AM_CommitRequestMedium",
    "gex_AM_CommitReplyMedium",
    "gex_AM_CommitRequestLong",
    "gex_AM_CommitReplyLong",
];

/// The Commit families (`kind`: 0 request Medium, 1 reply Medium, 2
/// request Long, 3 reply Long).
#[no_mangle]
pub extern "C" fn gasnetc_AM_Commit(
    sd: Handle,
    handler: u8,
    nbytes: usize,
    dest_addr: *mut c_void,
    kind: c_int,
    nargs: c_uint,
    argv: *const gex_AM_Arg_t,
) {
    let call = COMMITS
        .get(kind as usize)
        .copied()
        .unwrap_or("gex_AM_Commit");
    check_sd(call, sd);
    let Some(p) = PREPARED.with(|p| p.borrow_mut().take()) else {
        fatal(call, "no outstanding gex_AM_Prepare*")
    };
    let long = kind >= 2;
    let reply = kind % 2 == 1;
    if long != p.long || reply != matches!(p.dest, Dest::Token(_)) {
        fatal(
            call,
            "the Commit does not match the Prepare's category (request/reply, Medium/Long)",
        )
    }
    if nargs != p.numargs {
        fatal(
            call,
            &format!(
                "{nargs} arguments, but the Prepare announced numargs={}",
                p.numargs
            ),
        )
    }
    if nbytes > p.size {
        fatal(
            call,
            &format!("nbytes={nbytes} exceeds gex_AM_SrcDescSize()={}", p.size),
        )
    }
    if long && !p.dest_addr.is_null() && p.dest_addr != dest_addr {
        fatal(
            call,
            &format!(
                "dest_addr={dest_addr:p} differs from the {:p} given to the Prepare",
                p.dest_addr
            ),
        )
    }
    let args = args(call, nargs, argv);
    // SAFETY: the buffer (the client's, readable until local completion,
    // which the send reaches before returning; or ours) holds at least
    // `size` >= nbytes bytes.
    let payload = unsafe { std::slice::from_raw_parts(p.addr() as *const u8, nbytes) };
    let a = api(call);
    let r = match p.dest {
        Dest::Rank(r) if long => {
            let off = long_offset(a, call, r, dest_addr, nbytes);
            a.client.request_long(r, handler, args, payload, off)
        }
        Dest::Rank(r) => a.client.request_medium(r, handler, args, payload),
        Dest::Token(t) => {
            let t = token(call, t);
            // SAFETY: `token` checked it is the running handler's.
            let ct = unsafe { t.conduit() };
            if long {
                let off = long_offset(a, call, ct.source(), dest_addr, nbytes);
                ct.reply_long(handler, args, payload, off)
            } else {
                ct.reply_medium(handler, args, payload)
            }
        }
    };
    if let Err(e) = r {
        failed(call, &e)
    }
}
