//! Small in-memory runs for the tests of the documents.

use super::bench::{BenchOutcome, Headline};
use super::markdown::Matrix;
use super::{core_of, ProgramResult, ProviderResult, Target, Verdict, PROGRAMS};
use conduit::select::listing::ProviderSummary;

/// A usable provider with these verdicts (1.5 s each) and benchmark.
pub fn provider(
    name: &str,
    verdicts: &[(&'static str, Verdict)],
    bench: BenchOutcome,
) -> ProviderResult {
    ProviderResult {
        facts: ProviderSummary {
            name: name.into(),
            core: core_of(name).into(),
            profile: name.into(),
            network: "n".into(),
            status: "usable".into(),
            min_libfabric: "1.5".into(),
            libfabric_check: "ok (needs >= 1.5, have 1.17)".into(),
            inject_size: 4096,
            max_msg_size: 1 << 30,
            mr_mode: "FI_MR_VIRT_ADDR".into(),
            mr_mode_bits: vec!["FI_MR_VIRT_ADDR".into()],
            devices: vec!["shm".into()],
            usable: true,
            unusable_reason: None,
            notes: "a note".into(),
        },
        target: Target {
            name: name.into(),
            fi_provider: name.into(),
            device: "shm".into(),
        },
        programs: verdicts
            .iter()
            .map(|(id, v)| ProgramResult {
                id,
                verdict: v.clone(),
                secs: 1.5,
            })
            .collect(),
        bench,
    }
}

/// A provider the conduit cannot use, and why: the programs `ids` not run.
pub fn unusable(name: &str, why: &str, ids: &[&'static str]) -> ProviderResult {
    let not = format!("the conduit cannot use it ({why})");
    let verdicts: Vec<(&'static str, Verdict)> = ids
        .iter()
        .map(|id| (*id, Verdict::NotRun(not.clone())))
        .collect();
    let mut p = provider(name, &verdicts, BenchOutcome::NotRun("not usable".into()));
    p.facts.status = "unsupported".into();
    p.facts.usable = false;
    p.facts.unusable_reason = Some(why.into());
    for r in &mut p.programs {
        r.secs = 0.0;
    }
    p
}

/// A finished benchmark with one figure, the AM round trip.
pub fn bench_done(ours: f64, raw: Option<f64>, other_cpu_pct: Option<f64>) -> BenchOutcome {
    BenchOutcome::Done {
        figures: vec![Headline {
            label: "AM Short round trip, 8 B",
            unit: "us".into(),
            ours,
            raw,
            ratio: raw.map(|r| ours / r),
        }],
        pingpong_ran: raw.is_some(),
        pingpong_how: if raw.is_some() {
            String::new()
        } else {
            "fi_pingpong not found".into()
        },
        other_cpu_pct,
    }
}

/// A run against `libfabric` of programs am-core and am-barrier over
/// `providers`, shm the one must-pass provider.
pub fn run(libfabric: &str, providers: Vec<ProviderResult>, offered: &[&str]) -> Matrix {
    Matrix {
        command: "tests/provider-matrix.sh --no-bench".into(),
        date: "2024-02-29 12:34 UTC".into(),
        took_secs: 300.0,
        os: "Debian GNU/Linux 12 (bookworm)".into(),
        libfabric: libfabric.into(),
        cpus: 2,
        deadline_secs: 180,
        must_pass: vec!["shm".into()],
        programs: PROGRAMS[1..3].iter().collect(),
        providers,
        offered: offered.iter().map(|s| s.to_string()).collect(),
    }
}
