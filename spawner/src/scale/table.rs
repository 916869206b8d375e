//! The model's tables as they appear in docs/launching.md ("Scaling
//! model"); a test checks that the document holds them as generated.

use super::memory::{self, Kind};
use super::{simulate, Params};
use std::fmt::Write;

/// Seconds, readably.
pub(super) fn time(s: f64) -> String {
    if s < 1e-3 {
        format!("{:.2} ms", s * 1e3)
    } else if s < 1.0 {
        format!("{:.1} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// Bytes, readably (binary units).
pub(super) fn bytes(b: f64) -> String {
    const K: f64 = 1024.0;
    if b < K {
        format!("{b:.0} B")
    } else if b < K * K {
        format!("{:.1} KiB", b / K)
    } else if b < K * K * K {
        format!("{:.1} MiB", b / (K * K))
    } else {
        format!("{:.2} GiB", b / (K * K * K))
    }
}

/// An integer with thousands separators.
fn count(v: usize) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn header(out: &mut String, first: &str, jobs: &[Params]) {
    let _ = write!(out, "| {first} |");
    for p in jobs {
        let h = if p.hosts == 1 { "host" } else { "hosts" };
        let _ = write!(out, " N = {} on {} {h} |", count(p.n), p.hosts);
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(jobs.len()));
    out.push('\n');
}

fn row(out: &mut String, name: &str, cells: impl IntoIterator<Item = String>) {
    let _ = write!(out, "| {name} |");
    for c in cells {
        let _ = write!(out, " {c} |");
    }
    out.push('\n');
}

/// The start-up table: the tree, the time each step adds (simulated), and
/// the bytes every tree edge carries down in the names allgather.
pub fn time_table(jobs: &[Params]) -> String {
    let sims: Vec<_> = jobs.iter().map(simulate).collect();
    let mut out = String::new();
    header(&mut out, "simulated", jobs);
    row(
        &mut out,
        "tree height / edges between hosts",
        sims.iter().zip(jobs).map(|(s, p)| {
            format!(
                "{} / {} of {}",
                s.shape.height,
                count(s.shape.cross_host_edges),
                count(p.n - 1)
            )
        }),
    );
    for i in 0..sims[0].steps().len() {
        let name = sims[0].steps()[i].0;
        row(&mut out, name, sims.iter().map(|s| time(s.steps()[i].1)));
    }
    row(
        &mut out,
        "connection attempts dropped by a full listen queue",
        sims.iter().map(|s| count(s.dropped_syns)),
    );
    row(
        &mut out,
        "**total**",
        sims.iter().map(|s| format!("**{}**", time(s.segment))),
    );
    row(
        &mut out,
        "names allgather: bytes down each tree edge",
        sims.iter().map(|s| bytes(s.names_frame as f64)),
    );
    out
}

/// The memory table: every item per rank, then the totals.
pub fn memory_table(jobs: &[Params]) -> String {
    let items: Vec<_> = jobs.iter().map(memory::per_rank).collect();
    let mut out = String::new();
    header(&mut out, "per rank (source)", jobs);
    for i in 0..items[0].len() {
        let it = items[0][i];
        let when = match it.kind {
            Kind::Persistent => "",
            Kind::Startup => "start-up only: ",
            Kind::PerConnection => "",
        };
        row(
            &mut out,
            &format!("{when}{} ({})", it.what, it.source.label()),
            items.iter().map(|v| bytes(v[i].bytes)),
        );
    }
    for (what, b, src) in memory::constant() {
        row(
            &mut out,
            &format!("{what} ({})", src.label()),
            jobs.iter().map(|_| bytes(b)),
        );
    }
    let fixed: f64 = memory::constant().iter().map(|c| c.1).sum();
    for (name, kind) in [
        ("**grows with N, held**", Kind::Persistent),
        ("**grows with N, start-up only**", Kind::Startup),
    ] {
        row(
            &mut out,
            name,
            items
                .iter()
                .map(|v| format!("**{}**", bytes(memory::total(v, kind)))),
        );
    }
    row(
        &mut out,
        "**independent of N**",
        jobs.iter().map(|_| format!("**{}**", bytes(fixed))),
    );
    out
}

/// Variations of one job: a name and what changes.
pub type Variant = (&'static str, fn(&mut Params));

/// Start-up of `base` and of each variant: the launcher's step, the
/// dropped connection attempts, the total.
pub fn what_if_table(base: &Params, variants: &[Variant]) -> String {
    let mut out = format!(
        "| N = {} on {} hosts | launcher step | dropped SYNs | total |\n|---|---:|---:|---:|\n",
        count(base.n),
        base.hosts
    );
    let mut all: Vec<(&str, Params)> = vec![("as modelled above", *base)];
    for (name, change) in variants {
        let mut p = *base;
        change(&mut p);
        all.push((name, p));
    }
    for (name, p) in all {
        let s = simulate(&p);
        row(
            &mut out,
            name,
            [time(s.steps()[1].1), count(s.dropped_syns), time(s.segment)],
        );
    }
    out
}
