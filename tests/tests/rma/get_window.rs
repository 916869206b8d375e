//! The get window (`GASNET_OFI_GET_WINDOW`) over real providers: floods
//! of gets by `gex-rma flood`.

use super::{refused, run, word};
use tests::serial;

/// `GASNET_OFI_GET_WINDOW`: over tcp;ofi_rxm (its profile's 4 MiB window)
/// floods of gets wait for the window and arrive whole; over libfabric
/// 2.x's native tcp and over shm (no window in their profiles) and with
/// the window off (0) none waits; a window smaller than a flood's gets
/// makes them wait on every provider; a value below the minimum is
/// refused with its text.
#[test]
fn get_floods_keep_to_the_get_window() {
    let _g = serial();
    let ok = "gex-rma flood: ok: 75 gets in 3 floods checked; GET_WINDOW_WAITS=";
    // `None`: the provider profile's window.
    for (p, window, want) in [
        ("tcp", None, None),
        ("tcp", Some("0"), Some(0)),
        ("tcp", Some("256K"), Some(256 << 10)),
        ("shm", None, None),
        ("shm", Some("1M"), Some(1 << 20)),
    ] {
        let vars: Vec<(&str, &str)> = window
            .map(|w| vec![("GASNET_OFI_GET_WINDOW", w)])
            .unwrap_or_default();
        let r = run(2, &["flood"], p, &vars, 180);
        let what = format!("{p} window {window:?}");
        assert_eq!(r.code, Some(0), "{what}: {}\n{}", r.stdout, r.stderr);
        assert_eq!(
            r.stdout.matches("gex-rma flood: ok").count(),
            1,
            "{what}: {}",
            r.stdout
        );
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with("gex-rma flood"))
            .unwrap_or_default();
        assert!(line.starts_with(ok), "{what}: {line}");
        let field = |name: &str| {
            word(line, name).unwrap_or_else(|| panic!("{what}: no {name}= in {}", line))
        };
        let provider = field("provider");
        let want = want.unwrap_or(match provider {
            "tcp;ofi_rxm" => 4 << 20,
            _ => 0,
        });
        assert_eq!(field("window"), want.to_string(), "{what}: {line}");
        let waits: u64 = field("GET_WINDOW_WAITS")
            .parse()
            .unwrap_or_else(|_| panic!("{what}: {line}"));
        assert_eq!(waits > 0, want > 0, "{what}: {line}");
    }
    refused(
        "flood",
        "tcp",
        "GASNET_OFI_GET_WINDOW",
        "4096",
        "GASNET_OFI_GET_WINDOW=\"4096\" is not accepted: expected 0 (no limit) or a size of \
at least 64K (unset: the provider profile's window; a number with an optional K, M, G or T suffix)",
    );
}
