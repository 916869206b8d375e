//! The ranks' output through the launcher: whole lines (never two ranks'
//! pieces in one line), every line of every rank, with and without `-v`.

mod common;

use common::*;
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);
const RANKS: usize = 4;
const LINES: usize = 300;

/// Each rank writes its lines in three `write`s each (the shell's `printf`
/// writes at once), to stderr and stdout at the same time as the others.
fn script() -> String {
    format!(
        "i=0; while [ $i -lt {LINES} ]; do i=$((i+1)); \
         printf 'rank-%s-' \"$GASNET_OFI_RANK\" >&2; printf 'line-%s' $i >&2; printf '\\n' >&2; \
         printf 'out-%s-' \"$GASNET_OFI_RANK\"; printf 'line-%s' $i; printf '\\n'; done; \
         printf 'no-newline-%s' \"$GASNET_OFI_RANK\""
    )
}

fn check(lines: &[String], prefix: bool, what: &str, head: &str, tail: bool) {
    let mut seen = vec![vec![false; LINES + 1]; RANKS];
    let mut last = [false; RANKS];
    for l in lines {
        let (rank_tag, body) = if prefix {
            let (t, b) = l
                .split_once("] ")
                .unwrap_or_else(|| panic!("{what}: no [rank] prefix: {l:?}"));
            (Some(t.trim_start_matches('[').to_string()), b)
        } else {
            (None, l.as_str())
        };
        if let Some(r) = body.strip_prefix("no-newline-") {
            let r: usize = r.parse().unwrap_or_else(|_| panic!("{what}: {l:?}"));
            last[r] = true;
            continue;
        }
        let rest = body
            .strip_prefix(head)
            .unwrap_or_else(|| panic!("{what}: a line not whole: {l:?}"));
        let (r, n) = rest
            .split_once("-line-")
            .unwrap_or_else(|| panic!("{what}: a line not whole: {l:?}"));
        let r: usize = r.parse().unwrap_or_else(|_| panic!("{what}: {l:?}"));
        let n: usize = n.parse().unwrap_or_else(|_| panic!("{what}: {l:?}"));
        if let Some(t) = rank_tag {
            assert_eq!(t, r.to_string(), "{what}: prefix of {l:?}");
        }
        assert!(!seen[r][n], "{what}: twice: {l:?}");
        seen[r][n] = true;
    }
    for (r, s) in seen.iter().enumerate() {
        let missing: Vec<_> = (1..=LINES).filter(|&n| !s[n]).collect();
        assert!(
            missing.is_empty(),
            "{what}: rank {r} lost lines {missing:?}"
        );
    }
    if tail {
        assert!(
            last.iter().all(|&x| x),
            "{what}: a last line without newline was lost"
        );
    }
}

#[test]
fn lines_stay_whole_and_none_is_lost() {
    let _g = serial();
    for verbose in [false, true] {
        let t = token("lines");
        let s = script();
        let mut args = vec!["-n", "4"];
        if verbose {
            args.push("-v");
        }
        args.extend(["sh", "-c", &s, &t]);
        let d = Job::start(&t, &args, &[]).wait(DEADLINE);
        assert_eq!(d.code, Some(0), "{:?}", d.err);
        let what = if verbose { "-v" } else { "no -v" };
        let err: Vec<String> = d
            .err
            .iter()
            .filter(|l| !l.starts_with("gasnetrun-ofi"))
            .cloned()
            .collect();
        check(&err, verbose, &format!("stderr, {what}"), "rank-", false);
        check(&d.out, verbose, &format!("stdout, {what}"), "out-", true);
    }
}

/// A write of the ranks' output that fails (here stdout is `/dev/full`)
/// is reported once and the job does not exit 0: output is not lost
/// silently. The job itself runs to its end (every rank's output is still
/// read, so no rank blocks on a full pipe).
#[test]
fn a_failed_output_write_is_reported() {
    let _g = serial();
    let t = token("full");
    let mut cmd = std::process::Command::new("sh");
    cmd.args([
        "-c",
        "exec \"$0\" -n 2 sh -c 'echo one; echo two' \"$1\" > /dev/full",
    ])
    .arg(launcher())
    .arg(&t);
    let d = Job::start_cmd(&t, cmd).wait(DEADLINE);
    assert_eq!(d.code, Some(1), "{:?}", d.err);
    assert_eq!(
        d.err,
        [
            "gasnetrun-ofi: writing the ranks' standard output failed: No space left on device \
          (os error 28); the rest of it was lost"
        ],
    );
}
