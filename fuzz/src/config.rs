//! Target `config`: the job's environment as the conduit reads it,
//! `conduit::config::Config::from_env(&EnvReader::quiet(&MapEnv))`.
//!
//! The input is split into lines at `\n`; each line sets one variable:
//! * a line whose first byte is below [`names()`]`.len()` sets that
//!   known variable (every name `Config::from_env` reads, in its reading
//!   order, then a few `GASNET_OFI_DEVICE_<ids>` family names) to the rest
//!   of the line;
//! * any other line is `NAME=VALUE` (no `=`: the whole line is the name,
//!   with an empty value), so readable environment files, whose lines
//!   start with a letter, are inputs too.
//!
//! Values are taken as UTF-8 with invalid bytes replaced, as the process
//! environment is read. A later line for the same name wins.
//!
//! Checked besides "no panic": an error is one line naming a variable;
//! on success, the configuration's derived values (receive-buffer check,
//! inject limits, bounce buffers per put, segment limit, exit timeout,
//! device choice) compute without panicking, and the node list, receive
//! buffer size and segment size print to text that parses back to the same
//! value.

use conduit::config::{Config, MaxSegsize, NodeList, RecvBuffSize};
use gex_env::{EnvReader, MapEnv};
use std::sync::OnceLock;

/// `GASNET_OFI_DEVICE_<ids>` names added to `Config::VARIABLES` (which
/// leaves the family out): valid id suffixes and near misses.
pub const DEVICE_FAMILY: [&str; 5] = [
    "GASNET_OFI_DEVICE_0",
    "GASNET_OFI_DEVICE_1",
    "GASNET_OFI_DEVICE_0_1",
    "GASNET_OFI_DEVICE_0_",
    "GASNET_OFI_DEVICE_x",
];

/// The names a line's first byte picks from.
pub fn names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let v: Vec<&'static str> = Config::VARIABLES
            .iter()
            .copied()
            .chain(DEVICE_FAMILY)
            .collect();
        // Selector bytes must stay below `A`, so that readable
        // `NAME=VALUE` lines are never taken for selectors.
        assert!(
            v.len() <= usize::from(b'A'),
            "too many names for one selector byte"
        );
        v
    })
}

/// The environment an input describes.
pub fn environment(data: &[u8]) -> MapEnv {
    let names = names();
    let mut env = MapEnv::new();
    for line in data.split(|&b| b == b'\n') {
        let Some((&sel, rest)) = line.split_first() else {
            continue;
        };
        let (name, value) = match names.get(usize::from(sel)) {
            Some(name) => (name.to_string(), String::from_utf8_lossy(rest).into_owned()),
            None => {
                let text = String::from_utf8_lossy(line);
                match text.split_once('=') {
                    Some((n, v)) => (n.to_string(), v.to_string()),
                    None => (text.into_owned(), String::new()),
                }
            }
        };
        env.0.insert(name, value);
    }
    env
}

/// One fuzz input.
pub fn run(data: &[u8]) {
    let env = environment(data);
    let reader = EnvReader::quiet(&env);
    match Config::from_env(&reader) {
        Ok(c) => derived(&c),
        Err(e) => {
            let text = e.to_string();
            assert!(
                !text.contains('\n'),
                "error of more than one line: {text:?}"
            );
            assert!(!e.var().is_empty(), "error names no variable: {text}");
        }
    }
    // What GASNET_VERBOSEENV prints.
    for read in reader.reads() {
        let _ = read.to_string();
    }
}

/// What the conduit computes from a configuration it accepted.
fn derived(c: &Config) {
    let largest_am =
        am::wire::message_len(am::wire::Kind::LongInline, am::MAX_ARGS, c.am.max_medium);
    if let Err(e) =
        c.check_receive_buff(|m| am::wire::message_len(am::wire::Kind::LongInline, am::MAX_ARGS, m))
    {
        let _ = e.to_string();
    }
    for provider_max in [0, 64, 16 << 10, usize::MAX] {
        let _ = c.am.resolve_inject_limit(provider_max);
        let _ = c.rma.resolve_inject_limit(provider_max);
    }
    let _ = c.am.resolve_long_am_rma_thresh(largest_am);
    let _ = c.am.receive_buff_size.buffer_bytes(largest_am);
    let _ = c.rma.bbufs_per_put();
    for phys in [0, 1 << 34, u64::MAX] {
        for procs in [0, 1, 64] {
            let _ = c.max_segsize.limit_bytes(phys, procs);
        }
    }
    for nranks in [0, 1, 1 << 20, usize::MAX] {
        let _ = c.exit_timeout.for_job(nranks);
    }
    for ids in [&[][..], &[0], &[1], &[0, 1]] {
        let _ = c.device.device_for(ids);
        let _ = c.device.requested(ids);
    }
    for rank in [0, 3, usize::MAX] {
        let _ = c.device.lists_devices_on(rank);
    }
    let nodes = c.device.list_devices_nodes.to_string();
    assert_eq!(
        NodeList::parse(&nodes).as_ref(),
        Some(&c.device.list_devices_nodes),
        "{nodes:?}"
    );
    let rbs = c.am.receive_buff_size.to_string();
    assert_eq!(
        RecvBuffSize::parse(&rbs),
        Some(c.am.receive_buff_size),
        "{rbs:?}"
    );
    let seg = c.max_segsize.to_string();
    assert_eq!(MaxSegsize::parse(&seg), Some(c.max_segsize), "{seg:?}");
}

fn selected(name: &str, value: &str) -> Vec<u8> {
    let sel = names()
        .iter()
        .position(|n| *n == name)
        .expect("a known name");
    if sel == usize::from(b'\n') {
        // That selector byte would end the line: the readable form.
        return format!("{name}={value}").into_bytes();
    }
    let mut v = vec![sel as u8];
    v.extend_from_slice(value.as_bytes());
    v
}

/// One seed per known variable with a typical value (selector form), and
/// a few readable environment files.
pub fn seeds() -> crate::Seeds {
    let typical = |name: &str| -> &'static str {
        match name {
            "GASNET_VERBOSEENV" | "GASNET_QUIET" | "GASNET_OFI_LIST_DEVICES" => "1",
            "GASNET_OFI_SET_UNIVERSE_SIZE" | "GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER" => "yes",
            "GASNET_OFI_AM_USE_DELIVERY_COMPLETE" => "off",
            "GASNET_OFI_LONG_AM_WRITEDATA" => "on",
            "FI_PROVIDER" => "tcp;ofi_rxm",
            "GASNET_STATSFILE" => "/tmp/stats.%",
            "GASNET_WAIT_MODE" => "yield",
            "GASNET_OFI_MALLOC_KEEP" => "16M",
            "GASNET_OFI_DEVICE" => "cxi0",
            "GASNET_OFI_DEVICE_TYPE" => "NUMANode",
            "GASNET_OFI_LIST_DEVICES_NODES" => "0,2-4,6",
            "GASNET_OFI_MAX_MEDIUM" => "16K",
            "GASNET_OFI_RECEIVE_BUFF_SIZE" => "single",
            "GASNET_OFI_LONG_AM_RMA_THRESH" => "1.5K",
            "GASNET_OFI_BBUF_SIZE" => "8KB",
            "GASNET_OFI_BBUF_THRESHOLD" => "64k",
            "GASNET_OFI_RMA_POLL_FREQ" => "16",
            "GASNET_OFI_AM_INJECT_LIMIT"
            | "GASNET_OFI_INJECT_LIMIT"
            | "GASNET_OFI_RMA_INJECT_LIMIT" => "192",
            "GASNET_MAX_SEGSIZE" => "0.5/P",
            "GASNET_EXITTIMEOUT" => "2.5",
            "GASNET_EXITTIMEOUT_MAX" => "600",
            "GASNET_EXITTIMEOUT_MIN" => "5",
            "GASNET_EXITTIMEOUT_FACTOR" => "0.1",
            n if n.starts_with("GASNET_OFI_DEVICE_") => "hfi1_0",
            _ => "4",
        }
    };
    let mut v: crate::Seeds = names()
        .iter()
        .map(|n| (format!("var-{n}"), selected(n, typical(n))))
        .collect();
    v.push(("empty".into(), Vec::new()));
    v.push((
        "env-file".into(),
        b"GASNET_OFI_MAX_MEDIUM=32K\nGASNET_OFI_RECEIVE_BUFF_SIZE=4M\nGASNET_OFI_NUM_RECEIVE_BUFFS=16\n\
GASNET_OFI_MAX_REQUEST_BUFFS=512\nGASNET_OFI_NUM_INITIAL_REQUEST_BUFFS=64\nGASNET_OFI_NUM_BBUFS=128\n\
GASNET_MAX_SEGSIZE=2G\nGASNET_EXITTIMEOUT_MIN=1\nFI_PROVIDER=shm\n"
            .to_vec(),
    ));
    v.push((
        "env-device-family".into(),
        b"GASNET_OFI_DEVICE=cxi0\nGASNET_OFI_DEVICE_TYPE=Node\nGASNET_OFI_DEVICE_0=cxi2\nGASNET_OFI_DEVICE_0_1=cxi3\n"
            .to_vec(),
    ));
    let mut mixed = selected("GASNET_OFI_NUM_BBUFS", "2");
    mixed.push(b'\n');
    mixed.extend(selected("GASNET_OFI_BBUF_THRESHOLD", "10000"));
    mixed.push(b'\n');
    mixed.extend(selected("GASNET_OFI_RECEIVE_BUFF_SIZE", "4096"));
    v.push(("conflict".into(), mixed));
    v
}
