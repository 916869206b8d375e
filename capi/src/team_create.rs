//! `gex_TM_Create`: teams named by their member lists.
//!
//! Each caller names the members of the team it joins, in rank order;
//! lists of different callers are identical (the same team) or disjoint.
//! The conduit builds it as a split of the parent team: the colour is the
//! lowest parent rank in the list (distinct for disjoint lists) and the key
//! is the caller's position in it, so the split's order is the list's
//! order. A caller whose list was not the one its team-mates gave is
//! caught after the split (the members the split gathered differ from its
//! list) and stops the job with both lists.

use crate::am::failed;
use crate::query::gex_EP_Location_t;
use crate::state::{api, fatal};
use crate::team::team;
use crate::types::consts::*;
use crate::types::{gex_Flags_t, Handle};
use std::ffi::c_void;

/// The four mutually exclusive scratch-space choices, one of which
/// `gex_TM_Create` requires (the specification has no default).
const SCRATCH_CHOICES: [(u32, &str); 4] = [
    (FLAG_TM_GLOBAL_SCRATCH, "GEX_FLAG_TM_GLOBAL_SCRATCH"),
    (FLAG_TM_LOCAL_SCRATCH, "GEX_FLAG_TM_LOCAL_SCRATCH"),
    (FLAG_TM_SYMMETRIC_SCRATCH, "GEX_FLAG_TM_SYMMETRIC_SCRATCH"),
    (FLAG_TM_NO_SCRATCH, "GEX_FLAG_TM_NO_SCRATCH"),
];

/// `gex_TM_Create`: collective over `parent_tm`. A caller with `numargs >
/// 0` joins the team whose members `args[0..numargs]` name in rank order
/// (job ranks with `GEX_FLAG_RANK_IS_JOBRANK`, else ranks of the parent;
/// endpoint index 0, the only endpoint of a process) and, when it is one
/// of them, receives the team's handle in `new_tms[0]` (`num_new_tms` must
/// be 1 then, 0 otherwise). A caller with `numargs == 0` joins none. With
/// `GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED` (or `_MIN`) it is a query and
/// returns 0: the conduit's collectives keep their own memory, so scratch
/// space given here is recorded (and handed back by `gex_TM_Destroy`) but
/// not used. Exactly one of `GEX_FLAG_TM_{GLOBAL,LOCAL,SYMMETRIC,NO}_SCRATCH`
/// must be passed.
#[no_mangle]
pub extern "C" fn gex_TM_Create(
    new_tms: *mut Handle,
    num_new_tms: usize,
    parent_tm: Handle,
    args: *const gex_EP_Location_t,
    numargs: usize,
    scratch_addrs: *const *mut c_void,
    scratch_size: usize,
    flags: gex_Flags_t,
) -> usize {
    const CALL: &str = "gex_TM_Create";
    let a = api(CALL);
    let parent = team(a, CALL, parent_tm);
    if flags & (FLAG_TM_SCRATCH_SIZE_RECOMMENDED | FLAG_TM_SCRATCH_SIZE_MIN) != 0 {
        return 0;
    }
    if numargs == 0 {
        if let Err(e) = parent.split(None, 0) {
            failed(CALL, &e)
        }
        return 0;
    }
    if args.is_null() {
        fatal(CALL, &format!("args is NULL with numargs={numargs}"))
    }
    crate::state::check_array(CALL, "args", "numargs", args, numargs);
    // SAFETY: non-NULL; GASNet-EX requires `numargs` readable entries.
    let args = unsafe { std::slice::from_raw_parts(args, numargs) };
    let members = job_ranks(a, CALL, parent, args, flags);
    let me = a.client.rank();
    let pos = members.iter().position(|&j| j == me);
    if num_new_tms != usize::from(pos.is_some()) {
        fatal(
            CALL,
            &format!(
                "num_new_tms={num_new_tms}, but args[] names {} of this process's endpoints (job rank {me})",
                usize::from(pos.is_some())
            ),
        )
    }
    let choice = scratch_choice(CALL, flags);
    let scratch = pos.and_then(|p| scratch_of(CALL, choice, scratch_addrs, scratch_size, p, flags));
    if pos.is_some() && new_tms.is_null() {
        fatal(CALL, "new_tms is NULL with num_new_tms=1")
    }
    // The lowest member's parent rank names the team (lists are identical
    // or disjoint); the position in the list orders it.
    let colour = members
        .iter()
        .map(|&j| parent.to_team(j).expect("job_ranks checked membership"))
        .min()
        .expect("numargs > 0") as u32;
    let made = match parent.split(pos.map(|_| colour), pos.unwrap_or(0) as u32) {
        Ok(t) => t,
        Err(e) => failed(CALL, &e),
    };
    let Some(team) = made else {
        return 0;
    };
    if team.members() != members.as_slice() {
        fatal(
            CALL,
            &format!(
                "args[] must be the same on every member of the new team: this process named job ranks {members:?}, the members naming the same lowest rank formed {:?}",
                team.members()
            ),
        )
    }
    let h = crate::team::keep(a, team, scratch, flags);
    // SAFETY: checked non-NULL above; GASNet-EX requires `num_new_tms` (1)
    // writable entries.
    unsafe { *new_tms = h };
    0
}

/// The job ranks `args` names, checked: endpoint index 0, in range,
/// members of the parent team, no rank twice.
fn job_ranks(
    a: &'static crate::state::Api,
    call: &str,
    parent: &crate::team::CTeam,
    args: &[gex_EP_Location_t],
    flags: gex_Flags_t,
) -> Vec<usize> {
    let jobrank = flags & FLAG_RANK_IS_JOBRANK != 0;
    let mut out = Vec::with_capacity(args.len());
    for (i, l) in args.iter().enumerate() {
        if l.gex_ep_index != 0 {
            fatal(
                call,
                &format!(
                    "args[{i}].gex_ep_index={}: each process has one endpoint (index 0)",
                    l.gex_ep_index
                ),
            )
        }
        let r = l.gex_rank as usize;
        let j = if jobrank {
            crate::state::check_rank(a, call, l.gex_rank);
            if parent.to_team(r).is_none() {
                fatal(
                    call,
                    &format!("args[{i}].gex_rank={r} (a job rank) is not a member of parent_tm"),
                )
            }
            r
        } else {
            match parent.to_job(r) {
                Ok(j) => j,
                Err(_) => fatal(
                    call,
                    &format!(
                        "args[{i}].gex_rank={r} is not a rank of parent_tm (0..{}; pass GEX_FLAG_RANK_IS_JOBRANK for job ranks)",
                        parent.size()
                    ),
                ),
            }
        };
        if let Some(k) = out.iter().position(|&x| x == j) {
            fatal(
                call,
                &format!("args[{i}] and args[{k}] name the same endpoint (job rank {j})"),
            )
        }
        out.push(j);
    }
    out
}

/// The one scratch choice among `flags`; a fatal error for none or several.
fn scratch_choice(call: &str, flags: gex_Flags_t) -> u32 {
    let set: Vec<_> = SCRATCH_CHOICES
        .iter()
        .filter(|(f, _)| flags & f != 0)
        .collect();
    match set.as_slice() {
        [(f, _)] => *f,
        _ => fatal(
            call,
            &format!(
                "flags={flags:#x} must hold exactly one of GEX_FLAG_TM_GLOBAL_SCRATCH, GEX_FLAG_TM_LOCAL_SCRATCH, GEX_FLAG_TM_SYMMETRIC_SCRATCH and GEX_FLAG_TM_NO_SCRATCH{}",
                if set.is_empty() {
                    String::from(" (it holds none)")
                } else {
                    format!(
                        " (it holds {})",
                        set.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(" and ")
                    )
                }
            ),
        ),
    }
}

/// This member's scratch space (address, length) as the choice places it
/// in `scratch_addrs`: entry 0 (symmetric, local) or entry `pos` (global);
/// offsets into this rank's segment with `GEX_FLAG_SCRATCH_SEG_OFFSET`.
fn scratch_of(
    call: &str,
    choice: u32,
    scratch_addrs: *const *mut c_void,
    len: usize,
    pos: usize,
    flags: gex_Flags_t,
) -> Option<(usize, usize)> {
    if choice == FLAG_TM_NO_SCRATCH {
        return None;
    }
    if scratch_addrs.is_null() {
        fatal(call, "scratch_addrs is NULL without GEX_FLAG_TM_NO_SCRATCH")
    }
    let i = if choice == FLAG_TM_GLOBAL_SCRATCH {
        pos
    } else {
        0
    };
    // SAFETY: non-NULL; GASNet-EX requires numargs entries for GLOBAL, one
    // per local member (here one) for LOCAL and one for SYMMETRIC, and
    // `pos < numargs`.
    let v = unsafe { *scratch_addrs.add(i) } as usize;
    let addr = if flags & FLAG_SCRATCH_SEG_OFFSET != 0 {
        let a = api(call);
        match a.segs.borrow().get(a.client.rank()) {
            Some(s) => s.base as usize + v,
            None => fatal(
                call,
                "GEX_FLAG_SCRATCH_SEG_OFFSET given before gex_Segment_Attach (no segment to offset into)",
            ),
        }
    } else {
        v
    };
    Some((addr, len))
}
