//! `GASNET_STATSFILE` reports (one file per rank, or one shared file) and
//! `GASNET_WAIT_MODE` as the statistics show it.

use super::{ok, run};
use tests::serial;

#[test]
fn statistics_are_written_at_exit() {
    let _g = serial();
    let dir = std::env::temp_dir().join(format!("gex-stats-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pattern = dir.join("stats.%").display().to_string();
    let r = run(
        2,
        &["flood", "1000", "100"],
        "tcp",
        &[("GASNET_STATSFILE", &pattern)],
        120,
    );
    ok(&r, "tcp");
    let s0 = std::fs::read_to_string(dir.join("stats.0")).expect("rank 0 statistics");
    assert!(s0.contains("AM_REQUEST_SHORT_RECEIVED 2000\n"), "{s0}");
    assert!(s0.contains("AM_REQUEST_MEDIUM_RECEIVED 200\n"), "{s0}");
    // Rank 0 floods itself too: those AMs never touch the provider.
    assert!(s0.contains("AM_LOOPBACK 1100\n"), "{s0}");
    let s1 = std::fs::read_to_string(dir.join("stats.1")).expect("rank 1 statistics");
    assert!(s1.contains("AM_REQUEST_SHORT_SENT 10"), "{s1}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Without a `%`, every rank's report lands in the one file, whole, once
/// (a stale file from an earlier job is emptied first).
#[test]
fn statsfile_without_percent_keeps_every_ranks_report() {
    let _g = serial();
    let dir = std::env::temp_dir().join(format!("gex-stats1-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("stats");
    std::fs::write(&file, "# ofi-conduit statistics, rank 9\nstale\n").unwrap();
    let path = file.display().to_string();
    let r = run(4, &["core"], "shm", &[("GASNET_STATSFILE", &path)], 120);
    ok(&r, "shm");
    let s = std::fs::read_to_string(&file).expect("the shared statistics file");
    assert!(!s.contains("stale"), "{s}");
    for rank in 0..4 {
        let head = format!("# ofi-conduit statistics, rank {rank}\n");
        assert_eq!(s.matches(&head).count(), 1, "rank {rank}:\n{s}");
        let at = s.find(&head).unwrap();
        let report = &s[at..];
        let end = report[1..]
            .find("# ofi-conduit")
            .map_or(report.len(), |e| e + 1);
        // Each report is whole: its first counter through its last.
        assert!(report[..end].contains("AM_REQUEST_SHORT_SENT "), "{s}");
        assert!(report[..end].contains("NB_PUT_BLOCK "), "{s}");
    }
    assert_eq!(s.matches("# ofi-conduit statistics").count(), 4, "{s}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The value of `name` in a statistics file.
fn counter(stats: &str, name: &str) -> u64 {
    stats
        .lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {name} in\n{stats}"))
}

#[test]
fn wait_mode_spin_never_yields_and_yield_does() {
    let _g = serial();
    let dir = std::env::temp_dir().join(format!("gex-wait-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (mode, yields) in [("spin", false), ("yield", true)] {
        let pattern = dir.join(format!("{mode}.%")).display().to_string();
        let r = run(
            2,
            &["flood", "1000", "100"],
            "shm",
            &[("GASNET_STATSFILE", &pattern), ("GASNET_WAIT_MODE", mode)],
            120,
        );
        ok(&r, mode);
        // Rank 1 waits for rank 0's replies and barriers: it polls empty.
        let total: u64 = (0..2)
            .map(|rank| {
                let f = dir.join(format!("{mode}.{rank}"));
                let s = std::fs::read_to_string(&f).expect("statistics file");
                counter(&s, "WAIT_YIELDS")
            })
            .sum();
        assert_eq!(total > 0, yields, "GASNET_WAIT_MODE={mode}: {total} yields");
    }
    let _ = std::fs::remove_dir_all(&dir);
    let r = run(2, &["core"], "shm", &[("GASNET_WAIT_MODE", "block")], 60);
    r.assert_refused_by_launcher(
        "GASNET_WAIT_MODE=\"block\" is not accepted: expected spin, yield or auto",
    );
}

/// The shm profile receives AMs one per buffer, posted without
/// FI_MULTI_RECV, with libfabric before 2.0 (`am_recv_mode_before`): each
/// message's buffer is posted again (RECV_REPOSTS), and
/// `GASNET_VERBOSEENV=1` shows the mode in effect. A size set by the user
/// keeps multi-receive buffers, which are reposted only when full; with
/// libfabric 2.x the default is multi-receive as well.
#[test]
fn shm_profile_receive_mode() {
    let _g = serial();
    let dir = std::env::temp_dir().join(format!("gex-recvmode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let one_per_buffer = conduit::ofi::runtime_version().0 < 2;
    for (name, size, want_recv) in [("default", None, one_per_buffer), ("1M", Some("1M"), false)] {
        let pattern = dir.join(format!("{name}.%")).display().to_string();
        let mut vars = vec![
            ("GASNET_STATSFILE", pattern.as_str()),
            ("GASNET_VERBOSEENV", "1"),
        ];
        if let Some(s) = size {
            vars.push(("GASNET_OFI_RECEIVE_BUFF_SIZE", s));
        }
        let r = run(2, &["flood", "1000", "100"], "shm", &vars, 120);
        ok(&r, name);
        let s0 = std::fs::read_to_string(dir.join(format!("{name}.0"))).expect("statistics");
        let received = counter(&s0, "AM_REQUEST_SHORT_RECEIVED");
        let reposts = counter(&s0, "RECV_REPOSTS");
        if want_recv {
            assert!(
                reposts >= received / 2,
                "{name}: {reposts} reposts for {received} Shorts received\n{s0}"
            );
            assert!(
                r.stderr
                    .contains("GASNET_OFI_RECEIVE_BUFF_SIZE = recv   (default: shm's profile")
                    && r.stderr
                        .contains("NOTE: shm: AMs are received one per buffer"),
                "{name}: {}",
                r.stderr
            );
        } else {
            assert!(
                reposts < 20,
                "{name}: {reposts} reposts for {received} Shorts received\n{s0}"
            );
            assert!(
                !r.stderr.contains("GASNET_OFI_RECEIVE_BUFF_SIZE = recv"),
                "{name}: {}",
                r.stderr
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
