//! Texts the documents share: dates, durations, table cells, figures, and
//! the "How to regenerate" section.

use std::fmt::Write;
use std::time::Duration;

/// `YYYY-MM-DD HH:MM UTC` for a time since the Unix epoch.
pub fn utc_text(since_epoch: Duration) -> String {
    let secs = since_epoch.as_secs();
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Howard Hinnant's days-to-civil.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

/// `PRETTY_NAME` from an os-release file's text.
pub fn pretty_name(os_release: &str) -> Option<String> {
    os_release.lines().find_map(|l| {
        let v = l.strip_prefix("PRETTY_NAME=")?.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|x| x.strip_suffix('"'))
            .unwrap_or(v);
        Some(v.to_string())
    })
}

/// `12.3 s`, or `2 min 5 s` from two minutes on.
pub fn duration_text(secs: f64) -> String {
    if secs < 120.0 {
        format!("{secs:.1} s")
    } else {
        let s = secs.round() as u64;
        format!("{} min {} s", s / 60, s % 60)
    }
}

/// The script that runs the matrix (named in the generated files).
pub const SCRIPT: &str = "tests/provider-matrix.sh";

/// Make `text` safe inside a Markdown table cell.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// `text` cut to `max` characters (with `...`).
pub fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        let mut s: String = text.chars().take(max).collect();
        s.push_str("...");
        s
    }
}

/// A ratio with two significant digits at least (`1.25`, `0.0012`).
pub fn ratio_text(r: f64) -> String {
    let decimals = if r > 0.0 && r < 0.1 {
        (1.0 - r.log10().floor()) as usize
    } else {
        2
    };
    format!("{r:.decimals$}")
}

/// A benchmark figure with its unit: `2.50 µs`, `1234 MB/s`.
pub fn figure(v: f64, unit: &str) -> String {
    if unit == "us" {
        format!("{v:.2} µs")
    } else {
        format!("{v:.0} {unit}")
    }
}

/// The "How to regenerate" section, the same in the per-version documents
/// and the overview.
pub fn regenerate(s: &mut String) {
    let _ = writeln!(s, "## How to regenerate\n");
    let _ = writeln!(
        s,
        "Run from the repository root, once per libfabric version, and commit the results (`docs/providers.md` and `docs/providers/`) whenever the conduit's behaviour on a provider changes:\n"
    );
    let _ = writeln!(s, "```sh");
    for (cmd, what) in [
        (
            format!("bash {SCRIPT}"),
            "libfabric 1.17 (the system's): every provider; builds release first",
        ),
        (
            format!("(source scripts/libfabric-2.env && bash {SCRIPT})"),
            "libfabric 2.1 (.libfabric-2), built in target/libfabric-2",
        ),
        (
            format!("bash {SCRIPT} --providers shm,tcp --no-bench"),
            "a subset, without the benchmark",
        ),
        (
            format!("bash {SCRIPT} --must-pass none --out -"),
            "never fail; the run's document to standard output only",
        ),
    ] {
        let _ = writeln!(s, "{cmd:<66} # {what}");
    }
    let _ = writeln!(s, "```\n");
    let _ = writeln!(
        s,
        "Each run is for the libfabric it runs against, version X.Y: the default build uses the system's libfabric (Debian's 1.17); `source scripts/libfabric-2.env` (in a subshell, as above, since it changes the shell's environment) points the build and the jobs at the libfabric 2.1 that `bash scripts/setup.sh --libfabric=2` built in `.libfabric-2/`. A run writes `docs/providers/libfabric-X.Y.md` (its full document) and `docs/providers/libfabric-X.Y.json` (its summary), then rewrites the overview `docs/providers.md` from every `docs/providers/libfabric-*.json` present, side by side sorted by version: run the script once per version, in either order; a version not run again keeps its last results. With `--out FILE` (or `-` for standard output) a run writes only its document there, and leaves `docs/providers/` and the overview alone.\n"
    );
    let _ = writeln!(
        s,
        "The script builds `cargo build --release -p tests -p conduit -p gasnetrun-ofi -p bench -p gex-examples --bins --examples` (honouring `CARGO_TARGET_DIR`) and runs `gex-matrix` with its arguments (`gex-matrix --help` lists them: `--providers`, `--programs`, `--deadline`, `--no-bench`, `--must-pass`, `--out`). It exits 1 when a program (or the benchmark) failed on a must-pass provider (default `shm,tcp`); failures on the other providers are recorded and do not fail the run. Progress goes to standard error."
    );
}

/// `a b 'c d'`: arguments quoted for a shell where needed.
pub fn shell_join(args: &[String]) -> String {
    args.iter()
        .map(|a| {
            let plain = !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-./,=:+@".contains(c));
            if plain {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts() {
        assert_eq!(utc_text(Duration::from_secs(0)), "1970-01-01 00:00 UTC");
        assert_eq!(
            utc_text(Duration::from_secs(1_709_210_096)),
            "2024-02-29 12:34 UTC"
        );
        assert_eq!(
            pretty_name("NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n"),
            Some("Debian GNU/Linux 12 (bookworm)".into())
        );
        assert_eq!(pretty_name("NAME=x\n"), None);
        assert_eq!(duration_text(3.21), "3.2 s");
        assert_eq!(duration_text(425.0), "7 min 5 s");
        assert_eq!(ratio_text(1.254), "1.25");
        assert_eq!(ratio_text(0.00123), "0.0012");
        assert_eq!(ratio_text(0.05), "0.050");
        assert_eq!(ratio_text(59.4), "59.40");
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        assert_eq!(cut("abcdef", 3), "abc...");
        assert_eq!(cut("abc", 3), "abc");
        assert_eq!(figure(2.5, "us"), "2.50 µs");
        assert_eq!(figure(1234.4, "MB/s"), "1234 MB/s");
    }

    #[test]
    fn command_lines_are_quoted_for_a_shell() {
        let a: Vec<String> = [
            "gex-matrix",
            "--providers",
            "tcp;ofi_rxm",
            "it's",
            "--out",
            "-",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            shell_join(&a),
            "gex-matrix --providers 'tcp;ofi_rxm' 'it'\\''s' --out -"
        );
    }
}
