//! GASNet-1's collectives prototype, the part provided: `gasnet_coll_init`
//! and `gasnet_coll_broadcast{,_nb}` over GASNet-EX's broadcast and
//! barrier (the rest of `gasnet_coll.h`'s GASNet-1 half is macros). One
//! image per node (the SEQ library): images are nodes, or team ranks on
//! a team other than `GASNET_TEAM_ALL`.
//!
//! The flags are checked as GASNet-1's collective notes define them:
//! exactly one of each of `IN_{NO,MY,ALL}SYNC`, `OUT_{NO,MY,ALL}SYNC` and
//! `SINGLE`/`LOCAL`. Every node's `dst` is written by that node, and the
//! root's `src` is read by the root, each inside its own call, so NOSYNC
//! and MYSYNC hold as they are; `IN_ALLSYNC` waits in a barrier before
//! the data moves and `OUT_ALLSYNC` in one after. With `SINGLE` every node
//! passes the same addresses, used as the address on each node (the
//! notes' definition), which is what `LOCAL` does with its own.

use crate::barrier::gex_Coll_BarrierBlocking;
use crate::coll::gex_Coll_BroadcastNB;
use crate::rma::gex_Event_Wait;
use crate::state::{api, fatal, handle, TM_OBJ};
use crate::team::team;
use crate::types::{gex_Rank_t, Handle};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

/// `GASNET_COLL_*` flag bits (gasnet_coll.h's values, GASNet-1's).
pub mod flags {
    /// `GASNET_COLL_IN_NOSYNC`.
    pub const IN_NOSYNC: u32 = 1 << 0;
    /// `GASNET_COLL_IN_MYSYNC`.
    pub const IN_MYSYNC: u32 = 1 << 1;
    /// `GASNET_COLL_IN_ALLSYNC`.
    pub const IN_ALLSYNC: u32 = 1 << 2;
    /// `GASNET_COLL_OUT_NOSYNC`.
    pub const OUT_NOSYNC: u32 = 1 << 3;
    /// `GASNET_COLL_OUT_MYSYNC`.
    pub const OUT_MYSYNC: u32 = 1 << 4;
    /// `GASNET_COLL_OUT_ALLSYNC`.
    pub const OUT_ALLSYNC: u32 = 1 << 5;
    /// `GASNET_COLL_SINGLE`.
    pub const SINGLE: u32 = 1 << 6;
    /// `GASNET_COLL_LOCAL`.
    pub const LOCAL: u32 = 1 << 7;
    /// `GASNET_COLL_AGGREGATE`.
    pub const AGGREGATE: u32 = 1 << 8;
    /// `GASNET_COLL_DST_IN_SEGMENT`.
    pub const DST_IN_SEGMENT: u32 = 1 << 10;
    /// `GASNET_COLL_SRC_IN_SEGMENT`.
    pub const SRC_IN_SEGMENT: u32 = 1 << 11;
}
use flags::*;

static INITIALISED: AtomicBool = AtomicBool::new(false);

/// `gasnet_coll_init`: collective, once, after `gasnet_attach`. `images`
/// must be NULL (one image per node, as GASNet-1 requires in a SEQ
/// configuration); `fn_tbl` is for the reductions, which this library does
/// not provide, and is not read.
#[no_mangle]
pub extern "C" fn gasnet_coll_init(
    images: *const u32,
    _my_image: u32,
    _fn_tbl: *const c_void,
    _fn_count: usize,
    init_flags: c_int,
) {
    const CALL: &str = "gasnet_coll_init";
    api(CALL);
    if !images.is_null() {
        fatal(
            CALL,
            "images is not NULL: this is a GASNET_SEQ library, one image per node (pass NULL)",
        )
    }
    if init_flags != 0 {
        fatal(
            CALL,
            &format!("init_flags={init_flags}: no initialisation flags are defined (pass 0)"),
        )
    }
    if INITIALISED.swap(true, Ordering::AcqRel) {
        fatal(CALL, "called a second time (it is called once per node)")
    }
    // Collective: every node has called it before any collective of
    // theirs runs.
    gex_Coll_BarrierBlocking(handle(&TM_OBJ), 0);
}

/// The synchronisation `flags` ask for: (barrier before, barrier after); a
/// fatal error names a combination GASNet-1 does not define.
fn sync_of(call: &str, flags: c_int) -> (bool, bool) {
    let f = flags as u32;
    let known = IN_NOSYNC
        | IN_MYSYNC
        | IN_ALLSYNC
        | OUT_NOSYNC
        | OUT_MYSYNC
        | OUT_ALLSYNC
        | SINGLE
        | LOCAL
        | AGGREGATE
        | DST_IN_SEGMENT
        | SRC_IN_SEGMENT;
    let one = |bits: u32, what: &str| {
        if (f & bits).count_ones() != 1 {
            fatal(
                call,
                &format!("flags=0x{f:x} must hold exactly one of {what}"),
            )
        }
    };
    if f & !known != 0 {
        fatal(
            call,
            &format!(
                "flags=0x{f:x} has bits that are not GASNET_COLL_* flags of the broadcast (0x{:x})",
                f & !known
            ),
        )
    }
    one(
        IN_NOSYNC | IN_MYSYNC | IN_ALLSYNC,
        "GASNET_COLL_IN_NOSYNC, _IN_MYSYNC, _IN_ALLSYNC",
    );
    one(
        OUT_NOSYNC | OUT_MYSYNC | OUT_ALLSYNC,
        "GASNET_COLL_OUT_NOSYNC, _OUT_MYSYNC, _OUT_ALLSYNC",
    );
    one(SINGLE | LOCAL, "GASNET_COLL_SINGLE, GASNET_COLL_LOCAL");
    (f & IN_ALLSYNC != 0, f & OUT_ALLSYNC != 0)
}

fn broadcast(
    call: &str,
    tm: Handle,
    dst: *mut c_void,
    srcimage: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) {
    let a = api(call);
    if !INITIALISED.load(Ordering::Acquire) {
        fatal(
            call,
            "gasnet_coll_init has not been called (GASNet-1 requires it before any gasnet_coll_* call)",
        )
    }
    let (before, after) = sync_of(call, flags);
    if nbytes == 0 {
        fatal(
            call,
            "nbytes=0: GASNet-1's collectives move at least one byte per block",
        )
    }
    // Checks the team handle (a fatal error names a bad one).
    let t = team(a, call, tm);
    if srcimage as usize >= t.size() {
        fatal(
            call,
            &format!(
                "srcimage={srcimage} is not an image of the team (0..{})",
                t.size()
            ),
        )
    }
    if before {
        gex_Coll_BarrierBlocking(tm, 0);
    }
    gex_Event_Wait(gex_Coll_BroadcastNB(
        tm,
        srcimage as gex_Rank_t,
        dst,
        src,
        nbytes,
        0,
    ));
    if after {
        gex_Coll_BarrierBlocking(tm, 0);
    }
}

/// `gasnet_coll_broadcast`: `nbytes` from `src` on image `srcimage` to
/// `dst` on every image of `team`.
#[no_mangle]
pub extern "C" fn gasnet_coll_broadcast(
    team: Handle,
    dst: *mut c_void,
    srcimage: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) {
    broadcast(
        "gasnet_coll_broadcast",
        team,
        dst,
        srcimage,
        src,
        nbytes,
        flags,
    )
}

/// `gasnet_coll_broadcast_nb`: as `gasnet_coll_broadcast`, complete when
/// it returns (`GASNET_COLL_INVALID_HANDLE`, which GASNet-1 allows for an
/// operation already complete).
#[no_mangle]
pub extern "C" fn gasnet_coll_broadcast_nb(
    team: Handle,
    dst: *mut c_void,
    srcimage: u32,
    src: *mut c_void,
    nbytes: usize,
    flags: c_int,
) -> Handle {
    broadcast(
        "gasnet_coll_broadcast_nb",
        team,
        dst,
        srcimage,
        src,
        nbytes,
        flags,
    );
    std::ptr::null_mut()
}
