//! Start-up, segment attach, job queries, exit, error names, wait mode.

use crate::state::{self, api, check_tm, error_return, fatal, handle, Api};
use crate::types::consts::*;
use crate::types::{gex_Flags_t, gex_RankInfo_t, gex_Rank_t, Handle};
use conduit::client::{Client, Options, WaitMode};
use std::cell::{Cell, RefCell};
use std::ffi::{c_char, c_int, c_void, CStr};

extern "C" {
    // glibc: like atexit, with the status passed to exit().
    fn on_exit(f: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

/// Returning from `main` (or calling `exit`) without `gasnet_exit`: the
/// job exits collectively with that status, as GASNet's conduits do.
extern "C" fn exit_hook(status: c_int, _: *mut c_void) {
    if let Some(a) = state::try_api() {
        a.client.exit(status)
    }
}

fn check_name(name: *const c_char) -> Result<(), String> {
    if name.is_null() {
        return Err("clientName is NULL".into());
    }
    // SAFETY: GASNet-EX requires clientName to be a NUL-terminated string.
    let s = unsafe { CStr::from_ptr(name) }.to_string_lossy();
    // The specification's pattern is [A-Z][A-Z0-9_]+; lower case is
    // accepted too, as GASNet-EX accepts the names its own tests pass
    // ("testam", "testhello").
    let mut chars = s.chars();
    let ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && s.len() >= 2
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "clientName \"{s}\" does not match [A-Za-z][A-Za-z0-9_]+ (the specification's \
             [A-Z][A-Z0-9_]+, lower case accepted too)"
        ))
    }
}

/// `gex_Client_Init`: start the conduit (collective).
#[no_mangle]
pub extern "C" fn gex_Client_Init(
    client_p: *mut Handle,
    ep_p: *mut Handle,
    tm_p: *mut Handle,
    clientName: *const c_char,
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_Client_Init";
    for (p, n) in [(client_p, "client_p"), (ep_p, "ep_p"), (tm_p, "tm_p")] {
        if p.is_null() {
            return error_return(CALL, GASNET_ERR_BAD_ARG, &format!("{n} is NULL"));
        }
    }
    if let Err(why) = check_name(clientName) {
        return error_return(CALL, GASNET_ERR_BAD_ARG, &why);
    }
    if flags & !FLAG_USES_GASNET1 != 0 {
        return error_return(
            CALL,
            GASNET_ERR_BAD_ARG,
            &format!("flags=0x{flags:x}: only 0 or GEX_FLAG_USES_GASNET1 is accepted"),
        );
    }
    if state::initialised() {
        return error_return(
            CALL,
            GASNET_ERR_RESOURCE,
            "the client is already initialised (one client per process)",
        );
    }
    let client = match Client::init_with(Options::new(())) {
        Ok(c) => c,
        Err(e) => return error_return(CALL, GASNET_ERR_RESOURCE, &e.report()),
    };
    let hosts = client.hosts();
    let host_ranks = hosts
        .local_ranks()
        .iter()
        .map(|&r| gex_RankInfo_t {
            gex_jobrank: r as u32,
        })
        .collect();
    let nbrhd_ranks = client
        .supernode()
        .into_iter()
        .map(|r| gex_RankInfo_t {
            gex_jobrank: r as u32,
        })
        .collect();
    // SAFETY: check_name read it as a NUL-terminated string already.
    let name = unsafe { CStr::from_ptr(clientName) }.to_owned();
    state::install(Api {
        client,
        name,
        flags,
        segs: RefCell::new(Vec::new()),
        events: RefCell::default(),
        nbi_puts: RefCell::default(),
        nbi_gets: RefCell::default(),
        legacy: Cell::new(None),
        host_ranks,
        nbrhd_ranks,
        world: std::cell::OnceCell::new(),
        teams: RefCell::default(),
        colls: RefCell::default(),
        ads: RefCell::default(),
        cdata: Default::default(),
        region: RefCell::default(),
        regions: RefCell::default(),
    });
    // SAFETY: registers a function pointer with glibc; exit_hook lives as
    // long as the program.
    unsafe { on_exit(exit_hook, std::ptr::null_mut()) };
    // SAFETY: the three pointers were checked non-NULL above; GASNet-EX
    // requires them to point to writable handles.
    unsafe {
        *client_p = handle(&state::CLIENT_OBJ);
        *ep_p = handle(&state::EP_OBJ);
        *tm_p = handle(&state::TM_OBJ);
    }
    GASNET_OK
}

/// `gex_Segment_Attach`: allocate, register and publish this rank's
/// segment of `size` bytes (rounded up to the page size; collective).
#[no_mangle]
pub extern "C" fn gex_Segment_Attach(segment_p: *mut Handle, tm: Handle, size: usize) -> c_int {
    const CALL: &str = "gex_Segment_Attach";
    let a = api(CALL);
    crate::team::not_pair(CALL, tm);
    check_tm(CALL, tm);
    if segment_p.is_null() {
        return error_return(CALL, GASNET_ERR_BAD_ARG, "segment_p is NULL");
    }
    if !a.segs.borrow().is_empty() {
        return error_return(CALL, GASNET_ERR_RESOURCE, "a segment is already attached");
    }
    let page = 4096usize;
    let Some(len) = size.checked_next_multiple_of(page) else {
        return error_return(
            CALL,
            GASNET_ERR_BAD_ARG,
            &format!("size={size} is too large"),
        );
    };
    if let Err(e) = a.client.attach_segment(len.max(page)) {
        return error_return(
            CALL,
            GASNET_ERR_RESOURCE,
            &format!("size={size}: {}", e.report()),
        );
    }
    let mut segs = Vec::with_capacity(a.client.size());
    for r in 0..a.client.size() {
        match a.client.segment_info(r) {
            Ok(s) => segs.push(s),
            Err(e) => fatal(CALL, &e.report()),
        }
    }
    *a.segs.borrow_mut() = segs;
    // SAFETY: checked non-NULL; GASNet-EX requires a writable handle.
    unsafe { *segment_p = handle(&state::SEGMENT_OBJ) };
    GASNET_OK
}

/// `gex_System_QueryJobRank`.
#[no_mangle]
pub extern "C" fn gex_System_QueryJobRank() -> gex_Rank_t {
    api("gex_System_QueryJobRank").client.rank() as gex_Rank_t
}

/// `gex_System_QueryJobSize`.
#[no_mangle]
pub extern "C" fn gex_System_QueryJobSize() -> gex_Rank_t {
    api("gex_System_QueryJobSize").client.size() as gex_Rank_t
}

fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: a non-NULL output pointer must be writable (GASNet-EX: each
        // may be NULL when the value is not wanted).
        unsafe { *p = v };
    }
}

/// `gex_System_QueryMyPosition`: a neighbourhood is a supernode (the
/// ranks that share memory; each rank alone with
/// `GASNET_SUPERNODE_MAXSIZE=1`).
#[no_mangle]
pub extern "C" fn gex_System_QueryMyPosition(
    nbrhd_set_size: *mut gex_Rank_t,
    nbrhd_set_rank: *mut gex_Rank_t,
    host_set_size: *mut gex_Rank_t,
    host_set_rank: *mut gex_Rank_t,
) {
    let c = &api("gex_System_QueryMyPosition").client;
    let n = c.neighbourhood();
    put(nbrhd_set_size, n.count as u32);
    put(nbrhd_set_rank, n.index as u32);
    let h = c.hosts();
    put(host_set_size, h.nhosts() as u32);
    put(host_set_rank, h.my_host() as u32);
}

/// `gex_System_QueryNbrhdInfo`: this rank's supernode, in rank order.
#[no_mangle]
pub extern "C" fn gex_System_QueryNbrhdInfo(
    info_p: *mut *const gex_RankInfo_t,
    info_count_p: *mut gex_Rank_t,
    my_info_index_p: *mut gex_Rank_t,
) {
    let a = api("gex_System_QueryNbrhdInfo");
    let me = a.client.rank() as u32;
    put(info_p, a.nbrhd_ranks.as_ptr());
    put(info_count_p, a.nbrhd_ranks.len() as u32);
    put(
        my_info_index_p,
        a.nbrhd_ranks
            .iter()
            .position(|i| i.gex_jobrank == me)
            .unwrap_or(0) as u32,
    );
}

/// `gex_System_QueryHostInfo`.
#[no_mangle]
pub extern "C" fn gex_System_QueryHostInfo(
    info_p: *mut *const gex_RankInfo_t,
    info_count_p: *mut gex_Rank_t,
    my_info_index_p: *mut gex_Rank_t,
) {
    let a = api("gex_System_QueryHostInfo");
    put(info_p, a.host_ranks.as_ptr());
    put(info_count_p, a.host_ranks.len() as u32);
    put(my_info_index_p, a.client.hosts().local_index() as u32);
}

/// `gex_EP_QueryBoundSegmentNB`: the segment of `rank` (known locally
/// since attach, so always complete: returns GEX_EVENT_INVALID). Its local
/// address is where this process maps it: its own, and a supernode
/// member's (shared memory); NULL for other ranks.
#[no_mangle]
pub extern "C" fn gex_EP_QueryBoundSegmentNB(
    tm: Handle,
    rank: gex_Rank_t,
    owneraddr_p: *mut *mut c_void,
    localaddr_p: *mut *mut c_void,
    size_p: *mut usize,
    _flags: gex_Flags_t,
) -> Handle {
    const CALL: &str = "gex_EP_QueryBoundSegmentNB";
    let a = api(CALL);
    let r = crate::team::tm_rank(a, CALL, tm, rank);
    let segs = a.segs.borrow();
    let (owner, local, size) = match segs.get(r) {
        Some(s) => {
            let local = if r == a.client.rank() {
                s.base as *mut c_void
            } else {
                a.client
                    .shared_segment(r)
                    .map_or(std::ptr::null_mut(), |(p, _)| p.cast())
            };
            (s.base as *mut c_void, local, s.size as usize)
        }
        None => (std::ptr::null_mut(), std::ptr::null_mut(), 0),
    };
    put(owneraddr_p, owner);
    put(localaddr_p, local);
    put(size_p, size);
    std::ptr::null_mut()
}

/// `gasnet_exit`: end the job with `exitcode` (every rank exits).
#[no_mangle]
pub extern "C" fn gasnet_exit(exitcode: c_int) -> ! {
    match state::try_api() {
        Some(a) => a.client.exit(exitcode),
        None => {
            // SAFETY: flush C's streams, then end the process (no client).
            unsafe {
                libc::fflush(std::ptr::null_mut());
                libc::_exit(exitcode)
            }
        }
    }
}

/// The name of a GASNet error code.
pub(crate) fn error_name(code: i32) -> &'static str {
    match code {
        GASNET_OK => "GASNET_OK",
        GASNET_ERR_NOT_INIT => "GASNET_ERR_NOT_INIT",
        GASNET_ERR_RESOURCE => "GASNET_ERR_RESOURCE",
        GASNET_ERR_BAD_ARG => "GASNET_ERR_BAD_ARG",
        GASNET_ERR_NOT_READY => "GASNET_ERR_NOT_READY",
        GASNET_ERR_BARRIER_MISMATCH => "GASNET_ERR_BARRIER_MISMATCH",
        _ => "*unknown*",
    }
}

/// The description of a GASNet error code.
pub(crate) fn error_desc(code: i32) -> &'static str {
    match code {
        GASNET_OK => "No error",
        GASNET_ERR_NOT_INIT => "GASNet message layer not initialized",
        GASNET_ERR_RESOURCE => "Problem with requested resource",
        GASNET_ERR_BAD_ARG => "Invalid function parameter passed",
        GASNET_ERR_NOT_READY => "Non-blocking operation not complete",
        GASNET_ERR_BARRIER_MISMATCH => "Barrier id's mismatched",
        _ => "no description available",
    }
}

fn c_str(s: &'static str) -> *const c_char {
    // The names are static; their NUL-terminated copies are made once.
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static TABLE: OnceLock<Mutex<HashMap<&'static str, &'static CStr>>> = OnceLock::new();
    let mut t = TABLE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner());
    let c = t.entry(s).or_insert_with(|| {
        let owned = std::ffi::CString::new(s).unwrap_or_default();
        Box::leak(owned.into_boxed_c_str())
    });
    c.as_ptr()
}

/// `gasnet_ErrorName`.
#[no_mangle]
pub extern "C" fn gasnet_ErrorName(errval: c_int) -> *const c_char {
    c_str(error_name(errval))
}

/// `gasnet_ErrorDesc`.
#[no_mangle]
pub extern "C" fn gasnet_ErrorDesc(errval: c_int) -> *const c_char {
    c_str(error_desc(errval))
}

/// `gasnet_set_waitmode`: GASNET_WAIT_SPIN spins in waits; BLOCK and
/// SPINBLOCK yield the CPU after polls that found nothing.
#[no_mangle]
pub extern "C" fn gasnet_set_waitmode(wait_mode: c_int) -> c_int {
    const CALL: &str = "gasnet_set_waitmode";
    let a = api(CALL);
    let m = match wait_mode {
        WAIT_SPIN => WaitMode::Spin,
        WAIT_BLOCK | WAIT_SPINBLOCK => WaitMode::Yield,
        _ => {
            return error_return(
                CALL,
                GASNET_ERR_BAD_ARG,
                &format!(
                    "wait_mode={wait_mode}: accepted are GASNET_WAIT_SPIN (0), GASNET_WAIT_BLOCK (1), GASNET_WAIT_SPINBLOCK (2)"
                ),
            )
        }
    };
    a.client.set_wait_mode(m);
    GASNET_OK
}
