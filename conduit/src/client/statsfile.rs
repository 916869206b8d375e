//! `GASNET_STATSFILE`: where each rank's statistics report goes at exit.
//!
//! A `%` in the name becomes the rank: one file per rank. Without one,
//! every rank of a host shares the file: the first rank of each host
//! empties it at start-up (before the start-up barrier, so before any rank
//! can be writing), and at exit every rank appends its whole report in one
//! `write` to the file opened for appending, so no rank's counters are lost
//! and reports do not interleave. Each report starts with its rank's line
//! (`# ofi-conduit statistics, rank N`).

use std::io::Write;

/// The file rank `rank` writes, and whether it is shared (appended to).
pub(crate) fn path_for(pattern: &str, rank: usize) -> (String, bool) {
    if pattern.contains('%') {
        (pattern.replace('%', &rank.to_string()), false)
    } else {
        (pattern.to_string(), true)
    }
}

/// At start-up, on the first rank of each host: empty a shared statistics
/// file left by an earlier job. Failure is reported, not fatal (the
/// report at exit says it too).
pub(crate) fn prepare(pattern: &str, first_on_host: bool) {
    if !first_on_host || pattern.contains('%') {
        return;
    }
    if let Err(e) = std::fs::File::create(pattern) {
        gex_env::eprintln_whole!("ofi-conduit: cannot create GASNET_STATSFILE {pattern}: {e}");
    }
}

/// Write `report` for `rank`: a file of its own, or appended whole to the
/// shared file.
pub(crate) fn write(pattern: &str, rank: usize, report: &str) {
    let (path, shared) = path_for(pattern, rank);
    let r = if shared {
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .and_then(|mut f| f.write_all(report.as_bytes()))
    } else {
        std::fs::write(&path, report)
    };
    if let Err(e) = r {
        gex_env::eprintln_whole!("ofi-conduit: cannot write GASNET_STATSFILE {path}: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_is_the_rank_and_no_percent_is_shared() {
        assert_eq!(path_for("/t/s.%", 3), ("/t/s.3".into(), false));
        assert_eq!(path_for("/t/s", 3), ("/t/s".into(), true));
    }

    #[test]
    fn shared_file_is_emptied_then_appended_by_each_rank() {
        let dir = std::env::temp_dir().join(format!("gex-statsfile-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("stats").display().to_string();
        std::fs::write(&f, "old job\n").unwrap();
        prepare(&f, false);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "old job\n");
        prepare(&f, true);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "");
        write(&f, 0, "# rank 0\nA 1\n");
        write(&f, 1, "# rank 1\nA 2\n");
        assert_eq!(
            std::fs::read_to_string(&f).unwrap(),
            "# rank 0\nA 1\n# rank 1\nA 2\n"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
