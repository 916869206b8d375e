//! AM Longs in one message (`GASNET_OFI_LONG_AM_WRITEDATA`): on, off and
//! `auto` following the provider's profile.

use super::{ok, run};
use tests::serial;

/// The number after `name=` in a summary line.
fn field(line: &str, name: &str) -> u64 {
    let at = line
        .find(&format!(" {name}="))
        .unwrap_or_else(|| panic!("no {name}= in {line}"));
    line[at + name.len() + 2..]
        .split(|c: char| !c.is_ascii_digit())
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no number after {name}= in {line}"))
}

/// AM Longs in one message (`GASNET_OFI_LONG_AM_WRITEDATA=on`) on every
/// provider here: 4 ranks each send 500 Long requests to every other rank
/// without waiting, all answered by Long replies, every payload checked
/// in place; the landing slots' credits run out and come back (the
/// fallback to put-then-send is taken when they are out); an
/// immediate-mode Long is sent. With `off` nothing goes in one message
/// and the immediate Long is a no-op.
#[test]
fn longs_in_one_message_on_every_provider() {
    let _g = serial();
    let small = ("GASNET_OFI_LONG_AM_RMA_THRESH", "512");
    for p in ["shm", "tcp", "sockets", "udp"] {
        let r = run(
            4,
            &["longs", "500"],
            p,
            &[small, ("GASNET_OFI_LONG_AM_WRITEDATA", "on")],
            240,
        );
        ok(&r, p);
        let line = r
            .stdout
            .lines()
            .find(|l| l.starts_with("gex-am longs: ok: 1500 Long requests"));
        let line = line.unwrap_or_else(|| panic!("{p}: {}", r.stdout));
        assert!(field(line, "long_landed") > 0, "{p}: {line}");
        assert!(field(line, "landings_received") > 0, "{p}: {line}");
        assert!(field(line, "credits_sent") > 0, "{p}: {line}");
        // An immediate-mode Long above the threshold is sent, not dropped.
        assert!(line.ends_with("immediate=sent"), "{p}: {line}");
        let r = run(
            4,
            &["core"],
            p,
            &[("GASNET_OFI_LONG_AM_WRITEDATA", "on")],
            180,
        );
        ok(&r, p);
        assert!(
            r.stdout
                .contains("gex-am core: ok: 162 request/reply pairs checked")
                && !r.stdout.contains("long_landed=0 "),
            "{p}: {}",
            r.stdout
        );
    }
    let r = run(
        4,
        &["longs", "200"],
        "tcp",
        &[small, ("GASNET_OFI_LONG_AM_WRITEDATA", "off")],
        240,
    );
    ok(&r, "tcp, off");
    let line = r
        .stdout
        .lines()
        .find(|l| l.starts_with("gex-am longs: ok:"));
    let line = line.unwrap_or_else(|| panic!("tcp, off: {}", r.stdout));
    assert_eq!(field(line, "long_landed"), 0, "{line}");
    assert_eq!(field(line, "landings_received"), 0, "{line}");
    assert!(field(line, "long_rma") > 0, "{line}");
    // Put-then-send waits for the payload's delivery: immediate is a no-op.
    assert!(line.ends_with("immediate=no-op"), "{line}");
}

/// `auto` follows the profile: in one message over tcp;ofi_rxm, put-then-
/// send over shm (whose profile says so); a bad value is refused by name.
#[test]
fn long_writedata_auto_follows_the_profile() {
    let _g = serial();
    let small = ("GASNET_OFI_LONG_AM_RMA_THRESH", "512");
    let r = run(2, &["longs", "100"], "tcp", &[small], 120);
    ok(&r, "tcp");
    assert!(
        r.stdout.contains("long_landed=") && !r.stdout.contains("long_landed=0 "),
        "{}",
        r.stdout
    );
    let r = run(2, &["longs", "100"], "shm", &[small], 120);
    ok(&r, "shm");
    assert!(r.stdout.contains(" long_landed=0 "), "{}", r.stdout);
    let r = run(
        2,
        &["longs", "10"],
        "tcp",
        &[("GASNET_OFI_LONG_AM_WRITEDATA", "sometimes")],
        60,
    );
    r.assert_refused_by_launcher(
        "GASNET_OFI_LONG_AM_WRITEDATA=\"sometimes\" is not accepted: expected one of auto, on (or yes, 1), off (or no, 0)",
    );
}
