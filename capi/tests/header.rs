//! The headers and the library agree: every name of the subset compiles
//! and links (tests/c/names.c), the headers are C++-clean, the functions
//! the headers declare are exactly the ones the library exports, the
//! constants Rust uses have the header's values, and the generated AM
//! families are current.

mod common;

use common::{compile, job, out_dir, repo, setup, source};
use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn every_name_of_the_subset_compiles_links_and_runs() {
    let _g = tests::serial();
    let s = setup();
    let exe = out_dir().join("names");
    compile(&s.shared, &source("names.c"), &exe, &[]);
    for n in [1usize, 2] {
        let r = job(&s.shared, &exe, n, &[], "tcp");
        assert_eq!(
            r.code,
            Some(0),
            "names.c with {n} ranks:\n{}\n{}",
            r.stdout,
            r.stderr
        );
        assert!(
            r.stdout
                .contains("names.c: ok: GASNET_ERR_NOT_READY No error, RELEASE=gasnet-ofi"),
            "{}",
            r.stdout
        );
        // gex_System_SetVerboseErrors(0) silenced the second attach's error.
        assert!(
            !r.stderr.contains("returning an error code"),
            "{}",
            r.stderr
        );
    }
}

/// The tools that need no client (tools.c: atomics of every width, with
/// threads, locks, thread keys, zero counts), built with -std=c99
/// -Werror against gasnet_tools.h alone, run as a plain process.
#[test]
fn the_tools_work_without_a_client() {
    let s = setup();
    let exe = out_dir().join("tools");
    compile(&s.shared, &source("tools.c"), &exe, &[]);
    let out = Command::new(&exe).output().expect("run tools");
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(
            "tools.c: ok: atomics, fixed-width atomics (4 threads x 100000 adds), locks, thread keys, zero counts"
        ),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Every installed header, each included twice (the include guards hold),
/// gasnet.h last so that what it takes from gasnetex.h is seen defined.
const ALL_HEADERS: &str = "#include <gasnetex.h>\n#include <gasnet_tools.h>\n\
    #include <gasnet_coll.h>\n#include <gasnet_vis.h>\n#include <gasnet_ratomic.h>\n\
    #include <gasnet.h>\n#include <gasnetex.h>\n#include <gasnet_tools.h>\n\
    #include <gasnet_coll.h>\n#include <gasnet_vis.h>\n#include <gasnet_ratomic.h>\n\
    #include <gasnet.h>\n";

/// The headers GASNet-EX's specification names, installed.
const HEADERS: [&str; 6] = [
    "gasnetex.h",
    "gasnet_tools.h",
    "gasnet.h",
    "gasnet_coll.h",
    "gasnet_vis.h",
    "gasnet_ratomic.h",
];

#[test]
fn headers_are_cxx_clean() {
    let s = setup();
    let src = out_dir().join("include-only.cpp");
    std::fs::write(
        &src,
        format!("{ALL_HEADERS}int main() {{ return GASNET_OK; }}\n"),
    )
    .unwrap();
    compile(
        &s.shared,
        &src,
        &out_dir().join("include-only-cxx"),
        // What C++ projects commonly build with: no `0` for a null pointer
        // and no C casts in inline functions of the headers.
        &[
            "-pedantic",
            "-Wzero-as-null-pointer-constant",
            "-Wold-style-cast",
        ],
    );
    let c = out_dir().join("include-only.c");
    std::fs::write(
        &c,
        format!("#include <gasnet_tools.h>\n{ALL_HEADERS}int main(void) {{ return GASNET_OK; }}\n"),
    )
    .unwrap();
    compile(
        &s.shared,
        &c,
        &out_dir().join("include-only-c"),
        &["-pedantic"],
    );
    // gasnetex.h alone gives C++ what gexheaders.c uses in C: the format
    // macros, the segment-size queries (declared, so no implicit int), the
    // page size, gasnet_getenv, the barrier flag and the tools names.
    let alone = out_dir().join("gasnetex-alone.cpp");
    std::fs::write(
        &alone,
        r#"#include <gasnetex.h>
#include <cstdio>
GASNETT_EXTERNC int helper(int x);
int helper(int x) { return x + 1; }
GASNETT_NEVER_INLINE(slow, static int slow(int x)) { return x - 1; }
int main() {
    uintptr_t (*local)(void) = gasnet_getMaxLocalSegmentSize;
    uintptr_t (*global)(void) = gasnet_getMaxGlobalSegmentSize;
    std::printf("%" PRIuSZ " %" PRIdSZ " %" PRIuPTR " %d %d %s\n", sizeof(int), static_cast<ptrdiff_t>(-1),
                static_cast<uintptr_t>(GASNET_PAGESIZE), GASNET_BARRIERFLAG_MISMATCH + GASNETT_CACHE_LINE_BYTES,
                INT_MAX % 2 + GASNETT_SPEC_VERSION_MAJOR + GASNETT_SPEC_VERSION_MINOR, gasnet_getenv("HOME") ? "env" : "none");
    gasnett_local_wmb();
    gasnett_local_rmb();
    gasnett_local_mb();
    return local == global ? 1 : slow(helper(GASNET_OK));
}
"#,
    )
    .unwrap();
    compile(
        &s.shared,
        &alone,
        &out_dir().join("gasnetex-alone-cxx"),
        &[
            "-pedantic",
            "-Wzero-as-null-pointer-constant",
            "-Wold-style-cast",
        ],
    );
}

/// Function names declared `extern` in a header.
fn declared(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    // Declarations span lines: join (without the preprocessor's lines,
    // whose macros may expand to declarations), then split at ';'.
    let code: Vec<&str> = text
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .collect();
    for decl in code.join(" ").split(';') {
        let d = decl.trim();
        let Some(at) = d.find("extern ") else {
            continue;
        };
        let d = &d[at..];
        if d.starts_with("extern \"C\"") {
            continue;
        }
        let Some(paren) = d.find('(') else { continue };
        let name = d[..paren]
            .trim_end()
            .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
            .next()
            .unwrap_or("");
        if !name.is_empty() {
            names.insert(name.to_string());
        }
    }
    names
}

#[test]
fn declared_functions_are_exactly_the_exported_ones() {
    let s = setup();
    let inc = s.shared.join("include");
    let mut want = BTreeSet::new();
    for h in HEADERS {
        want.extend(declared(&std::fs::read_to_string(inc.join(h)).unwrap()));
    }
    let so = s.shared.join("lib/libgasnet-ofi-seq.so");
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&so)
        .output()
        .expect("nm (binutils)");
    assert!(out.status.success());
    let got: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().nth(2))
        .filter(|n| {
            ["gex_", "gasnet_", "gasnett_", "gasnetc_"]
                .iter()
                .any(|p| n.starts_with(p))
        })
        .map(str::to_string)
        .collect();
    let missing: Vec<_> = want.difference(&got).collect();
    let undeclared: Vec<_> = got.difference(&want).collect();
    assert!(
        missing.is_empty(),
        "declared in the headers but not exported: {missing:?}"
    );
    assert!(
        undeclared.is_empty(),
        "exported but not declared in the headers: {undeclared:?}"
    );
    assert!(
        want.len() > 75,
        "only {} declarations found: {want:?}",
        want.len()
    );
}

#[test]
fn constants_agree_with_the_library() {
    use gasnet_ofi_seq::consts::*;
    let s = setup();
    let pairs: Vec<(&str, i64)> = vec![
        ("GASNET_OK", GASNET_OK.into()),
        ("GASNET_ERR_NOT_INIT", GASNET_ERR_NOT_INIT.into()),
        ("GASNET_ERR_RESOURCE", GASNET_ERR_RESOURCE.into()),
        ("GASNET_ERR_BAD_ARG", GASNET_ERR_BAD_ARG.into()),
        ("GASNET_ERR_NOT_READY", GASNET_ERR_NOT_READY.into()),
        (
            "GASNET_ERR_BARRIER_MISMATCH",
            GASNET_ERR_BARRIER_MISMATCH.into(),
        ),
        ("GEX_FLAG_IMMEDIATE", FLAG_IMMEDIATE.into()),
        ("GEX_FLAG_USES_GASNET1", FLAG_USES_GASNET1.into()),
        ("GEX_FLAG_ENABLE_LEAF_LC", FLAG_ENABLE_LEAF_LC.into()),
        ("GEX_FLAG_AM_SHORT", AM_SHORT.into()),
        ("GEX_FLAG_AM_MEDIUM", AM_MEDIUM.into()),
        ("GEX_FLAG_AM_LONG", AM_LONG.into()),
        ("GEX_FLAG_AM_MEDLONG", (AM_MEDIUM | AM_LONG).into()),
        ("GEX_FLAG_AM_REQUEST", AM_REQUEST.into()),
        ("GEX_FLAG_AM_REPLY", AM_REPLY.into()),
        ("GEX_FLAG_AM_REQREP", (AM_REQUEST | AM_REPLY).into()),
        ("GEX_TI_SRCRANK", TI_SRCRANK.into()),
        ("GEX_TI_EP", TI_EP.into()),
        ("GEX_TI_ENTRY", TI_ENTRY.into()),
        ("GEX_TI_IS_REQ", TI_IS_REQ.into()),
        ("GEX_TI_IS_LONG", TI_IS_LONG.into()),
        ("GEX_EC_GET", EC_GET.into()),
        ("GEX_EC_PUT", EC_PUT.into()),
        ("GEX_EC_LC", EC_LC.into()),
        ("(uintptr_t)GEX_EVENT_NO_OP", EVENT_NO_OP as i64),
        ("(uintptr_t)GEX_EVENT_NOW", EVENT_NOW as i64),
        ("(uintptr_t)GEX_EVENT_DEFER", EVENT_DEFER as i64),
        ("(uintptr_t)GEX_EVENT_GROUP", EVENT_GROUP as i64),
        ("GEX_RANK_INVALID", RANK_INVALID.into()),
        ("GEX_FLAG_RANK_IS_JOBRANK", FLAG_RANK_IS_JOBRANK.into()),
        ("GEX_FLAG_AD_ACQ", FLAG_AD_ACQ.into()),
        ("GEX_FLAG_AD_REL", FLAG_AD_REL.into()),
        (
            "GEX_FLAG_TM_SCRATCH_SIZE_RECOMMENDED",
            FLAG_TM_SCRATCH_SIZE_RECOMMENDED.into(),
        ),
        (
            "GEX_FLAG_TM_SCRATCH_SIZE_MIN",
            FLAG_TM_SCRATCH_SIZE_MIN.into(),
        ),
        ("GEX_FLAG_TM_NO_SCRATCH", FLAG_TM_NO_SCRATCH.into()),
        ("GEX_FLAG_GLOBALLY_QUIESCED", FLAG_GLOBALLY_QUIESCED.into()),
        ("GEX_FLAG_TM_GLOBAL_SCRATCH", FLAG_TM_GLOBAL_SCRATCH.into()),
        ("GEX_FLAG_TM_LOCAL_SCRATCH", FLAG_TM_LOCAL_SCRATCH.into()),
        (
            "GEX_FLAG_TM_SYMMETRIC_SCRATCH",
            FLAG_TM_SYMMETRIC_SCRATCH.into(),
        ),
        (
            "GEX_FLAG_SCRATCH_SEG_OFFSET",
            FLAG_SCRATCH_SEG_OFFSET.into(),
        ),
        ("GEX_DT_I32", DT_I32.into()),
        ("GEX_DT_U32", DT_U32.into()),
        ("GEX_DT_I64", DT_I64.into()),
        ("GEX_DT_U64", DT_U64.into()),
        ("GEX_DT_FLT", DT_FLT.into()),
        ("GEX_DT_DBL", DT_DBL.into()),
        ("GEX_DT_USER", DT_USER.into()),
        ("GEX_OP_ADD", OP_ADD.into()),
        ("GEX_OP_FADD", OP_FADD.into()),
        ("GEX_OP_MULT", OP_MULT.into()),
        ("GEX_OP_FMULT", OP_FMULT.into()),
        ("GEX_OP_MIN", OP_MIN.into()),
        ("GEX_OP_FMIN", OP_FMIN.into()),
        ("GEX_OP_MAX", OP_MAX.into()),
        ("GEX_OP_FMAX", OP_FMAX.into()),
        ("GEX_OP_SUB", OP_SUB.into()),
        ("GEX_OP_FSUB", OP_FSUB.into()),
        ("GEX_OP_INC", OP_INC.into()),
        ("GEX_OP_FINC", OP_FINC.into()),
        ("GEX_OP_DEC", OP_DEC.into()),
        ("GEX_OP_FDEC", OP_FDEC.into()),
        ("GEX_OP_AND", OP_AND.into()),
        ("GEX_OP_FAND", OP_FAND.into()),
        ("GEX_OP_OR", OP_OR.into()),
        ("GEX_OP_FOR", OP_FOR.into()),
        ("GEX_OP_XOR", OP_XOR.into()),
        ("GEX_OP_FXOR", OP_FXOR.into()),
        ("GEX_OP_SET", OP_SET.into()),
        ("GEX_OP_SWAP", OP_SWAP.into()),
        ("GEX_OP_CAS", OP_CAS.into()),
        ("GEX_OP_FCAS", OP_FCAS.into()),
        ("GEX_OP_GET", OP_GET.into()),
        ("GEX_OP_USER", OP_USER.into()),
        ("GEX_OP_USER_NC", OP_USER_NC.into()),
        ("GEX_OP_TO_FETCHING(GEX_OP_SET)", OP_SWAP.into()),
        ("GEX_OP_TO_FETCHING(GEX_OP_CAS)", OP_FCAS.into()),
        ("GEX_OP_TO_NONFETCHING(GEX_OP_FXOR)", OP_XOR.into()),
        (
            "sizeof(gex_Memvec_t)",
            std::mem::size_of::<gasnet_ofi_seq::gex_Memvec_t>() as i64,
        ),
        ("GASNET_BARRIERFLAG_ANONYMOUS", BARRIERFLAG_ANONYMOUS.into()),
        ("GASNET_BARRIERFLAG_MISMATCH", BARRIERFLAG_MISMATCH.into()),
        ("GASNET_PAGESIZE", PAGESIZE as i64),
        ("GASNET_BARRIERFLAG_UNNAMED", BARRIERFLAG_UNNAMED.into()),
        ("GASNET_WAIT_SPIN", WAIT_SPIN.into()),
        ("GASNET_WAIT_BLOCK", WAIT_BLOCK.into()),
        ("GASNET_WAIT_SPINBLOCK", WAIT_SPINBLOCK.into()),
        (
            "sizeof(gex_AM_Entry_t)",
            std::mem::size_of::<gasnet_ofi_seq::gex_AM_Entry_t>() as i64,
        ),
        (
            "sizeof(gex_Token_Info_t)",
            std::mem::size_of::<gasnet_ofi_seq::gex_Token_Info_t>() as i64,
        ),
        (
            "sizeof(gex_HSL_t)",
            std::mem::size_of::<gasnet_ofi_seq::gex_HSL_t>() as i64,
        ),
        (
            "sizeof(gex_RankInfo_t)",
            std::mem::size_of::<gasnet_ofi_seq::gex_RankInfo_t>() as i64,
        ),
    ];
    let mut c = String::from("#include <gasnetex.h>\n#include <stdio.h>\nint main(void) {\n");
    for (name, _) in &pairs {
        c.push_str(&format!("    printf(\"%lld\\n\", (long long)({name}));\n"));
    }
    c.push_str("    return 0;\n}\n");
    let src = out_dir().join("constants.c");
    std::fs::write(&src, c).unwrap();
    let exe = out_dir().join("constants");
    compile(&s.shared, &src, &exe, &[]);
    let out = Command::new(&exe).output().unwrap();
    let got: Vec<i64> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    for ((name, want), got) in pairs.iter().zip(&got) {
        assert_eq!(
            got, want,
            "{name}: the header says {got}, the library uses {want}"
        );
    }
    assert_eq!(got.len(), pairs.len());
}

#[test]
fn generated_am_families_are_current() {
    let out = out_dir();
    std::fs::create_dir_all(&out).unwrap();
    let fresh = ["gasnetex.h", "gasnet.h"].map(|h| (h, out.join(format!("generated-{h}"))));
    let st = Command::new("python3")
        .arg(repo().join("capi/gen/am_families.py"))
        .args(fresh.iter().map(|(_, p)| p))
        .status()
        .expect("python3 not found: install it (apt-get install python3; scripts/setup.sh does)");
    assert!(st.success());
    for (h, p) in &fresh {
        let want = std::fs::read_to_string(p).unwrap();
        let have = std::fs::read_to_string(repo().join("capi/include").join(h)).unwrap();
        assert!(
            want == have,
            "capi/include/{h} is stale: run python3 capi/gen/am_families.py"
        );
    }
}
