//! Bad arguments to the C API (issue 14, item 4): each gives GASNet's
//! error code with a message naming the call and the argument, or a fatal
//! error in GASNet's style that ends the job with a failure; addresses in
//! the messages are compared as 0xADDR.

mod common;

use common::{build, job, setup};

/// Replace every hexadecimal address with 0xADDR.
fn scrub(s: &str) -> String {
    let mut out = String::new();
    let mut rest = s;
    while let Some(i) = rest.find("0x") {
        out.push_str(&rest[..i]);
        let tail = &rest[i + 2..];
        let n = tail.chars().take_while(|c| c.is_ascii_hexdigit()).count();
        out.push_str(if n > 0 { "0xADDR" } else { "0x" });
        rest = &tail[n..];
    }
    out.push_str(rest);
    out
}

/// (mode, exit code, exact line expected in the output)
const CASES: &[(&str, i32, &str)] = &[
    ("before-init", 1, "*** FATAL ERROR (proc ?): in gex_System_QueryJobRank(): called before gex_Client_Init"),
    ("init-null", 0, "GASNet gex_Client_Init returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): client_p is NULL"),
    ("init-name", 0, "GASNet gex_Client_Init returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): clientName \"bad-name\" does not match [A-Za-z][A-Za-z0-9_]+ (the specification's [A-Z][A-Z0-9_]+, lower case accepted too)"),
    ("handler-index", 0, "GASNet gex_EP_RegisterHandlers returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): table[0] (\"low\"): gex_index=5 is outside the client's range (0 to assign one, or 128..255)"),
    ("handler-nargs", 0, "GASNet gex_EP_RegisterHandlers returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): table[0] (\"many\"): gex_nargs=17 is more than gex_AM_MaxArgs() (16)"),
    ("handler-flags", 0, "GASNet gex_EP_RegisterHandlers returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): table[0] (\"nocat\"): gex_flags=0xADDR must be one of GEX_FLAG_AM_SHORT, _MEDIUM, _LONG, _MEDLONG or'ed with one of GEX_FLAG_AM_REQUEST, _REPLY, _REQREP"),
    ("handler-taken", 0, "GASNet gex_EP_RegisterHandlers returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): table[0] (\"again\"): AM handler index 200 is already registered (short request with 0 arguments)"),
    ("handler-null", 0, "GASNet gex_EP_RegisterHandlers returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): table[0]: gex_fnptr is NULL"),
    ("waitmode", 0, "GASNet gasnet_set_waitmode returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): wait_mode=7: accepted are GASNET_WAIT_SPIN (0), GASNET_WAIT_BLOCK (1), GASNET_WAIT_SPINBLOCK (2)"),
    ("put-outside", 1, "*** FATAL ERROR (proc 0): in gex_RMA_PutBlocking(): dest=0xADDR with nbytes=16 is outside rank 1's segment [0xADDR, 0xADDR)"),
    ("get-null", 1, "*** FATAL ERROR (proc 0): in gex_RMA_GetBlocking(): dest is NULL with nbytes=8"),
    ("tm-invalid", 1, "*** FATAL ERROR (proc 0): in gex_RMA_PutBlocking(): tm=0xADDR is not the team returned by gex_Client_Init nor one made by gex_TM_Split or gex_TM_Create (GEX_TM_INVALID or a stale handle)"),
    ("rank", 1, "*** FATAL ERROR (proc 0): in gex_AM_RequestShort(): rank=2 is not a rank of this job (0..2)"),
    ("long-outside", 1, "*** FATAL ERROR (proc 0): in gex_AM_RequestLong(): dest_addr=0xADDR with nbytes=8 is outside rank 1's segment [0xADDR, 0xADDR)"),
    ("lc-defer", 1, "*** FATAL ERROR (proc 0): in gex_AM_RequestMedium(): lc_opt=GEX_EVENT_DEFER is not permitted for AMs (the specification allows NOW, GROUP, or an event pointer)"),
    ("medium-huge", 1, "*** FATAL ERROR (proc 0): in gex_AM_RequestMedium(): nbytes=18446744073709551615 is more than an array at source_addr (0xADDR) can hold (1-byte entries)"),
    ("token-stale", 1, "*** FATAL ERROR (proc 0): in gex_AM_ReplyShort(): token=0xADDR is not the token of a running AM handler (tokens are valid only inside their handler)"),
    ("tm-destroyed", 1, "*** FATAL ERROR (proc 0): in gex_Coll_BarrierNB(): tm=0xADDR was destroyed (gex_TM_Destroy)"),
    ("tm-destroyed-event", 1, "*** FATAL ERROR (proc 0): in gex_Event_Wait(): team 1 is not a team of this rank (never made here, or destroyed)"),
    ("tm-destroy-world", 1, "*** FATAL ERROR (proc 0): in gex_TM_Destroy(): tm is the primordial team, which cannot be destroyed"),
    ("prepare-oom", 1, "*** FATAL ERROR (proc 0): in gex_AM_PrepareRequestLong(): cannot allocate 2147483647 bytes for the payload (least_payload=2147483647, most_payload=2147483647): out of memory"),
    ("prepare-numargs", 1, "*** FATAL ERROR (proc 0): in gex_AM_PrepareRequestMedium(): numargs=17 is more than gex_AM_MaxArgs() (16)"),
    ("commit-size", 1, "*** FATAL ERROR (proc 0): in gex_AM_CommitRequestMedium(): nbytes=9 exceeds gex_AM_SrcDescSize()=8"),
    ("event-stale", 1, "*** FATAL ERROR (proc 0): in gex_Event_Wait(): event=0xADDR is not a pending event (already completed, or never returned by GASNet)"),
    ("event-reused", 1, "*** FATAL ERROR (proc 0): in gex_Event_Wait(): event=0xADDR is not a pending event (already completed, or never returned by GASNet)"),
    ("event-no-op", 1, "*** FATAL ERROR (proc 0): in gex_Event_Test(): event=GEX_EVENT_NO_OP is not an event (it is what a call that did not start an operation returns; passing it to test or wait is erroneous)"),
    ("other-thread", 1, "*** FATAL ERROR (proc ?): in gex_System_QueryJobRank(): called from a thread other than the one that called gex_Client_Init (this is the SEQ library: one thread makes every GASNet call)"),
    ("ad-op", 1, "*** FATAL ERROR (proc 0): in gex_AD_OpNB_U64(): opcode=GEX_OP_FCAS is not one of the domain's operations (ops=0xADDR)"),
    ("ad-favor-two", 1, "*** FATAL ERROR (proc 0): in gex_AD_Create(): flags=0xADDR names GEX_FLAG_AD_FAVOR_MY_RANK and GEX_FLAG_AD_FAVOR_REMOTE: the GEX_FLAG_AD_FAVOR_* hints are mutually exclusive (give at most one)"),
    ("ad-destroyed", 1, "*** FATAL ERROR (proc 0): in gex_AD_OpNB_U64(): ad=0xADDR is not a live atomic domain (GEX_AD_INVALID, destroyed, or never created)"),
    ("ad-invalid", 1, "*** FATAL ERROR (proc 0): in gex_AD_OpNBI_U64(): ad=0xADDR is not a live atomic domain (GEX_AD_INVALID, destroyed, or never created)"),
    ("ad-outside", 1, "*** FATAL ERROR (proc 0): in gex_AD_OpNB_U64(): tgt_addr=0xADDR with nbytes=8 is outside rank 1's segment [0xADDR, 0xADDR)"),
    ("coll-root", 1, "*** FATAL ERROR (proc 0): in gex_Coll_BroadcastNB(): root=2 is not a rank of the team (0..2)"),
    ("reduce-op", 1, "*** FATAL ERROR (proc 0): in gex_Coll_ReduceToAllNB(): op=0xADDR is not a reduction operator: accepted are GEX_OP_ADD, GEX_OP_MULT, GEX_OP_MIN, GEX_OP_MAX, GEX_OP_AND, GEX_OP_OR, GEX_OP_XOR, GEX_OP_USER and GEX_OP_USER_NC"),
    ("reduce-size", 1, "*** FATAL ERROR (proc 0): in gex_Coll_ReduceToAllNB(): dt_sz=4 is not the size of the data type (8 bytes)"),
    ("vis-outside", 1, "*** FATAL ERROR (proc 0): in gex_VIS_VectorPutBlocking(): dstlist[1]=0xADDR with nbytes=8 is outside rank 1's segment [0xADDR, 0xADDR)"),
    ("ad-type", 1, "*** FATAL ERROR (proc 0): in gex_AD_OpNB_I64(): the domain is over GEX_DT_U64, not GEX_DT_I64 (the call's type must be the domain's)"),
    ("ad-result", 1, "*** FATAL ERROR (proc 0): in gex_AD_OpNB_U64(): result_p is NULL for the fetching GEX_OP_FADD"),
    ("vis-null", 1, "*** FATAL ERROR (proc 0): in gex_VIS_VectorPutBlocking(): srclist[1] is NULL with 8 bytes"),
    ("reduce-count", 1, "*** FATAL ERROR (proc 0): in gex_Coll_ReduceToAllNB(): dt_cnt=0: a reduction has at least one element"),
    ("reduce-user-dt", 1, "*** FATAL ERROR (proc 0): in gex_Coll_ReduceToAllNB(): dt=GEX_DT_USER needs op=GEX_OP_USER or GEX_OP_USER_NC"),
    ("value-size", 1, "*** FATAL ERROR (proc 0): in gex_RMA_PutBlockingVal(): nbytes=9: value-based RMA moves 1 to 8 bytes (SIZEOF_GEX_RMA_VALUE_T)"),
    ("region-nested", 1, "*** FATAL ERROR (proc 0): in gex_NBI_BeginAccessRegion(): an access region is already open (regions do not nest: call gex_NBI_EndAccessRegion first)"),
    ("region-end", 1, "*** FATAL ERROR (proc 0): in gex_NBI_EndAccessRegion(): no access region is open (call gex_NBI_BeginAccessRegion first)"),
    ("ad-misaligned", 1, "*** FATAL ERROR (proc 0): in gex_AD_OpNB_U64(): atomic target offset 4 is not a multiple of u64's size 8"),
    ("reduce-user-null", 1, "*** FATAL ERROR (proc 0): in gex_Coll_ReduceToAllNB(): user_op is NULL with a user-defined operator"),
    ("split-rank", 1, "*** FATAL ERROR (proc 0): in gex_TM_TranslateRankToJobrank(): rank=2 is not a rank of this job (0..2)"),
    ("verbose-errors", 1, "*** FATAL ERROR (proc 0): in gex_System_SetVerboseErrors(): enable=2: only 0 and 1 are accepted (other values are reserved)"),
    ("segment-handle", 1, "*** FATAL ERROR (proc 0): in gex_Segment_QueryAddr(): seg=0xADDR is not the seg gex_Segment_Attach returned"),
    ("ep-location-flags", 1, "*** FATAL ERROR (proc 0): in gex_TM_TranslateRankToEP(): flags=0xADDR: the flags are reserved and must be 0"),
    ("pair-index", 1, "*** FATAL ERROR (proc 0): in gex_TM_Pair(): remote_ep_index=1: every process has one endpoint, index 0 (GASNET_MAXEPS is 1)"),
    ("pair-team", 1, "*** FATAL ERROR (proc 0): in gex_TM_QuerySize(): tm=0xADDR is a TM-pair (gex_TM_Pair), which names no team: it is valid only in point-to-point calls (gex_RMA_*, gex_VIS_*, gex_AM_*) and segment queries"),
    ("create-dup", 1, "*** FATAL ERROR (proc 0): in gex_TM_Create(): args[1] and args[0] name the same endpoint (job rank 0)"),
    ("create-rank", 1, "*** FATAL ERROR (proc 0): in gex_TM_Create(): args[1].gex_rank=2 is not a rank of parent_tm (0..2; pass GEX_FLAG_RANK_IS_JOBRANK for job ranks)"),
    ("create-scratch", 1, "*** FATAL ERROR (proc 0): in gex_TM_Create(): flags=0xADDR must hold exactly one of GEX_FLAG_TM_GLOBAL_SCRATCH, GEX_FLAG_TM_LOCAL_SCRATCH, GEX_FLAG_TM_SYMMETRIC_SCRATCH and GEX_FLAG_TM_NO_SCRATCH (it holds GEX_FLAG_TM_LOCAL_SCRATCH and GEX_FLAG_TM_NO_SCRATCH)"),
    ("create-count", 1, "*** FATAL ERROR (proc 0): in gex_TM_Create(): num_new_tms=0, but args[] names 1 of this process's endpoints (job rank 0)"),
    ("create-mismatch", 1, "*** FATAL ERROR (proc 1): in gex_TM_Create(): args[] must be the same on every member of the new team: this process named job ranks [1, 0], the members naming the same lowest rank formed [0, 1]"),
    ("leaf-category", 1, "*** FATAL ERROR (proc 0): in gex_Event_QueryLeaf(): event_category=0xADDR: the only leaf event is GEX_EC_LC (0xADDR)"),
    ("legacy-index", 0, "GASNet gasnet_attach returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): table[0].index=5 is outside the client's range (0 to assign one, or 128..255)"),
    ("legacy-segsize", 0, "GASNet gasnet_attach returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): segsize=1000 is not a multiple of GASNET_PAGESIZE (4096)"),
    ("tools-fatal", 1, "*** FATAL ERROR: boom"),
    ("create-epindex", 1, "*** FATAL ERROR (proc 0): in gex_TM_Create(): args[1].gex_ep_index=3: each process has one endpoint (index 0)"),
    ("create-jobrank", 1, "*** FATAL ERROR (proc 0): in gex_TM_Create(): rank=2 is not a rank of this job (0..2)"),
    ("leaf-noop", 1, "*** FATAL ERROR (proc 0): in gex_Event_QueryLeaf(): root=GEX_EVENT_NO_OP is not a root event"),
    ("legacy-init-twice", 0, "GASNet gasnet_init returning an error code: GASNET_ERR_NOT_INIT (GASNet message layer not initialized): GASNet is already initialised"),
    ("legacy-seginfo-null", 0, "GASNet gasnet_getSegmentInfo returning an error code: GASNET_ERR_BAD_ARG (Invalid function parameter passed): seginfo_table=0xADDR with numentries=2"),
    ("legacy-nodeinfo-no-init", 0, "GASNet gasnet_getNodeInfo returning an error code: GASNET_ERR_NOT_INIT (GASNet message layer not initialized): called before gasnet_init"),
    ("legacy-msgsource", 1, "*** FATAL ERROR (proc 0): in gasnet_AMGetMsgSource(): token=0xADDR is not the token of a running AM handler (tokens are valid only inside their handler)"),
    ("coll1-no-init", 1, "*** FATAL ERROR (proc 0): in gasnet_coll_broadcast(): gasnet_coll_init has not been called (GASNet-1 requires it before any gasnet_coll_* call)"),
    ("coll1-flags", 1, "*** FATAL ERROR (proc 0): in gasnet_coll_broadcast_nb(): flags=0xADDR must hold exactly one of GASNET_COLL_SINGLE, GASNET_COLL_LOCAL"),
    ("coll1-unknown-flag", 1, "*** FATAL ERROR (proc 0): in gasnet_coll_broadcast(): flags=0xADDR has bits that are not GASNET_COLL_* flags of the broadcast (0xADDR)"),
    ("coll1-nbytes", 1, "*** FATAL ERROR (proc 0): in gasnet_coll_broadcast(): nbytes=0: GASNet-1's collectives move at least one byte per block"),
    ("coll1-srcimage", 1, "*** FATAL ERROR (proc 0): in gasnet_coll_broadcast(): srcimage=2 is not an image of the team (0..2)"),
    ("coll1-init-twice", 1, "*** FATAL ERROR (proc 0): in gasnet_coll_init(): called a second time (it is called once per node)"),
    ("coll1-init-images", 1, "*** FATAL ERROR (proc 0): in gasnet_coll_init(): images is not NULL: this is a GASNET_SEQ library, one image per node (pass NULL)"),
    ("coll1-init-flags", 1, "*** FATAL ERROR (proc 0): in gasnet_coll_init(): init_flags=4: no initialisation flags are defined (pass 0)"),
    ("vis1-levels", 1, "*** FATAL ERROR (proc 0): in gasnet_puts_bulk(): stridelevels=18446744073709551615 is more than any array"),
    ("vis1-count-null", 1, "*** FATAL ERROR (proc 0): in gasnet_puts_bulk(): count is NULL with 3 entries"),
    ("barrier-wait", 1, "*** FATAL ERROR (proc 0): in gasnet_barrier_wait(): no barrier was notified (call gasnet_barrier_notify first)"),
    ("barrier-notify-flags", 1, "*** FATAL ERROR (proc 0): in gasnet_barrier_notify(): flags=0xADDR: accepted are 0 (named), GASNET_BARRIERFLAG_ANONYMOUS and GASNET_BARRIERFLAG_UNNAMED, each optionally with GASNET_BARRIERFLAG_MISMATCH"),
    ("coll-barrier-in-legacy", 1, "*** FATAL ERROR (proc 0): in gex_Coll_BarrierNB(): a GASNet-1 barrier is in progress (gasnet_barrier_notify without its wait): GASNet-EX collectives over the primordial team must not overlap it"),
    ("request-in-handler", 1, "*** FATAL ERROR (proc 1): in gex_AM_RequestShort(): sending a request is not allowed inside an AM handler (handlers may not poll, block or send requests)"),
    ("barrier-try-in-handler", 1, "*** FATAL ERROR (proc 1): in gasnet_barrier_try(): a barrier call is not allowed inside an AM handler (handlers may not poll, block or send requests)"),
    ("wrong-nargs", 1, "*** FATAL ERROR (proc 1): in gasnet_AMPoll(): received a short request with 1 argument from rank 0 for handler index 201, which is registered as a short request with 2 arguments"),
];

#[test]
fn bad_arguments_give_exact_messages() {
    let _g = tests::serial();
    let s = setup();
    let exe = build(&s.shared, "badargs.c");
    let mut failures = Vec::new();
    for &(mode, code, line) in CASES {
        let r = job(&s.shared, &exe, 2, &[mode], "tcp");
        let out = scrub(&format!("{}\n{}", r.stdout, r.stderr));
        // A destroyed atomic domain stays a tombstone: no domain created
        // after it takes its address (and a stale handle its place).
        if mode == "ad-destroyed"
            && !out.contains("ad-destroyed: no new domain took the destroyed one's address")
        {
            failures.push(format!(
                "{mode}: a new domain reused a destroyed one's address\n{out}"
            ));
        }
        // A conduit's fatal error (also inside a handler) ends the job
        // through the collective exit: code 1, and the launcher signals no
        // rank. A process without a client ("proc ?") ends on its own, and
        // the tools' gasnett_fatalerror aborts (as GASNet's): non-zero.
        let conduit_fatal =
            line.starts_with("*** FATAL ERROR (proc ") && !line.contains("(proc ?)");
        let ok_code = match code {
            0 => r.code == Some(0),
            _ if conduit_fatal => r.code == Some(1) && !r.stderr.contains("terminating the job"),
            _ => r.code.is_some_and(|c| c != 0),
        };
        if !ok_code || !out.lines().any(|l| l == line) {
            failures.push(format!(
                "{mode}: exit {:?} (want {}), expected line\n  {line}\nin\n{out}",
                r.code,
                match code {
                    0 => "0",
                    _ if conduit_fatal => "1, no rank signalled",
                    _ => "non-zero",
                }
            ));
        }
        if code == 0 {
            // The code the message names is the one the call returned.
            let name = line
                .split("error code: ")
                .nth(1)
                .and_then(|t| t.split(' ').next())
                .expect("an error-return line names its code");
            assert!(
                out.contains(&format!("returned {name}")),
                "{mode}: the call did not return {name}:\n{out}"
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// A malformed AM that rank 1 meets inside a barrier, after which rank 0
/// exits with 0 at once: whichever rank 1 sees first (its own poll after
/// a barrier, or rank 0's exit), the error is printed and the job fails.
#[test]
fn a_malformed_am_met_before_a_peers_exit_fails_the_job() {
    let _g = tests::serial();
    let s = setup();
    let exe = build(&s.shared, "badargs.c");
    let why = "received a short request with 1 argument from rank 0 for handler index 201, \
               which is registered as a short request with 2 arguments";
    // Reported by the poll that follows whichever barrier met it (the AM
    // may arrive while rank 1 still waits in the barrier before), or by
    // the exit that overtook it.
    let ending = format!("(): {why}");
    let polled =
        |l: &str| l.starts_with("*** FATAL ERROR (proc 1): in ") && l.ends_with(ending.as_str());
    let overtaken = format!(
        "ofi-conduit (rank 1): {why} (met before the job's exit; this rank exits with a failure code)"
    );
    let mut seen = [0usize; 2];
    for run in 0..6 {
        let r = job(&s.shared, &exe, 2, &["wrong-nargs-exit"], "tcp");
        let out = scrub(&format!("{}\n{}", r.stdout, r.stderr));
        let which = if out.lines().any(polled) {
            Some(0)
        } else {
            out.lines().any(|l| l == overtaken).then_some(1)
        };
        assert!(
            r.code.is_some_and(|c| c != 0) && which.is_some(),
            "run {run}: exit {:?}; expected a failure and either a fatal error of a barrier call \
             ending\n  {ending}\nor\n  {overtaken}\nin\n{out}",
            r.code
        );
        seen[which.unwrap_or(0)] += 1;
    }
    eprintln!(
        "reported by the poll after a barrier {} times, overtaken by the exit {} times",
        seen[0], seen[1]
    );
}
