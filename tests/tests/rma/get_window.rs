//! The get window (`GASNET_OFI_GET_WINDOW`) over real providers: floods
//! of gets by `gex-rma flood`.

use super::run;
use tests::serial;

/// `GASNET_OFI_GET_WINDOW`: over tcp;ofi_rxm (its profile's 2 MiB window)
/// floods of gets wait for the window and arrive whole; with the window
/// off (0) none waits; a window smaller than a flood's gets makes them
/// wait too; shm's profile has none; a value below the minimum is refused
/// with its text.
#[test]
fn get_floods_keep_to_the_get_window() {
    let _g = serial();
    let ok = "gex-rma flood: ok: 75 gets in 3 floods checked; GET_WINDOW_WAITS=";
    for (p, window, want_window, waits) in [
        ("tcp", None, 2 << 20, true),
        ("tcp", Some("0"), 0, false),
        ("tcp", Some("256K"), 256 << 10, true),
        ("shm", None, 0, false),
        ("shm", Some("1M"), 1 << 20, true),
    ] {
        let vars: Vec<(&str, &str)> = window
            .map(|w| vec![("GASNET_OFI_GET_WINDOW", w)])
            .unwrap_or_default();
        let r = run(2, &["flood"], p, &vars, 180);
        let what = format!("{p} window {window:?}");
        assert_eq!(r.code, Some(0), "{what}: {}\n{}", r.stdout, r.stderr);
        for line in r.stdout.lines().filter(|l| l.starts_with("gex-rma flood")) {
            assert!(line.starts_with(ok), "{what}: {line}");
            assert!(
                line.ends_with(&format!(" window={want_window}")),
                "{what}: {line}"
            );
            let n: u64 = line[ok.len()..]
                .split(' ')
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{what}: {line}"));
            assert_eq!(n > 0, waits, "{what}: {line}");
        }
        assert_eq!(
            r.stdout.matches("gex-rma flood: ok").count(),
            1,
            "{what}: {}",
            r.stdout
        );
    }
    let r = run(
        2,
        &["flood"],
        "tcp",
        &[("GASNET_OFI_GET_WINDOW", "4096")],
        60,
    );
    assert_ne!(r.code, Some(0), "{}", r.stdout);
    assert!(
        r.stderr.contains(
            "GASNET_OFI_GET_WINDOW=\"4096\" is not accepted: expected 0 (no limit) or a size of at least 64"
        ),
        "{}",
        r.stderr
    );
}
