//! The C and C++ programs of tests/c, built against an installed prefix
//! with the pkg-config command (shared and static), pass under the
//! installed gasnetrun-ofi with 2 and 4 ranks on shm and tcp;ofi_rxm. On
//! shm the ranks use the shared-memory path (the default: one supernode,
//! no provider traffic); on tcp;ofi_rxm it is off, so the provider carries
//! every message.

mod common;

use common::{build, job_with, setup};
use std::path::Path;
use std::process::Command;

/// Whether `exe` needs libgasnet-ofi-seq.so at run time.
fn links_shared(exe: &Path) -> bool {
    let out = Command::new("readelf")
        .arg("-d")
        .arg(exe)
        .output()
        .expect("readelf (binutils)");
    String::from_utf8_lossy(&out.stdout).contains("libgasnet-ofi-seq.so")
}

fn program(name: &str, ok: &str) {
    let _g = tests::serial();
    let s = setup();
    for (prefix, shared) in [(&s.shared, true), (&s.static_, false)] {
        let exe = build(prefix, name);
        assert_eq!(
            links_shared(&exe),
            shared,
            "{}: linked the wrong library",
            exe.display()
        );
        for provider in ["shm", "tcp"] {
            for n in [2usize, 4] {
                let maxsize = if provider == "shm" { "0" } else { "1" };
                let vars = [("GASNET_SUPERNODE_MAXSIZE", maxsize)];
                let r = job_with(prefix, &exe, n, &[], provider, &vars);
                let what = format!(
                    "{name} ({}) on {provider} with {n} ranks, GASNET_SUPERNODE_MAXSIZE={maxsize}",
                    if shared { "shared" } else { "static" }
                );
                assert_eq!(r.code, Some(0), "{what}:\n{}\n{}", r.stdout, r.stderr);
                for rank in 0..n {
                    let line = format!("rank {rank} of {n}: ok: ");
                    assert!(
                        r.stdout.contains(&line) && r.stdout.contains(ok),
                        "{what}: no {line:?} with {ok:?}:\n{}\n{}",
                        r.stdout,
                        r.stderr
                    );
                }
            }
        }
    }
}

#[test]
fn am_every_category_and_argument_count() {
    program("am.c", "3 categories x 0..16 arguments");
}

#[test]
fn rma_every_form() {
    program("rma.c", "transfers of 0 B..4 MiB checked");
}

#[test]
fn barriers_named_anonymous_and_mismatched() {
    program(
        "barrier.c",
        "notify/wait id and flag rules, forced mismatches); mismatch reported as GASNET_ERR_BARRIER_MISMATCH",
    );
}

/// Two and three gex_Coll_BarrierNB in flight on the primordial team, a
/// BarrierNB then a BarrierBlocking, world barriers interleaved with a
/// split team's: no rank leaves barrier k before every rank entered it.
#[test]
fn concurrent_barriers_on_the_primordial_team() {
    program("barrier_nb.c", "concurrent NB barriers leave in order");
}

/// A program that includes only gasnetex.h and gasnet_coll.h,
/// gasnet_vis.h and gasnet_ratomic.h, and uses every name those must
/// provide without gasnet.h (the format macros, the segment-size queries,
/// gasnet_getenv, GASNET_BARRIERFLAG_MISMATCH, the tools macros): it
/// builds with -Werror and -std=c99, and runs a reduction, a VIS put and
/// an atomic.
#[test]
fn a_gasnetex_h_only_program_with_the_specification_headers() {
    program(
        "gexheaders.c",
        "ok: gasnetex.h-only names; 2 VIS pieces 64 bytes apart",
    );
}

#[test]
fn teams_collectives_and_atomic_domains() {
    program("coll.c", "matrix products");
}

#[test]
fn gasnet1_api() {
    program("legacy.c", "GASNet-1 AMs, puts, gets and syncs checked");
}

#[test]
fn vis_vector_indexed_and_strided() {
    program(
        "vis.c",
        "vector, indexed, strided and transposing transfers checked",
    );
}

/// GASNet-1's VIS (gasnet_putv_*, _puti_*, _puts_* and the gets, in
/// their _bulk, _nb_bulk and _nbi_bulk forms), GASNet-1's strided
/// convention (count[0] in bytes) included.
#[test]
fn gasnet1_vis_vector_indexed_and_strided() {
    program(
        "vis1.c",
        "GASNet-1 vector, indexed and strided transfers checked",
    );
}

/// GASNet-1's collectives prototype as provided: gasnet_coll_init, the
/// team queries, and broadcasts from every root with every sync flag
/// combination under LOCAL and SINGLE addressing, blocking and _nb;
/// IN_ALLSYNC and OUT_ALLSYNC checked by what they promise.
#[test]
fn gasnet1_broadcast_with_every_sync() {
    program(
        "coll1.c",
        "GASNet-1 broadcasts checked, IN_ALLSYNC and OUT_ALLSYNC kept",
    );
}

/// coll.c's atomic domains with the provider's atomics forced (shm with
/// the shared-memory path off, sockets) and by Active Message (shm,
/// tcp;ofi_rxm): every operation on every type, the exact fetch-and-add
/// sums and the lock, with `GASNET_VERBOSEENV` saying which was used.
/// Under `auto` (shm), the domain created with GEX_FLAG_AD_FAVOR_MY_RANK
/// goes by Active Message (CPU atomics on this rank's own segment) while
/// the others are native; a forced mode wins over the hint.
#[test]
fn atomic_domains_native_and_by_active_message() {
    let _g = tests::serial();
    let s = setup();
    let exe = build(&s.shared, "coll.c");
    for (provider, mode) in [
        ("shm", "native"),
        ("shm", "am"),
        ("shm", "auto"),
        ("sockets", "native"),
        ("tcp", "am"),
    ] {
        let vars = [
            ("GASNET_SUPERNODE_MAXSIZE", "1"),
            ("GASNET_OFI_ATOMICS", mode),
            ("GASNET_VERBOSEENV", "1"),
        ];
        let r = job_with(&s.shared, &exe, 4, &[], provider, &vars);
        let what = format!("coll.c on {provider} with GASNET_OFI_ATOMICS={mode}");
        assert_eq!(r.code, Some(0), "{what}:\n{}\n{}", r.stdout, r.stderr);
        assert_eq!(
            r.stdout.matches(": ok: ").count(),
            4,
            "{what}:\n{}\n{}",
            r.stdout,
            r.stderr
        );
        let favoured =
            "atomic domain over u64 with {set, get, fadd}: am (am chosen for this domain)";
        if mode == "auto" {
            for line in [
                ": native (shm performs every operation",
                favoured,
                "ofi-conduit: gex_AD_Create: GEX_FLAG_AD_FAVOR_MY_RANK under GASNET_OFI_ATOMICS=auto: by Active Message",
            ] {
                assert!(
                    r.stderr.contains(line),
                    "{what}: no {line:?} in\n{}",
                    r.stderr
                );
            }
            continue;
        }
        let line = format!(": {mode} (GASNET_OFI_ATOMICS={mode})");
        assert!(
            r.stderr.contains(&line) && !r.stderr.contains("chosen for this domain"),
            "{what}: no {line:?} (or a domain chose for itself) in\n{}",
            r.stderr
        );
    }
}

#[test]
fn negotiated_payload_ams() {
    program(
        "npam.c",
        "LEAST_ALLOC Medium 8192 bytes, Long 1048576 bytes",
    );
}

#[test]
fn a_cxx_program() {
    program("cxx.cpp", "ring of ");
}

#[test]
fn the_installed_launcher_lists_providers() {
    // `gasnetrun-ofi --list-providers` runs the gex-providers installed
    // beside it (a C user has no cargo build directory).
    let s = setup();
    let out = Command::new(s.shared.join("bin/gasnetrun-ofi"))
        .arg("--list-providers")
        .env_remove("FI_PROVIDER")
        .output()
        .expect("the installed gasnetrun-ofi runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("tcp;ofi_rxm") && text.contains("status:"),
        "{text}"
    );
}
