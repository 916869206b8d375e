//! Start-up over the real providers of this machine, run as a process.

use std::process::Command;
use std::time::Duration;
use tests::run_with_deadline;

fn startup(vars: &[(&str, &str)]) -> (i32, String, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gex-startup"));
    tests::clear_fabric_env(&mut cmd);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = run_with_deadline(&mut cmd, Duration::from_secs(60));
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn default_start_picks_shm_on_one_host() {
    let (code, out, err) = startup(&[]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("provider=shm domain=shm profile=shm status=usable"),
        "{out}"
    );
    // shm is "usable" only because it reaches one host: on one host it
    // does not warn.
    assert!(!err.contains("WARNING"), "{err}");
}

/// What `FI_PROVIDER=tcp` selects: the native tcp RDM provider with
/// libfabric 2.x (named in full, it wins over `tcp;ofi_rxm`), tcp;ofi_rxm
/// with 1.x (which has no native one).
fn tcp_selects() -> &'static str {
    if conduit::ofi::runtime_version().0 >= 2 {
        "provider=tcp domain=lo"
    } else {
        "provider=tcp;ofi_rxm domain=lo"
    }
}

#[test]
fn each_test_provider_starts() {
    for (fi, dev, want) in [
        ("shm", None, "provider=shm domain=shm"),
        ("tcp", Some("lo"), tcp_selects()),
        ("tcp;ofi_rxm", Some("lo"), "provider=tcp;ofi_rxm domain=lo"),
        ("udp", Some("lo"), "provider=udp;ofi_rxd domain=lo"),
        ("sockets", Some("lo"), "provider=sockets domain=lo"),
    ] {
        let mut vars = vec![("FI_PROVIDER", fi), ("GASNET_QUIET", "1")];
        if let Some(d) = dev {
            vars.push(("GASNET_OFI_DEVICE", d));
        }
        let (code, out, err) = startup(&vars);
        assert_eq!(code, 0, "{fi}: {err}");
        assert!(out.starts_with(want), "{fi}: {out}");
        assert!(
            err.is_empty(),
            "GASNET_QUIET=1 must silence the warning: {err}"
        );
    }
}

#[test]
fn fi_provider_nonexistent_names_the_variable_and_lists_providers() {
    let (code, _, err) = startup(&[("FI_PROVIDER", "nonexistent")]);
    assert_eq!(code, 1);
    let line = err.lines().last().unwrap_or_default();
    assert!(
        line.starts_with("gex-startup: FI_PROVIDER=\"nonexistent\" matches no usable provider; usable providers here: "),
        "{err}"
    );
    for p in ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"] {
        assert!(line.contains(p), "{line}");
    }
}

#[test]
fn device_nonexistent_names_the_variable_and_lists_devices() {
    let (code, _, err) = startup(&[("GASNET_OFI_DEVICE", "nonexistent")]);
    assert_eq!(code, 1);
    let line = err.lines().last().unwrap_or_default();
    assert!(
        line.starts_with("gex-startup: GASNET_OFI_DEVICE=\"nonexistent\" names no usable device; available devices: "),
        "{err}"
    );
    assert!(
        line.contains("shm (shm)") && line.contains("lo (tcp;ofi_rxm)"),
        "{line}"
    );
}

#[test]
fn bad_configuration_value_stops_start_up_with_one_line() {
    let (code, _, err) = startup(&[("GASNET_OFI_MAX_MEDIUM", "100")]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim_end(),
        "gex-startup: GASNET_OFI_MAX_MEDIUM=\"100\" is not accepted: expected a size from 512 bytes to 1G (a number with an optional K, M, G or T suffix)"
    );
}

#[test]
fn provider_include_narrows_selection() {
    let (code, out, err) = startup(&[
        ("GASNET_OFI_PROVIDER_INCLUDE", "tcp;ofi_rxm"),
        ("GASNET_OFI_DEVICE", "lo"),
        ("GASNET_QUIET", "1"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("provider=tcp;ofi_rxm domain=lo"), "{out}");
}

#[test]
fn provider_variables_that_disagree_stop_start_up_with_one_line() {
    let (code, _, err) = startup(&[
        ("FI_PROVIDER", "shm"),
        ("GASNET_OFI_PROVIDER_INCLUDE", "udp"),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim_end(),
        "gex-startup: FI_PROVIDER=\"shm\" and GASNET_OFI_PROVIDER_INCLUDE=\"udp\" select no \
common provider: FI_PROVIDER allows shm; GASNET_OFI_PROVIDER_INCLUDE allows udp;ofi_rxd"
    );
    let (code, _, err) = startup(&[
        ("GASNET_OFI_PROVIDER_INCLUDE", "shm"),
        ("GASNET_OFI_PROVIDER_EXCLUDE", "tcp"),
    ]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim_end(),
        "gex-startup: GASNET_OFI_PROVIDER_EXCLUDE=\"tcp\" is not accepted: expected no value \
while GASNET_OFI_PROVIDER_INCLUDE=\"shm\" is set (the two lists are mutually exclusive: set one \
or the other)"
    );
}

#[test]
fn contexts_without_thread_grouping_warn_once() {
    let (code, _, err) = startup(&[("GASNET_OFI_NUM_CTXTS", "4"), ("FI_PROVIDER", "shm")]);
    assert_eq!(code, 0, "{err}");
    let warning = "WARNING: GASNET_OFI_NUM_CTXTS=4 has no effect without \
GASNET_OFI_THREAD_GROUPING=1: one endpoint serves every communicator";
    assert_eq!(err.matches(warning).count(), 1, "{err}");
}

#[test]
fn verboseenv_prints_every_variable_read() {
    let (code, _, err) = startup(&[
        ("GASNET_VERBOSEENV", "1"),
        ("GASNET_QUIET", "1"),
        ("GASNET_OFI_MAX_MEDIUM", "16K"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("ENV parameter: GASNET_OFI_MAX_MEDIUM = 16K\n"),
        "{err}"
    );
    assert!(
        err.contains("ENV parameter: GASNET_OFI_NUM_BBUFS = 64   (default)"),
        "{err}"
    );
    assert!(
        err.contains("ENV parameter: FI_UNIVERSE_SIZE = 1   (default)"),
        "{err}"
    );
    for v in conduit::config::Config::VARIABLES {
        assert!(
            err.contains(&format!("ENV parameter: {v} = ")),
            "{v} not printed:\n{err}"
        );
    }
    // Defaults computed from the job and the provider are shown as the
    // value chosen, with how, not as *empty*.
    for (v, how) in [
        (
            "GASNET_EXITTIMEOUT = 10.",
            "(default: min(GASNET_EXITTIMEOUT_MAX 480, GASNET_EXITTIMEOUT_MIN 10 + 1 ranks x GASNET_EXITTIMEOUT_FACTOR 0.25))",
        ),
        (
            "GASNET_OFI_AM_INJECT_LIMIT = ",
            "(default: AM payloads injected up to this size, from shm's inject_size ",
        ),
        (
            "GASNET_OFI_RMA_INJECT_LIMIT = ",
            "(default: puts injected up to this size, from shm's inject_size ",
        ),
        (
            "GASNET_OFI_DEVICE = shm",
            "(default: the domain selected (shm, fabric shm))",
        ),
    ] {
        let line = err
            .lines()
            .find(|l| l.starts_with(&format!("ENV parameter: {v}")))
            .unwrap_or_else(|| panic!("no line for {v}:\n{err}"));
        assert!(line.contains(how), "{line}");
        assert!(!line.contains("*empty*"), "{line}");
    }
}

#[test]
fn list_devices_prints_usable_pairs() {
    let (code, out, err) = startup(&[("GASNET_OFI_LIST_DEVICES", "1"), ("GASNET_QUIET", "1")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("[0] provider=shm device=shm"), "{out}");
    assert!(out.contains("[0] provider=tcp;ofi_rxm device=lo"), "{out}");
    let (_, out, _) = startup(&[
        ("GASNET_OFI_LIST_DEVICES", "1"),
        ("GASNET_OFI_LIST_DEVICES_NODES", "1-3"),
        ("GASNET_QUIET", "1"),
    ]);
    assert!(
        !out.contains("provider=shm device=shm"),
        "rank 0 is not in 1-3: {out}"
    );
}

#[test]
fn inject_limit_above_provider_is_capped() {
    let (code, out, err) = startup(&[
        ("FI_PROVIDER", "tcp"),
        ("GASNET_OFI_DEVICE", "lo"),
        ("GASNET_OFI_AM_INJECT_LIMIT", "1G"),
    ]);
    assert_eq!(code, 0, "{err}");
    let inject: usize = out
        .split("am_inject=")
        .nth(1)
        .and_then(|s| s.split_whitespace().next())
        .and_then(|s| s.parse().ok())
        .expect("am_inject printed");
    assert!(inject < 1 << 30, "{out}");
    // The reduction is said, not silent.
    let warning = format!(
        "WARNING: GASNET_OFI_AM_INJECT_LIMIT=1073741824 is above the provider's maximum \
         inject size of {inject} bytes; using {inject}\n"
    );
    assert!(err.contains(&warning), "{err}");
}

/// Without `FI_PROVIDER` the profile's `FI_*` variables come too late:
/// a warning says so (the rxm pools then take ten times the memory), and
/// `GASNET_VERBOSEENV=1` prints the profile's other choices as notes.
#[test]
fn late_profile_variables_are_warned_and_notes_are_verbose() {
    let vars = [
        ("GASNET_OFI_DEVICE", "lo"),
        ("GASNET_OFI_PROVIDER_INCLUDE", "tcp"),
    ];
    let (code, out, err) = startup(&vars);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("provider=tcp;ofi_rxm"), "{out}");
    assert!(
        err.contains("WARNING: the tcp;ofi_rxm profile sets FI_OFI_RXM_BUFFER_SIZE")
            && err.contains("set FI_PROVIDER='tcp;ofi_rxm' to have them applied"),
        "{err}"
    );
    let (code, _, err) = startup(&[vars[0], vars[1], ("GASNET_QUIET", "1")]);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("WARNING"), "GASNET_QUIET=1: {err}");
    let (code, _, err) = startup(&[
        ("FI_PROVIDER", "sockets"),
        ("GASNET_OFI_DEVICE", "lo"),
        ("GASNET_QUIET", "1"),
        ("GASNET_VERBOSEENV", "1"),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("NOTE: sockets: AMs are sent with fi_send, not injected (profile default"),
        "{err}"
    );
}

/// A 4-rank job under the launcher: bootstrap, name exchange, AV insert and
/// a message around the ring, over each provider this machine offers.
#[test]
fn four_rank_ring_under_the_launcher_on_every_provider() {
    let launcher = tests::workspace_bin("gasnetrun-ofi", env!("CARGO_BIN_EXE_gex-startup"));
    for (fi, dev, want) in [
        ("shm", "shm", "provider=shm domain=shm"),
        ("tcp", "lo", tcp_selects()),
        ("tcp;ofi_rxm", "lo", "provider=tcp;ofi_rxm domain=lo"),
        ("udp", "lo", "provider=udp;ofi_rxd domain=lo"),
        ("sockets", "lo", "provider=sockets domain=lo"),
    ] {
        let mut cmd = Command::new(&launcher);
        cmd.args(["-n", "4", env!("CARGO_BIN_EXE_gex-startup")])
            .env("FI_PROVIDER", fi)
            .env("GASNET_OFI_DEVICE", dev)
            .env("GASNET_QUIET", "1")
            .env("GASNET_EXITTIMEOUT", "20");
        let out = run_with_deadline(&mut cmd, Duration::from_secs(120));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{fi}: {stderr}");
        assert!(stdout.starts_with(want), "{fi}: {stdout}");
        assert!(stdout.contains("ranks=4 hosts=1 ring=ok"), "{fi}: {stdout}");
    }
}

/// Under the launcher `GASNET_VERBOSEENV=1` prints the ranks' variables
/// once, from rank 0, bootstrap variables included (they used to come
/// from every rank).
#[test]
fn verboseenv_prints_once_per_job() {
    let _g = tests::serial();
    let r = tests::job(
        env!("CARGO_BIN_EXE_gex-am"),
        3,
        &["core"],
        "shm",
        &[("GASNET_VERBOSEENV", "1")],
        Duration::from_secs(60),
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for v in [
        "GASNET_OFI_BOOTSTRAP_ADDR",
        "GASNET_OFI_BOOTSTRAP_SECRET",
        "GASNET_OFI_RANK",
        "GASNET_OFI_MAX_MEDIUM",
    ] {
        let line = format!("ENV parameter: {v} = ");
        assert_eq!(r.stderr.matches(&line).count(), 1, "{v}:\n{}", r.stderr);
    }
    assert!(
        r.stderr.contains("ENV parameter: GASNET_OFI_RANK = 0\n"),
        "{}",
        r.stderr
    );
}
