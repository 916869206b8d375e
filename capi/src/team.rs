//! Teams: the primordial team `gex_Client_Init` returns and the teams
//! `gex_TM_Split` and `gex_TM_Create` (`team_create`) make; `(tm, rank)`
//! to job rank and back.
//!
//! A split team's handle is the address of its [`TmObj`], which lives
//! until the process ends (`gex_TM_Destroy` releases the team's resources
//! and retires the handle: later calls naming it are fatal errors, and so
//! is waiting for a collective event of it left unsynced). A
//! handle is only ever looked up in the table of teams this process made,
//! never dereferenced as given.

use crate::am::failed;
use crate::state::{api, fatal, handle, Api, TM_OBJ};
use crate::types::consts::*;
use crate::types::{gex_Flags_t, gex_Rank_t, Handle};
use conduit::client::{Seq, Team};
use conduit::transport::ofi::{OfiTransport, Unsynced};
use std::cell::Cell;
use std::ffi::{c_int, c_void};

/// A team of the C API's client.
pub(crate) type CTeam = Team<'static, Seq, (), OfiTransport<Unsynced>>;

/// A team made by `gex_TM_Split` or `gex_TM_Create`.
pub(crate) struct TmObj {
    /// The team.
    pub team: CTeam,
    /// Retired by `gex_TM_Destroy`.
    pub destroyed: Cell<bool>,
    /// The scratch space the client granted (unused; handed back by
    /// `gex_TM_Destroy`).
    pub scratch: Option<(usize, usize)>,
    /// Client data (`gex_TM_SetCData`).
    pub cdata: Cell<*const c_void>,
    /// The flags `gex_TM_Split` or `gex_TM_Create` was given
    /// (`gex_TM_QueryFlags`).
    pub flags: gex_Flags_t,
}

/// The client-data cell of `tm` (the primordial team's, or a live split
/// team's).
pub(crate) fn cdata(a: &'static Api, call: &str, tm: Handle) -> &'static Cell<*const c_void> {
    if is_world(tm) {
        return &a.cdata[3];
    }
    team(a, call, tm);
    &split_team(a, tm).expect("team() checked it").cdata
}

/// The flags of the split team `tm` (a fatal error for a handle that is
/// not a live split team).
pub(crate) fn split_flags(a: &'static Api, call: &str, tm: Handle) -> gex_Flags_t {
    team(a, call, tm);
    split_team(a, tm).expect("team() checked it").flags
}

/// The primordial team (made at its first use).
pub(crate) fn world(a: &'static Api, call: &str) -> &'static CTeam {
    if let Some(t) = a.world.get() {
        return t;
    }
    match a.client.world() {
        Ok(t) => {
            let _ = a.world.set(t);
            a.world.get().expect("set above")
        }
        Err(e) => failed(call, &e),
    }
}

/// The team behind `tm`: the primordial team or a live split team; a
/// fatal error naming `tm` otherwise.
pub(crate) fn team(a: &'static Api, call: &str, tm: Handle) -> &'static CTeam {
    if tm == handle(&TM_OBJ) {
        return world(a, call);
    }
    not_pair(call, tm);
    match split_team(a, tm) {
        Some(t) if !t.destroyed.get() => &t.team,
        Some(_) => fatal(
            call,
            &format!("tm={tm:p} was destroyed (gex_TM_Destroy)"),
        ),
        None => fatal(
            call,
            &format!("tm={tm:p} is not the team returned by gex_Client_Init nor one made by gex_TM_Split or gex_TM_Create (GEX_TM_INVALID or a stale handle)"),
        ),
    }
}

/// The split team whose handle is `tm`, if this process made it.
fn split_team(a: &Api, tm: Handle) -> Option<&'static TmObj> {
    a.teams
        .borrow()
        .iter()
        .copied()
        .find(|t| std::ptr::eq(*t as *const TmObj as *const c_void, tm))
}

/// A fatal error when `tm` is the TM-pair, for the calls that need a team.
#[inline]
pub(crate) fn not_pair(call: &str, tm: Handle) {
    if is_pair(tm) {
        fatal(
            call,
            &format!("tm={tm:p} is a TM-pair (gex_TM_Pair), which names no team: it is valid only in point-to-point calls (gex_RMA_*, gex_VIS_*, gex_AM_*) and segment queries"),
        )
    }
}

/// Whether `tm` is the TM-pair of `gex_TM_Pair`.
#[inline]
pub(crate) fn is_pair(tm: Handle) -> bool {
    tm == handle(&crate::state::PAIR_OBJ)
}

/// Whether `tm` is the primordial team.
#[inline]
pub(crate) fn is_world(tm: Handle) -> bool {
    tm == handle(&TM_OBJ)
}

/// The job rank of `(tm, rank)`; a fatal error naming the rank and the
/// team's size when `rank` is not one of its ranks.
#[inline]
pub(crate) fn tm_rank(a: &'static Api, call: &str, tm: Handle, rank: gex_Rank_t) -> usize {
    if is_world(tm) || is_pair(tm) {
        // A TM-pair's rank argument is the peer's job rank.
        return crate::state::check_rank(a, call, rank);
    }
    let t = team(a, call, tm);
    match t.to_job(rank as usize) {
        Ok(j) => j,
        Err(_) => fatal(
            call,
            &format!(
                "rank={rank} is not a rank of team tm={tm:p} (0..{})",
                t.size()
            ),
        ),
    }
}

/// `gex_TM_QueryRank`.
#[no_mangle]
pub extern "C" fn gex_TM_QueryRank(tm: Handle) -> gex_Rank_t {
    const CALL: &str = "gex_TM_QueryRank";
    let a = api(CALL);
    if is_world(tm) {
        return a.client.rank() as gex_Rank_t;
    }
    team(a, CALL, tm).rank() as gex_Rank_t
}

/// `gex_TM_QuerySize`.
#[no_mangle]
pub extern "C" fn gex_TM_QuerySize(tm: Handle) -> gex_Rank_t {
    const CALL: &str = "gex_TM_QuerySize";
    let a = api(CALL);
    if is_world(tm) {
        return a.client.size() as gex_Rank_t;
    }
    team(a, CALL, tm).size() as gex_Rank_t
}

/// `gex_TM_TranslateRankToJobrank`.
#[no_mangle]
pub extern "C" fn gex_TM_TranslateRankToJobrank(tm: Handle, rank: gex_Rank_t) -> gex_Rank_t {
    const CALL: &str = "gex_TM_TranslateRankToJobrank";
    not_pair(CALL, tm);
    tm_rank(api(CALL), CALL, tm, rank) as gex_Rank_t
}

/// `gex_TM_TranslateJobrankToRank`: `GEX_RANK_INVALID` for a job rank
/// that is not a member.
#[no_mangle]
pub extern "C" fn gex_TM_TranslateJobrankToRank(tm: Handle, jobrank: gex_Rank_t) -> gex_Rank_t {
    const CALL: &str = "gex_TM_TranslateJobrankToRank";
    let a = api(CALL);
    crate::state::check_rank(a, CALL, jobrank);
    team(a, CALL, tm)
        .to_team(jobrank as usize)
        .map_or(RANK_INVALID, |r| r as gex_Rank_t)
}

/// `gex_TM_Split`: collective over `parent_tm`. Callers passing the same
/// non-negative `color` and a non-NULL `new_tm_p` form a team, ordered by
/// `key` then by their rank in the parent; a NULL `new_tm_p` (or a
/// negative color) joins no team. With `GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED`
/// it is a query and returns 0 (the conduit's collectives keep their own
/// memory; scratch space given to a split is not used, and a split given
/// none, with or without `GEX_FLAG_TM_NO_SCRATCH`, is fine).
#[no_mangle]
pub extern "C" fn gex_TM_Split(
    new_tm_p: *mut Handle,
    parent_tm: Handle,
    color: c_int,
    key: c_int,
    scratch_addr: *mut c_void,
    scratch_size: usize,
    flags: gex_Flags_t,
) -> usize {
    const CALL: &str = "gex_TM_Split";
    let a = api(CALL);
    let parent = team(a, CALL, parent_tm);
    if flags & (FLAG_TM_SCRATCH_SIZE_RECOMMENDED | FLAG_TM_SCRATCH_SIZE_MIN) != 0 {
        return 0;
    }
    let colour = (!new_tm_p.is_null() && color >= 0).then_some(color as u32);
    // Keys order the members: shift them so that negative keys sort first.
    let key = (key as i64 - i32::MIN as i64) as u32;
    let made = match parent.split(colour, key) {
        Ok(t) => t,
        Err(e) => failed(CALL, &e),
    };
    if new_tm_p.is_null() {
        return 0;
    }
    let h = match made {
        Some(team) => {
            let scratch =
                (flags & FLAG_TM_NO_SCRATCH == 0).then_some((scratch_addr as usize, scratch_size));
            keep(a, team, scratch, flags)
        }
        None => std::ptr::null_mut(),
    };
    // SAFETY: checked non-NULL; GASNet-EX requires a writable handle.
    unsafe { *new_tm_p = h };
    0
}

/// Record a team this process made (`gex_TM_Split`, `gex_TM_Create`);
/// its handle. The object lives until the process ends.
pub(crate) fn keep(
    a: &Api,
    team: CTeam,
    scratch: Option<(usize, usize)>,
    flags: gex_Flags_t,
) -> Handle {
    let obj: &'static TmObj = Box::leak(Box::new(TmObj {
        team,
        destroyed: Cell::new(false),
        scratch,
        cdata: Cell::new(std::ptr::null()),
        flags,
    }));
    a.teams.borrow_mut().push(obj);
    obj as *const TmObj as Handle
}

/// `gex_TM_Destroy`: destroy a split team (collective over it; the
/// primordial team cannot be destroyed): its collectives are flushed, the
/// members synchronise and the team's resources are released
/// ([`conduit::client::Team::retire`]). When the client granted scratch space to the split and
/// `scratch_p` is not NULL, it is handed back there and 1 returned; else 0.
#[no_mangle]
pub extern "C" fn gex_TM_Destroy(
    tm: Handle,
    scratch_p: *mut crate::types::gex_Memvec_t,
    _flags: gex_Flags_t,
) -> c_int {
    const CALL: &str = "gex_TM_Destroy";
    let a = api(CALL);
    if is_world(tm) {
        fatal(CALL, "tm is the primordial team, which cannot be destroyed")
    }
    let t = team(a, CALL, tm);
    // Collective: flushed, synchronised, then the team's collective cache
    // is released (GEX_FLAG_GLOBALLY_QUIESCED, which allows skipping the
    // synchronisation, is accepted and the members synchronise anyway).
    if let Err(e) = t.retire() {
        failed(CALL, &e)
    }
    let Some(obj) = split_team(a, tm) else {
        return 0;
    };
    obj.destroyed.set(true);
    match obj.scratch {
        Some((addr, len)) if !scratch_p.is_null() => {
            // SAFETY: non-NULL; GASNet-EX requires a writable gex_Memvec_t.
            unsafe {
                *scratch_p = crate::types::gex_Memvec_t {
                    gex_addr: addr as *mut c_void,
                    gex_len: len,
                }
            };
            1
        }
        _ => 0,
    }
}
