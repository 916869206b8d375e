//! Tagged messaging over real providers, through gasnetrun-ofi: the
//! `gex-tagged` program (issue 12's acceptance: 4 ranks on shm,
//! tcp;ofi_rxm, sockets and udp;ofi_rxd; tag modes; limits; scalable
//! endpoints). What differs between libfabric 1.17 and 2.x is each
//! provider's documented defect (known-issues.md), checked by its text.

use std::time::Duration;
use tests::{job, serial, JobResult};

const TAGGED: &str = env!("CARGO_BIN_EXE_gex-tagged");

fn run(n: usize, args: &[&str], provider: &str, vars: &[(&str, &str)], secs: u64) -> JobResult {
    job(TAGGED, n, args, provider, vars, Duration::from_secs(secs))
}

/// libfabric 1.19 or later is loaded (shm's tag matching and tcp's
/// truncation were fixed there).
fn at_least_1_19() -> bool {
    conduit::ofi::runtime_version() >= (1, 19)
}

/// The steps every provider passes, in the summary's order.
const STEPS: &[&str] = &[
    "gex-tagged all: ok: tag mode ofi_tag_full on 4 ranks; sizes 0 B..16 MiB checked, wildcards, ",
    " messages in order, probe/iprobe, ",
    ", ssend waited ",
    " s for a late receive, 1000 outstanding operations, wait-any/some/test, dup/split isolation, raw receives, tagged queues read 1 poll in 16 when idle (every poll while pending; 5000 sent to a rank in an AM barrier), cancel, truncation",
];

/// The truncation step's summary: 100 B, 1,000 B, 100,000 B and 4 MiB into 50,
/// each arriving before and after its receive is posted, then synchronous
/// sends into a wildcard receive (their senders released), on every
/// provider that truncates without losing the connection.
const TRUNCATION: &str =
    "cancel, truncation of 100 B to 4 MiB, and of synchronous sends into a wildcard receive (";

/// Matched probe's part of the summary where the provider can claim.
const CLAIMED: &str = "probe/iprobe, matched probe (FI_CLAIM), ssend waited ";

/// The whole conformance program over `provider`; each rank names each
/// step on standard error as it starts it (`GEX_TAGGED_TRACE`), so a job
/// that misses its deadline says where every rank stopped.
fn conformance(provider: &str, vars: &[(&str, &str)], flood: usize) -> JobResult {
    let mut vars = vars.to_vec();
    vars.push(("GEX_TAGGED_TRACE", "1"));
    let r = run(4, &["all"], provider, &vars, 300);
    assert_eq!(r.code, Some(0), "{provider}: {}\n{}", r.stdout, r.stderr);
    for s in STEPS {
        assert!(r.stdout.contains(s), "{provider}: no {s:?} in {}", r.stdout);
    }
    if provider != "udp" {
        assert!(r.stdout.contains(CLAIMED), "{provider}: {}", r.stdout);
        assert!(
            r.stdout.trim_end().ends_with(", send-window waits 0)"),
            "{provider} has no send window: {}",
            r.stdout
        );
    }
    assert!(
        r.stdout.contains(&format!(", {flood} messages in order")),
        "{provider}: {}",
        r.stdout
    );
    r
}

#[test]
fn conformance_on_sockets() {
    let _g = serial();
    let r = conformance("sockets", &[], 14_000);
    assert!(r.stdout.contains(TRUNCATION), "{}", r.stdout);
}

/// tcp;ofi_rxm (FI_PROVIDER=tcp). Before libfabric 1.19 a truncated
/// receive breaks tcp's connection, and the conduit says so instead of
/// hanging later; from 1.19 truncation is an ordinary error status.
#[test]
fn conformance_on_tcp() {
    let _g = serial();
    let r = conformance("tcp", &[], 14_000);
    if at_least_1_19() {
        assert!(r.stdout.contains(TRUNCATION), "{}", r.stdout);
    } else {
        assert!(
            r.stdout.contains(
                "cancel, truncation reported as a provider defect: message from rank "
            ) && r.stdout.contains(
                " with tag 33 was longer than the 50-byte receive buffer, and provider tcp;ofi_rxm in \
                 libfabric 1.17 loses the connection after a truncated receive"
            ),
            "{}",
            r.stdout
        );
    }
}

/// udp;ofi_rxd passes the whole flood (2,000 per rank, every tenth over its
/// MTU) only within its profile's send window: with more than about 100
/// multi-packet sends outstanding the last few never complete (1.17 and
/// 2.1, known-issues.md), so the flood must have waited for room. Its
/// truncation is detected by the conduit (rxd reports a truncated receive
/// as a success); matched probe is refused with the reason (rxd fails the
/// claiming receive). Before libfabric 2.4 nothing is injected: small
/// messages go from copies (rxd loses an `fi_tsend` once injects hold every
/// transmit entry). Before libfabric 2.4 the 4 MiB truncation arrives
/// only after its receive: rxd can free a packet twice buffering a message
/// that large unexpected (the udp provider's CQ overflows; the profile's
/// `tagged_unexpected_max`, known-issues.md); from 2.4 on it goes both ways.
#[test]
fn conformance_on_udp() {
    let _g = serial();
    let r = conformance("udp", &[], 14_000);
    assert!(r.stdout.contains(TRUNCATION), "{}", r.stdout);
    let limited = "wildcard receive (larger than 2097152 B only into a receive posted first: \
                   the udp;ofi_rxd profile's tagged_unexpected_max)";
    assert_eq!(
        r.stdout.contains(limited),
        conduit::ofi::runtime_version() < (2, 4),
        "{}",
        r.stdout
    );
    let waits = r
        .stdout
        .split("send-window waits ")
        .nth(1)
        .and_then(|s| s.trim_end().trim_end_matches(')').parse::<u64>().ok());
    assert!(
        waits.is_some_and(|w| w > 0),
        "the flood never waited for udp;ofi_rxd's send window: {}",
        r.stdout
    );
    // Before 2.4, rxd's fi_tsend returns success without sending once
    // injected messages hold every transmit entry (known-issues.md): the
    // conduit injects nothing there and sends small messages from copies.
    // From 2.4 (which has the fix) small messages are injected again.
    let count = |what: &str| {
        r.stdout
            .split(what)
            .nth(1)
            .and_then(|s| s.split([',', ')']).next())
            .and_then(|s| s.trim().parse::<u64>().ok())
    };
    let (injects, copied) = (count("(injects "), count(", copied "));
    if conduit::ofi::runtime_version() < (2, 4) {
        assert!(
            injects == Some(0) && copied.is_some_and(|n| n > 0),
            "udp;ofi_rxd before libfabric 2.4 must send small messages from copies, not inject them: {}",
            r.stdout
        );
    } else {
        assert!(
            injects.is_some_and(|n| n > 0) && copied == Some(0),
            "udp;ofi_rxd from libfabric 2.4 must inject small messages, not copy them: {}",
            r.stdout
        );
    }
    assert!(
        r.stdout.contains(
            "probe/iprobe, matched probe refused: matched probe (FI_CLAIM) is not supported by \
             provider udp;ofi_rxd: ofi_rxd (libfabric 1.17 to 2.4) completes the receive that \
             claims a message with FI_ETRUNC whenever the message is shorter than the receive buffer"
        ),
        "{}",
        r.stdout
    );
}

/// shm before 1.19 is refused with the defect and the remedy; from 1.19
/// every step passes, truncation of every size included (shm cannot
/// truncate a message over 192 bytes itself; the conduit's spill iov takes
/// the excess: known-issues.md).
#[test]
fn conformance_on_shm() {
    let _g = serial();
    if at_least_1_19() {
        let r = conformance("shm", &[], 14_000);
        assert!(r.stdout.contains(TRUNCATION), "{}", r.stdout);
    } else {
        let r = run(4, &["all"], "shm", &[], 60);
        assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(
                "gex-tagged: tagged messaging is not possible with provider shm in libfabric 1.17: \
                 its tag matching uses the arrived message's ignore mask instead of the receive's"
            ) && r.stderr.contains("Use libfabric 1.19 or later (scripts/setup.sh --libfabric=2)"),
            "{}",
            r.stderr
        );
    }
}

/// `auto` picks ofi_tag_full wherever the provider grants FI_REMOTE_CQ_DATA
/// and FI_DIRECTED_RECV (all four here: ofi_rxm grants directed receive
/// too, see docs/providers.md), and GASNET_VERBOSEENV=1 reports it (and,
/// on udp;ofi_rxd only, that each message's length travels in the CQ data).
#[test]
fn auto_tag_mode_as_verboseenv_reports() {
    let _g = serial();
    let mut providers = vec![
        ("sockets", "sockets"),
        ("tcp", "tcp;ofi_rxm"),
        ("udp", "udp;ofi_rxd"),
    ];
    if at_least_1_19() {
        providers.push(("shm", "shm"));
    }
    for (p, name) in providers {
        let r = run(2, &["layout"], p, &[("GASNET_VERBOSEENV", "1")], 60);
        assert_eq!(r.code, Some(0), "{p}: {}\n{}", r.stdout, r.stderr);
        let want = format!(
            "tagged: provider {name}: GASNET_OFI_TAG_MODE=auto -> ofi_tag_full (28 communicator-id, 0 \
             source, 32 tag bits, source rank in CQ data); 1 regular-endpoint context(s)"
        );
        // tcp is tcp;ofi_rxm with 1.17 and may be tcp itself with 2.x.
        let found = r.stderr.contains(&want)
            || (p == "tcp" && r.stderr.contains(&want.replace("tcp;ofi_rxm", "tcp")));
        assert!(found, "{p}: no {want:?} in {}", r.stderr);
        // Only udp;ofi_rxd's profile says truncation goes unreported, so
        // only its messages carry their length in the CQ data.
        let len = "each message's length travels in the CQ data (profile: \
                   tagged_truncation_unreported)";
        assert_eq!(
            r.stderr.contains(len),
            p == "udp",
            "{p}: the length in the CQ data is reported where, and only where, the profile asks: {}",
            r.stderr
        );
        assert!(
            r.stdout.contains(
                "gex-tagged layout: ofi_tag_full: communicator id 28 bits, source 0 bits, tag 32 bits"
            ),
            "{p}: {}",
            r.stdout
        );
    }
}

/// Each tag mode forced, on sockets and tcp; a tag, a rank and (with
/// ofi_tag_1's 12 bits) a communicator id past the layout are refused with
/// the exact message, and a freed id is reused.
#[test]
fn forced_tag_modes_refuse_what_they_cannot_hold() {
    let _g = serial();
    for p in ["sockets", "tcp"] {
        for (mode, max_tag) in [
            ("ofi_tag_1", 2_147_483_647u64),
            ("ofi_tag_2", 524_287),
            ("ofi_tag_full", 2_147_483_647),
        ] {
            let r = run(
                2,
                &["limits"],
                p,
                &[("GASNET_OFI_TAG_MODE", mode), ("GASNET_VERBOSEENV", "1")],
                120,
            );
            assert_eq!(r.code, Some(0), "{p} {mode}: {}\n{}", r.stdout, r.stderr);
            assert!(
                r.stderr
                    .contains(&format!("GASNET_OFI_TAG_MODE={mode} -> {mode} (")),
                "{p} {mode}: {}",
                r.stderr
            );
            let paths = if mode == "ofi_tag_full" {
                "; send and receive paths: source in CQ data, regular endpoints"
            } else {
                "; send and receive paths: source in the tag, regular endpoints"
            };
            assert!(r.stderr.contains(paths), "{p} {mode}: {}", r.stderr);
            let over = max_tag + 1;
            let tag = format!(
                "tag {over} is beyond what tag layout {mode} holds: the largest tag is {max_tag}"
            );
            let mut want = vec![
                format!("gex-tagged limits: ok: {mode} (largest tag {max_tag} accepted)"),
                tag.clone(),
                tag,
                "rank 2 is not in the communicator (size 2)".to_string(),
            ];
            if mode == "ofi_tag_1" {
                want.push(
                    "communicator id 4096 is beyond what tag layout ofi_tag_1 holds: the largest \
                     communicator id is 4095 (free communicators, or use GASNET_OFI_TAG_MODE=ofi_tag_2 \
                     or ofi_tag_full for more)"
                        .to_string(),
                );
                want.push("4095 communicators duplicated, freed, and one more made".to_string());
            }
            let got: Vec<&str> = r.stdout.lines().collect();
            assert_eq!(got, want, "{p} {mode}: {}", r.stdout);
        }
    }
}

/// The source-in-the-tag paths (ofi_tag_1 on sockets, ofi_tag_2 on tcp)
/// pass the whole conformance program too.
#[test]
fn conformance_with_the_source_in_the_tag() {
    for (p, mode) in [("sockets", "ofi_tag_1"), ("tcp", "ofi_tag_2")] {
        let _g = serial();
        let r = run(4, &["all"], p, &[("GASNET_OFI_TAG_MODE", mode)], 300);
        assert_eq!(r.code, Some(0), "{p} {mode}: {}\n{}", r.stdout, r.stderr);
        let want = format!(
            "gex-tagged all: ok: tag mode {mode} on 4 ranks; sizes 0 B..16 MiB checked, wildcards, \
             14000 messages in order, probe/iprobe, matched probe (FI_CLAIM), ssend waited "
        );
        assert!(r.stdout.contains(&want), "{p} {mode}: {}", r.stdout);
        assert!(
            r.stdout.contains(" s for a late receive, 1000 outstanding operations, wait-any/some/test, dup/split isolation, raw receives, tagged queues read 1 poll in 16 when idle (every poll while pending; 5000 sent to a rank in an AM barrier), cancel, truncation"),
            "{p} {mode}: {}",
            r.stdout
        );
    }
}

#[test]
fn bad_tag_mode_is_refused_by_name() {
    let _g = serial();
    let r = run(
        2,
        &["layout"],
        "tcp",
        &[("GASNET_OFI_TAG_MODE", "ofi_tag_3")],
        60,
    );
    r.assert_refused_by_launcher(
        "GASNET_OFI_TAG_MODE=\"ofi_tag_3\" is not accepted: expected auto, ofi_tag_1, ofi_tag_2 or \
         ofi_tag_full",
    );
}

/// A count that is not a number is an error naming the argument, in the
/// single-threaded modes and in `threads` (which refuses it before
/// starting the client, with exit code 2).
#[test]
fn bad_counts_are_refused_by_name() {
    let _g = serial();
    for (args, code, want) in [
        (
            &["pingpong", "8B"][..],
            1,
            "argument 2 is '8B'; expected a whole number",
        ),
        (
            &["bandwidth", "1048576", "64", "many"],
            1,
            "argument 4 is 'many'; expected a whole number",
        ),
        (
            &["threads", "2", "two"],
            2,
            "argument 3 is 'two'; expected a whole number",
        ),
    ] {
        let r = run(2, args, "tcp", &[], 60);
        assert_eq!(r.code, Some(code), "{args:?}: {}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }
}

/// 4 ranks of 4 threads x 4 communicators ping-ponging `iters` times on
/// `provider` with 4 contexts (of a scalable endpoint with `sep`, else
/// regular endpoints), data checked.
fn grouped_threads(provider: &str, sep: bool, iters: u32) {
    let _g = serial();
    let iters_s = iters.to_string();
    let mut vars = vec![
        ("GASNET_OFI_THREAD_GROUPING", "1"),
        ("GASNET_OFI_NUM_CTXTS", "4"),
        ("GASNET_VERBOSEENV", "1"),
    ];
    if sep {
        vars.push(("GASNET_OFI_ENABLE_SEP", "1"));
    }
    let r = run(4, &["threads", "4", "4", &iters_s], provider, &vars, 300);
    assert_eq!(r.code, Some(0), "{}\n{}", r.stdout, r.stderr);
    let want = format!(
        "gex-tagged threads: ok: 4 threads x 4 communicators x {iters} ping-pongs on 4 ranks, data \
         checked; 4 context(s) used"
    );
    assert!(r.stdout.contains(&want), "{}", r.stdout);
    let kind = if sep { "scalable" } else { "regular" };
    let ctxs = format!("; 4 {kind}-endpoint context(s);");
    assert!(r.stderr.contains(&ctxs), "{}", r.stderr);
    let paths = format!("; send and receive paths: source in CQ data, {kind} endpoint");
    assert!(r.stderr.contains(&paths), "{}", r.stderr);
}

/// Scalable endpoints with thread grouping on sockets (16 contexts): 4
/// threads x 4 communicators per rank ping-pong, each communicator on its
/// own context.
#[test]
fn scalable_endpoints_with_thread_grouping_on_sockets() {
    grouped_threads("sockets", true, 200);
}

/// Without SEP, thread grouping gives each context a regular endpoint.
#[test]
fn thread_grouping_with_regular_endpoints_on_tcp() {
    grouped_threads("tcp", false, 100);
}

/// SEP on a provider with one context is refused naming the provider and
/// the remedy (shm before 1.19 is refused for its defect first).
#[test]
fn scalable_endpoints_refused_where_the_provider_has_one_context() {
    let _g = serial();
    let mut providers = vec![("tcp", "tcp")];
    if at_least_1_19() {
        providers.push(("shm", "shm"));
    }
    for (p, name) in providers {
        let r = run(
            2,
            &["threads", "2", "2", "10"],
            p,
            &[("GASNET_OFI_ENABLE_SEP", "1")],
            60,
        );
        assert_eq!(r.code, Some(1), "{p}: {}\n{}", r.stdout, r.stderr);
        assert!(
            r.stderr.contains(&format!("GASNET_OFI_ENABLE_SEP=1 is not possible with provider {name}")) &&
            r.stderr.contains(
                "it offers 1 TX and 1 RX context(s) per endpoint, and scalable endpoints need more \
                 than one. Unset GASNET_OFI_ENABLE_SEP (GASNET_OFI_THREAD_GROUPING=1 then gives each \
                 context a regular endpoint of its own) or choose a provider with scalable endpoints"
            ),
            "{p}: {}",
            r.stderr
        );
    }
}

/// Inside an AM handler every tagged call that waits or makes progress is
/// refused by name (before, a receive there blocked while running other
/// handlers inside it, and on the shared-memory path hung the job).
#[test]
fn tagged_calls_inside_a_handler_are_refused() {
    let _g = serial();
    for (p, pshm) in [("tcp", "1"), ("tcp", "0"), ("sockets", "1")] {
        let r = run(
            2,
            &["in-handler"],
            p,
            &[("GASNET_SUPERNODE_MAXSIZE", pshm)],
            60,
        );
        r.expect_line(
            &format!("{p} GASNET_SUPERNODE_MAXSIZE={pshm}"),
            "gex-tagged in-handler: ok: 12 tagged calls refused inside a handler, each by name; a tagged message after it",
        );
    }
}

/// A request returned out of its scope (which finished it) and used in
/// another scope is refused with `ForeignRequest` (before, its wait spun
/// for ever, and an injected send's reported a made-up status).
#[test]
fn requests_used_outside_their_scope_are_refused() {
    let _g = serial();
    for p in ["tcp", "sockets"] {
        run(2, &["foreign"], p, &[], 60).expect_line(
            p,
            "gex-tagged foreign: ok: requests waited, tested and waited among others outside their scope refused; a message after them",
        );
    }
}

/// Threads of a multi-threaded client duplicating communicators at the
/// same time get distinct ids (before, two could agree on one id, and
/// their messages crossed: a thread received another's).
#[test]
fn communicators_duplicated_at_once_by_threads_get_distinct_ids() {
    let _g = serial();
    for (p, n) in [("tcp", 2), ("tcp", 3), ("sockets", 2)] {
        run(n, &["dup-threads", "4", "50"], p, &[], 120).expect_line(
            &format!("{p} -n {n}"),
            &format!(
                "gex-tagged dup-threads: ok: 4 threads x 50 rounds duplicated communicators at once on {n} ranks, every id distinct, messages on their own communicator"
            ),
        );
    }
}

/// A communicator freed while a member has a receive pending on it: every
/// member is refused with `FreePending` naming that member, and the
/// communicator stays usable (before, the free went through: the receive
/// was left to match the next communicator to take the id, and a
/// synchronous sender could wait for ever for its acknowledgement).
#[test]
fn a_communicator_with_pending_requests_is_not_freed() {
    let _g = serial();
    for p in ["tcp", "sockets", "udp"] {
        run(2, &["free-pending"], p, &[], 60).expect_line(
            p,
            "gex-tagged free-pending: ok: a free with a receive pending refused on every member, naming it; the message received, then freed",
        );
    }
}
