//! The segment in transparent huge pages (`GASNET_OFI_SEGMENT_HUGEPAGES`)
//! over real providers: floods of gets by `gex-rma flood`, checked byte for
//! byte, with the segment in huge pages and in ordinary pages.

use super::{refused, run, word};
use tests::serial;

/// Over shm (its profile asks for huge pages) the default puts a segment
/// that no supernode peer maps in anonymous memory advised for huge pages,
/// and the kernel backs it with them where its mode allows; `off` keeps the
/// memory file; over tcp;ofi_rxm the default keeps the memory file and
/// `on` asks for huge pages; with the shared-memory path on (the peers map
/// the segment) even `on` keeps the memory file. Every flood's data
/// arrives whole in each case; a bad value is refused with its text.
#[test]
fn the_segment_is_in_huge_pages_where_the_provider_copies_by_cma() {
    let _g = serial();
    let mode = conduit::hugepages::thp_mode();
    let kernel_gives = mode.is_some_and(|m| m.available());
    // `on` advises the segment wherever the kernel has transparent huge
    // pages at all (the advice fails on a kernel built without them).
    let kernel_has = mode.is_some();
    // (provider, setting, shared-memory path on, segment advised)
    for (p, setting, pshm, advised) in [
        ("shm", None, false, kernel_gives),
        ("shm", Some("off"), false, false),
        ("shm", Some("on"), true, false),
        ("tcp", None, false, false),
        ("tcp", Some("on"), false, kernel_has),
    ] {
        let mut vars: Vec<(&str, &str)> = Vec::new();
        if let Some(s) = setting {
            vars.push(("GASNET_OFI_SEGMENT_HUGEPAGES", s));
        }
        if pshm {
            vars.push(("GASNET_SUPERNODE_MAXSIZE", "0"));
        }
        let r = run(2, &["flood"], p, &vars, 180);
        let what = format!("{p} {setting:?} shared memory {pshm} (kernel mode {mode:?})");
        assert_eq!(r.code, Some(0), "{what}: {}\n{}", r.stdout, r.stderr);
        let lines: Vec<&str> = r
            .stdout
            .lines()
            .filter(|l| l.starts_with("gex-rma flood: ok: 75 gets in 3 floods checked;"))
            .collect();
        assert_eq!(lines.len(), 1, "{what}: {}", r.stdout);
        let field = |name: &str| {
            word(lines[0], name).unwrap_or_else(|| panic!("{what}: no {name}= in {}", lines[0]))
        };
        assert_eq!(
            field("segment_hugepages"),
            advised.to_string(),
            "{what}: {}",
            lines[0]
        );
        let huge: u64 = field("huge_bytes").parse().unwrap();
        if advised && kernel_gives {
            // 16 MiB written whole: at least one 2 MiB page (the kernel may
            // refuse some when memory is fragmented).
            assert!(
                huge >= 2 << 20,
                "{what}: the kernel's mode allows huge pages, yet none backs the \
                 segment: {}",
                lines[0]
            );
        } else {
            assert_eq!(huge, 0, "{what}: {}", lines[0]);
        }
    }
    refused(
        "flood",
        "shm",
        "GASNET_OFI_SEGMENT_HUGEPAGES",
        "2M",
        "GASNET_OFI_SEGMENT_HUGEPAGES=\"2M\" is not accepted: expected one of auto, on (or \
yes, 1), off (or no, 0)",
    );
}
