//! Remote atomics (atomic domains) over real providers, through
//! gasnetrun-ofi: the `gex-atomics` program on 4 ranks. Which
//! implementation each provider gets is checked too: native where
//! `fi_*atomicvalid` confirms every operation (shm, sockets, and
//! `FI_PROVIDER=tcp` before libfabric 1.18, which is tcp;ofi_rxm; libfabric
//! 2's tcp has no FI_ATOMIC), by Active Message on udp;ofi_rxd (its profile
//! refuses native atomics) and with the shared-memory path on.

use std::time::Duration;
use tests::{job, serial, JobResult};

const PROG: &str = env!("CARGO_BIN_EXE_gex-atomics");

fn run(args: &[&str], provider: &str, vars: &[(&str, &str)]) -> JobResult {
    job(PROG, 4, args, provider, vars, Duration::from_secs(240))
}

/// Whether `FI_PROVIDER=tcp` gives tcp;ofi_rxm (libfabric before 1.18),
/// which performs atomics; libfabric 2's tcp endpoints have no FI_ATOMIC.
fn tcp_is_rxm() -> bool {
    conduit::ofi::runtime_version() < (1, 18)
}

/// (provider, implementation under auto) of the libfabric loaded.
fn providers() -> [(&'static str, &'static str); 4] {
    [
        ("shm", "native"),
        ("tcp", if tcp_is_rxm() { "native" } else { "am" }),
        ("sockets", "native"),
        ("udp", "am"),
    ]
}

#[test]
fn every_operation_and_type_with_each_implementation() {
    let _g = serial();
    for (p, auto) in providers() {
        for mode in ["auto", "am", "native"] {
            let r = run(&["all"], p, &[("GASNET_OFI_ATOMICS", mode)]);
            if p == "udp" && mode == "native" {
                assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
                assert!(
                    r.stderr.contains(
                        "GASNET_OFI_ATOMICS=native: udp;ofi_rxd cannot perform set on i32 natively in this job \
                         (the udp;ofi_rxd profile: libfabric 1.17's ofi_rxd crashes (SIGSEGV inside \
                         libfabric) on fi_fetch_atomic and fi_compare_atomic between ranks \
                         (known-issues.md)); use GASNET_OFI_ATOMICS=auto or am"
                    ),
                    "{}",
                    r.stderr
                );
                continue;
            }
            if p == "tcp" && mode == "native" && !tcp_is_rxm() {
                assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
                assert!(
                    r.stderr.contains(
                        "GASNET_OFI_ATOMICS=native: tcp cannot perform set on i32 natively in this job \
                         (the provider does not offer FI_ATOMIC here: its endpoints were opened without it); \
                         use GASNET_OFI_ATOMICS=auto or am"
                    ),
                    "{}",
                    r.stderr
                );
                continue;
            }
            let imp = if mode == "auto" { auto } else { mode };
            let by = [imp; 6].join(" ");
            r.expect_line(
                                &format!("{p} {mode}"),
                &format!("gex-atomics all: ok: 194 operation x type checks per rank (i32 u32 i64 u64 f32 f64 by {by})"),
            );
        }
    }
}

#[test]
fn concurrent_fetch_and_adds_sum_exactly() {
    let _g = serial();
    for (p, auto) in providers() {
        let r = run(&["fadd", "100000"], p, &[]);
        r.expect_line(
            p,
            &format!(
                "gex-atomics fadd: ok: 4 ranks x 100000 fetch-and-adds summed to 400000 ({auto})"
            ),
        );
    }
    let r = run(&["fadd", "100000"], "shm", &[("GASNET_OFI_ATOMICS", "am")]);
    r.expect_line("shm am", "summed to 400000 (am)");
}

#[test]
fn a_compare_and_swap_lock_guards_a_plain_counter() {
    let _g = serial();
    for (p, auto) in providers() {
        for mode in ["auto", "am"] {
            let r = run(&["lock", "300"], p, &[("GASNET_OFI_ATOMICS", mode)]);
            let imp = if mode == "auto" { auto } else { mode };
            r.expect_line(
                                &format!("{p} {mode}"),
                &format!("gex-atomics lock: ok: 4 ranks x 300 entries under a compare-and-swap lock counted 1200 ({imp}; "),
            );
        }
    }
}

/// Domains over the two halves of a split (`Team::atomic_domain`): each
/// team's fetch-and-adds, named by team rank, sum exactly on its own word;
/// members creating different domains are all refused.
#[test]
fn domains_over_split_teams() {
    let _g = serial();
    for (p, auto) in providers() {
        let r = run(&["team", "3000"], p, &[]);
        r.expect_line(
            p,
            &format!("gex-atomics team: ok: 2 teams x 3000 fetch-and-adds per member summed to team size x 3000 ({auto})"),
        );
    }
    let r = run(
        &["team", "3000"],
        "shm",
        &[("GASNET_SUPERNODE_MAXSIZE", "0")],
    );
    r.expect_line("shm, shared memory", "summed to team size x 3000 (am)");
}

#[test]
fn bad_requests_are_refused_and_nothing_is_performed() {
    let _g = serial();
    for (p, _) in providers() {
        let r = run(&["bad"], p, &[]);
        r.expect_line(
            p,
            "gex-atomics bad: ok: 5 bad requests refused and nothing was performed",
        );
    }
}

/// With the shared-memory path on (every rank on one host), `auto` goes by
/// Active Message, performed with CPU atomics through the mappings; forced
/// native atomics still work there (the provider's queues are read again).
#[test]
fn shared_memory_path() {
    let _g = serial();
    let on = [("GASNET_SUPERNODE_MAXSIZE", "0")];
    for (args, line) in [
        (&["all"][..], "by am am am am am am)"),
        (&["fadd", "100000"][..], "summed to 400000 (am)"),
        (&["lock", "300"][..], "counted 1200 (am; "),
        (&["bad"][..], "5 bad requests refused"),
    ] {
        run(args, "shm", &on).expect_line(&format!("{args:?}"), line);
    }
    let r = run(
        &["fadd", "20000"],
        "shm",
        &[
            ("GASNET_SUPERNODE_MAXSIZE", "0"),
            ("GASNET_OFI_ATOMICS", "native"),
        ],
    );
    r.expect_line(
        "native with the shared-memory path",
        "summed to 80000 (native)",
    );
}

/// `GASNET_VERBOSEENV=1` reports each domain's implementation and why.
#[test]
fn the_choice_is_reported_by_verboseenv() {
    let _g = serial();
    let v = [("GASNET_VERBOSEENV", "1")];
    let r = run(&["fadd", "10"], "shm", &v);
    r.expect_line("shm", "summed to 40 (native)");
    assert!(
        r.stderr.contains(
            "ofi-conduit: atomic domain over u64 with {set, get, fadd}: native (shm performs every operation (fi_*atomicvalid))"
        ),
        "{}",
        r.stderr
    );
    let r = run(&["fadd", "10"], "udp", &v);
    r.expect_line("udp", "summed to 40 (am)");
    assert!(
        r.stderr.contains(
            "ofi-conduit: atomic domain over u64 with {set, get, fadd}: am (udp;ofi_rxd cannot perform set on u64 natively in this job: the udp;ofi_rxd profile: libfabric 1.17's ofi_rxd crashes"
        ),
        "{}",
        r.stderr
    );
    let r = run(
        &["fadd", "10"],
        "tcp",
        &[("GASNET_VERBOSEENV", "1"), ("GASNET_OFI_ATOMICS", "am")],
    );
    assert!(
        r.stderr.contains(
            "ofi-conduit: atomic domain over u64 with {set, get, fadd}: am (GASNET_OFI_ATOMICS=am)"
        ),
        "{}",
        r.stderr
    );
    // Through Client::init, every variable the configuration reads is in
    // the record (rank 0 prints it; the launcher prints the exit-timeout
    // ones it reads too).
    for v in conduit::config::Config::VARIABLES {
        assert!(
            r.stderr.contains(&format!("ENV parameter: {v} = ")),
            "{v}:\n{}",
            r.stderr
        );
    }
    assert!(
        r.stderr
            .contains("ENV parameter: GASNET_OFI_ATOMICS = am\n"),
        "{}",
        r.stderr
    );
}

/// `atomic_domain_with`: a native and an AM-based domain side by side in
/// one job (`gex-atomics pair`), each performing what it was asked to and
/// its word summing exactly; native asked for one domain where the
/// provider cannot carry it is refused naming the caller's choice, the
/// provider and why.
#[test]
fn a_domain_chooses_its_own_implementation() {
    let _g = serial();
    let off = ("GASNET_SUPERNODE_MAXSIZE", "1");
    let r = run(&["pair", "200"], "shm", &[off, ("GASNET_VERBOSEENV", "1")]);
    r.expect_line("shm", "gex-atomics pair: ok: fetch-and-add latency native ");
    r.expect_line("shm", "(median of 15 pairs of 200; pairs ");
    for line in [
        "ofi-conduit: atomic domain over u64 with {get, fadd}: native (native chosen for this domain)",
        "ofi-conduit: atomic domain over u64 with {get, fadd}: am (am chosen for this domain)",
    ] {
        assert!(r.stderr.contains(line), "{line}:\n{}", r.stderr);
    }
    // The first rank to report ends the job (others may not print).
    let refused = |r: &JobResult, why: &str| {
        assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(why), "{why}:\n{}", r.stderr);
    };
    let native = "atomic domain created with AtomicsMode::Native: ";
    let remedy = "; create it with AtomicsMode::Auto or Am";
    // The job opened its endpoints without FI_ATOMIC.
    let r = run(&["pair", "20"], "shm", &[off, ("GASNET_OFI_ATOMICS", "am")]);
    refused(
        &r,
        &format!(
            "{native}shm cannot perform get on u64 natively in this job (the job was started with \
             GASNET_OFI_ATOMICS=am, so FI_ATOMIC was not requested for the provider's endpoints; \
             start it with auto or native to use the provider's atomics where it has them){remedy}"
        ),
    );
    // Every rank shares memory: the provider carries nothing between them.
    let r = run(&["pair", "20"], "shm", &[("GASNET_SUPERNODE_MAXSIZE", "0")]);
    refused(
        &r,
        &format!("{native}every rank of this job shares memory with this one, so the provider was opened for this rank's own endpoints only and carries nothing between ranks; start the job with GASNET_OFI_ATOMICS=native (or GASNET_SUPERNODE_MAXSIZE=1), or create the domain with AtomicsMode::Auto or Am"),
    );
    // pair needs a rank to time and one to serve.
    let r = job(
        PROG,
        1,
        &["pair", "20"],
        "shm",
        &[off],
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(1), "{}\n{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains("gex-atomics: rank 0: pair times rank 0's operations on rank 1: run it on 2 ranks or more"),
        "{}",
        r.stderr
    );
    // The udp;ofi_rxd profile refuses native atomics.
    let r = run(&["pair", "20"], "udp", &[off]);
    refused(
        &r,
        &format!(
            "{native}udp;ofi_rxd cannot perform get on u64 natively in this job (the udp;ofi_rxd profile: "
        ),
    );
}

/// `gex-atomics choose`: `Auto` chosen by the caller ends as
/// `GASNET_OFI_ATOMICS=auto` does (and `atomic_domain` follows the
/// variable when it says `native`), a split team's domain by AM counts
/// exactly, and ranks choosing differently are all refused (rank 0 with
/// the mismatch) whether native atomics can run (shm, tcp), cannot reach
/// the other ranks (every rank on one host) or are refused by the profile
/// (udp), as are ranks whose domains differ by one rank's invalid one.
#[test]
fn differing_choices_are_refused_on_every_rank() {
    let _g = serial();
    for (p, maxsize, env, auto) in [
        ("shm", "1", "auto", "native"),
        ("shm", "0", "auto", "am"),
        ("shm", "0", "native", "am"),
        (
            "tcp",
            "1",
            "auto",
            if tcp_is_rxm() { "native" } else { "am" },
        ),
        ("udp", "1", "auto", "am"),
    ] {
        let r = run(
            &["choose"],
            p,
            &[
                ("GASNET_SUPERNODE_MAXSIZE", maxsize),
                ("GASNET_OFI_ATOMICS", env),
            ],
        );
        r.expect_line(
            &format!("{p}, GASNET_SUPERNODE_MAXSIZE={maxsize}, GASNET_OFI_ATOMICS={env}"),
            &format!("gex-atomics choose: ok: auto chose {auto} as GASNET_OFI_ATOMICS=auto does; a team domain by am counted 200; differing choices and an invalid domain refused"),
        );
    }
}
