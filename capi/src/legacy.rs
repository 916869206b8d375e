//! GASNet-1's core API (`gasnet.h`): `gasnet_init`, `gasnet_attach` with
//! its handler table, segment information and message sources. The rest
//! of GASNet-1 (AMs, puts and gets, syncs, HSLs, node queries) is macros
//! and inline functions in `gasnet.h` over the GASNet-EX calls, on the
//! primordial team, as GASNet-EX's own legacy layer does.

use crate::handlers::CToken;
use crate::state::{
    self, api, error_return, fatal, handle, CLIENT_OBJ, EP_OBJ, SEGMENT_OBJ, TM_OBJ,
};
use crate::types::consts::*;
use crate::types::{gex_AM_Entry_t, Handle};
use conduit::client::{Handler, Payload, Token};
use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

/// One entry of `gasnet_attach`'s table (`gasnet_handlerentry_t`).
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct gasnet_handlerentry_t {
    /// The index (0: any free one, written back), 128..255.
    pub index: u8,
    /// The handler.
    pub fnptr: Option<unsafe extern "C" fn()>,
}

/// One rank's segment (`gasnet_seginfo_t`, declared in gasnetex.h).
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct gasnet_seginfo_t {
    /// Base address in the owner's address space.
    pub addr: *mut c_void,
    /// Length in bytes.
    pub size: usize,
}

/// One rank's place (`gasnet_nodeinfo_t`).
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct gasnet_nodeinfo_t {
    /// Its host's index.
    pub host: u32,
    /// Its supernode's index.
    pub supernode: u32,
    /// What to add to its segment addresses for where they are mapped in
    /// this process (0 when they are not).
    pub offset: usize,
}

/// `gasnet_init` returned.
static INITIALISED: AtomicBool = AtomicBool::new(false);

/// `gasnet_init`: `gex_Client_Init` with the name `GASNET1` and
/// `GEX_FLAG_USES_GASNET1`; collective.
#[no_mangle]
pub extern "C" fn gasnet_init(argc: *mut c_int, argv: *mut *mut *mut c_char) -> c_int {
    const CALL: &str = "gasnet_init";
    if state::initialised() {
        return error_return(CALL, GASNET_ERR_NOT_INIT, "GASNet is already initialised");
    }
    let (mut c, mut e, mut t) = (
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    let rc = crate::start::gex_Client_Init(
        &mut c,
        &mut e,
        &mut t,
        c"GASNET1".as_ptr(),
        argc,
        argv,
        FLAG_USES_GASNET1,
    );
    if rc != GASNET_OK {
        return rc;
    }
    INITIALISED.store(true, Ordering::Release);
    GASNET_OK
}

/// `gasnet_getNodeInfo`: the first `numentries` ranks' host and supernode
/// indices, and (after `gasnet_attach`) the offset from a supernode
/// member's segment addresses to where its segment is mapped here.
#[no_mangle]
pub extern "C" fn gasnet_getNodeInfo(
    nodeinfo_table: *mut gasnet_nodeinfo_t,
    numentries: c_int,
) -> c_int {
    const CALL: &str = "gasnet_getNodeInfo";
    let a = api(CALL);
    if !INITIALISED.load(Ordering::Acquire) {
        return error_return(CALL, GASNET_ERR_NOT_INIT, "called before gasnet_init");
    }
    if let Some(rc) = bad_table(CALL, "nodeinfo_table", nodeinfo_table, numentries) {
        return rc;
    }
    let segs = a.segs.borrow();
    let hosts = a.client.hosts();
    for r in 0..(numentries as usize).min(a.client.size()) {
        let supernode = a.client.neighbourhood_of(r).unwrap_or(0) as u32;
        let offset = match (segs.get(r), a.client.shared_segment(r)) {
            (Some(s), Some((local, _))) => (local as usize).wrapping_sub(s.base as usize),
            _ => 0,
        };
        // SAFETY: checked non-NULL; GASNet-1 requires `numentries` writable
        // entries and `r < numentries`.
        unsafe {
            *nodeinfo_table.add(r) = gasnet_nodeinfo_t {
                host: hosts.host_of(r).unwrap_or(0) as u32,
                supernode,
                offset,
            }
        };
    }
    GASNET_OK
}

/// GASNET_ERR_BAD_ARG (reported) for a negative count or a NULL table
/// with entries; `None` when the pair is usable.
fn bad_table<T>(call: &str, name: &str, p: *mut T, numentries: c_int) -> Option<c_int> {
    (numentries < 0 || (numentries > 0 && p.is_null())).then(|| {
        error_return(
            call,
            GASNET_ERR_BAD_ARG,
            &format!("{name}={p:p} with numentries={numentries}"),
        )
    })
}

/// `gasnet_getMaxLocalSegmentSize`: the largest `segsize` this rank may
/// attach (`GASNET_MAX_SEGSIZE`), in whole pages.
#[no_mangle]
pub extern "C" fn gasnet_getMaxLocalSegmentSize() -> usize {
    api("gasnet_getMaxLocalSegmentSize")
        .client
        .max_segment_size()
}

/// `gasnet_getMaxGlobalSegmentSize`: the smallest of every rank's
/// `gasnet_getMaxLocalSegmentSize`.
#[no_mangle]
pub extern "C" fn gasnet_getMaxGlobalSegmentSize() -> usize {
    api("gasnet_getMaxGlobalSegmentSize")
        .client
        .max_global_segment_size()
}

/// The conduit handler for one GASNet-1 entry: any category, side and
/// argument count; the C code is called with the Short or the Medium/Long
/// signature as the message says.
/// Also returns the entry `gex_Token_Info` reports (its index is set once
/// registration has chosen it).
fn legacy_handler(f: unsafe extern "C" fn()) -> (Handler<()>, *mut gex_AM_Entry_t) {
    let entry: *mut gex_AM_Entry_t = Box::leak(Box::new(gex_AM_Entry_t {
        gex_index: 0,
        gex_fnptr: Some(f),
        gex_flags: 0,
        gex_nargs: 0,
        gex_cdata: std::ptr::null(),
        gex_name: std::ptr::null(),
    }));
    let e = entry as usize;
    let h = Handler::untyped(
        move |t: &mut Token<'_, ()>, a: &[u32], p: Option<Payload<'_>>| match p {
            None => crate::handlers::run_short(f, e, t, a),
            Some(p) => crate::handlers::run_payload(f, e, t, a, p.as_ptr(), p.len()),
        },
    );
    (h, entry)
}

/// `gasnet_attach`: register the handler table (an index of 0 gets a free
/// one, written back) and attach a segment of `segsize` bytes (a multiple
/// of `GASNET_PAGESIZE`); collective. `minheapoffset` does not apply (the
/// segment is mapped where the system places it).
#[no_mangle]
pub extern "C" fn gasnet_attach(
    table: *mut gasnet_handlerentry_t,
    numentries: c_int,
    segsize: usize,
    _minheapoffset: usize,
) -> c_int {
    const CALL: &str = "gasnet_attach";
    let a = api(CALL);
    if let Some(rc) = bad_table(CALL, "table", table, numentries) {
        return rc;
    }
    if segsize % PAGESIZE != 0 {
        return error_return(
            CALL,
            GASNET_ERR_BAD_ARG,
            &format!("segsize={segsize} is not a multiple of GASNET_PAGESIZE ({PAGESIZE})"),
        );
    }
    let t: &mut [gasnet_handlerentry_t] = if numentries == 0 {
        &mut []
    } else {
        // SAFETY: checked non-NULL; GASNet-1 requires `numentries` entries,
        // of which only `index` is written.
        unsafe { std::slice::from_raw_parts_mut(table, numentries as usize) }
    };
    for (i, e) in t.iter().enumerate() {
        if e.fnptr.is_none() {
            return error_return(
                CALL,
                GASNET_ERR_BAD_ARG,
                &format!("table[{i}].fnptr is NULL"),
            );
        }
        if e.index != 0 && e.index < 128 {
            return error_return(
                CALL,
                GASNET_ERR_BAD_ARG,
                &format!(
                    "table[{i}].index={} is outside the client's range (0 to assign one, or 128..255)",
                    e.index
                ),
            );
        }
    }
    // Fixed indices first, then the "don't care" ones in table order.
    for fixed in [true, false] {
        for (i, e) in t.iter_mut().enumerate() {
            if (e.index != 0) != fixed {
                continue;
            }
            let (h, entry) = legacy_handler(e.fnptr.expect("checked above"));
            match a.client.register(e.index, h) {
                Ok(idx) => {
                    e.index = idx;
                    // SAFETY: `entry` is the leaked box made above; no
                    // handler has run yet, so nothing reads it meanwhile.
                    unsafe { (*entry).gex_index = idx };
                }
                Err(err) => {
                    return error_return(
                        CALL,
                        GASNET_ERR_BAD_ARG,
                        &format!("table[{i}]: {}", err.report()),
                    )
                }
            }
        }
    }
    let mut seg = std::ptr::null_mut();
    crate::start::gex_Segment_Attach(&mut seg, handle(&TM_OBJ), segsize.max(PAGESIZE))
}

/// `gasnet_getSegmentInfo`: the first `numentries` ranks' segments (base
/// in the owner's address space, and length); an error before
/// `gasnet_attach`.
#[no_mangle]
pub extern "C" fn gasnet_getSegmentInfo(
    seginfo_table: *mut gasnet_seginfo_t,
    numentries: c_int,
) -> c_int {
    const CALL: &str = "gasnet_getSegmentInfo";
    let a = api(CALL);
    let segs = a.segs.borrow();
    if segs.is_empty() {
        return error_return(CALL, GASNET_ERR_NOT_INIT, "called before gasnet_attach");
    }
    if let Some(rc) = bad_table(CALL, "seginfo_table", seginfo_table, numentries) {
        return rc;
    }
    let n = (numentries as usize).min(segs.len());
    for (r, s) in segs.iter().take(n).enumerate() {
        // SAFETY: checked non-NULL; GASNet-1 requires `numentries` writable
        // entries and `r < numentries`.
        unsafe {
            *seginfo_table.add(r) = gasnet_seginfo_t {
                addr: s.base as *mut c_void,
                size: s.size as usize,
            }
        };
    }
    GASNET_OK
}

/// `gasnet_AMGetMsgSource`: the rank that sent the running handler's
/// message.
#[no_mangle]
pub extern "C" fn gasnet_AMGetMsgSource(token: Handle, srcindex: *mut u32) -> c_int {
    const CALL: &str = "gasnet_AMGetMsgSource";
    let ct: &mut CToken = crate::handlers::token(CALL, token);
    if srcindex.is_null() {
        fatal(CALL, "srcindex is NULL")
    }
    // SAFETY: the running handler's token (checked by `token`).
    let src = unsafe { ct.conduit() }.source();
    // SAFETY: checked non-NULL; GASNet-1 requires a writable node.
    unsafe { *srcindex = src as u32 };
    GASNET_OK
}

/// `gasnet_QueryGexObjects`: the GASNet-EX objects behind the GASNet-1
/// API (the segment is `GEX_SEGMENT_INVALID` before `gasnet_attach`).
#[no_mangle]
pub extern "C" fn gasnet_QueryGexObjects(
    client_p: *mut Handle,
    ep_p: *mut Handle,
    tm_p: *mut Handle,
    segment_p: *mut Handle,
) {
    const CALL: &str = "gasnet_QueryGexObjects";
    let a = api(CALL);
    let seg = if a.segs.borrow().is_empty() {
        std::ptr::null_mut()
    } else {
        handle(&SEGMENT_OBJ)
    };
    for (p, v) in [
        (client_p, handle(&CLIENT_OBJ)),
        (ep_p, handle(&EP_OBJ)),
        (tm_p, handle(&TM_OBJ)),
        (segment_p, seg),
    ] {
        if !p.is_null() {
            // SAFETY: a non-NULL output pointer is writable (GASNet-EX).
            unsafe { *p = v };
        }
    }
}

/// The primordial team, for `gasnet.h`'s macros (`GASNETC_TM1`).
#[no_mangle]
pub extern "C" fn gasnetc_legacy_tm() -> Handle {
    handle(&TM_OBJ)
}
