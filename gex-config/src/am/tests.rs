//! Tests of the Active Message configuration.

use super::*;
use gex_env::MapEnv;

fn read(env: &MapEnv) -> Result<AmConfig, ConfigError> {
    AmConfig::from_env(&EnvReader::quiet(env))
}

fn err(pairs: &[(&str, &str)]) -> String {
    let env = MapEnv(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    read(&env).unwrap_err().to_string()
}

#[test]
fn defaults() {
    let a = read(&MapEnv::new()).unwrap();
    assert_eq!(a.max_medium, 8192);
    assert_eq!(a.receive_buff_size, RecvBuffSize::Bytes(1 << 20));
    assert_eq!(a.num_receive_buffs, 8);
    assert_eq!((a.max_request_buffs, a.max_reply_buffs), (1024, 1024));
    assert_eq!(
        (a.num_initial_request_buffs, a.num_initial_reply_buffs),
        (256, 256)
    );
    assert_eq!(a.inject_limit, None);
    assert_eq!(a.inject_limit_var, "GASNET_OFI_AM_INJECT_LIMIT");
    assert_eq!(a.long_am_rma_thresh, None);
    assert!(!a.use_delivery_complete);
}

#[test]
fn max_medium_good_and_bad() {
    let env = MapEnv::from([("GASNET_OFI_MAX_MEDIUM", "16K")]);
    assert_eq!(read(&env).unwrap().max_medium, 16384);
    let env = MapEnv::from([("GASNET_OFI_MAX_MEDIUM", "512")]);
    assert_eq!(read(&env).unwrap().max_medium, 512);
    assert_eq!(
        err(&[("GASNET_OFI_MAX_MEDIUM", "511")]),
        "GASNET_OFI_MAX_MEDIUM=\"511\" is not accepted: expected a size from 512 bytes to 1G \
(a number with an optional K, M, G or T suffix)"
    );
    assert_eq!(
        err(&[("GASNET_OFI_MAX_MEDIUM", "2G")]),
        "GASNET_OFI_MAX_MEDIUM=\"2G\" is not accepted: expected a size from 512 bytes to 1G \
(a number with an optional K, M, G or T suffix)"
    );
    assert_eq!(err(&[("GASNET_OFI_MAX_MEDIUM", "lots")]), "GASNET_OFI_MAX_MEDIUM=\"lots\" is not accepted: expected a size from 512 bytes to 1G (a number with an optional K, M, G or T suffix) [\"lots\" is not a number]");
}

#[test]
fn receive_buff_size_forms() {
    for (text, want) in [
        ("64K", RecvBuffSize::Bytes(65536)),
        ("2M", RecvBuffSize::Bytes(2 << 20)),
        ("1G", RecvBuffSize::Bytes(1 << 30)),
        ("100000", RecvBuffSize::Bytes(100_000)),
        ("single", RecvBuffSize::Single),
        ("RECV", RecvBuffSize::Recv),
    ] {
        let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", text)]);
        assert_eq!(read(&env).unwrap().receive_buff_size, want, "{text}");
    }
    // Above 1G, up to the value that used to overflow at start-up
    // (found while reviewing the fuzz targets, docs/fuzzing.md).
    for bad in [
        "0",
        "many",
        "-1",
        "single-ish",
        "1025M",
        "18446744073709551615",
    ] {
        assert_eq!(
            err(&[("GASNET_OFI_RECEIVE_BUFF_SIZE", bad)]),
            format!(
                "GASNET_OFI_RECEIVE_BUFF_SIZE=\"{bad}\" is not accepted: expected a positive \
size in bytes up to 1G (a number with an optional K, M, G or T suffix), single or recv"
            )
        );
    }
}

#[test]
fn single_and_recv_change_the_num_receive_buffs_default() {
    for text in ["single", "recv", "Single"] {
        let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", text)]);
        assert_eq!(read(&env).unwrap().num_receive_buffs, 450, "{text}");
    }
    let env = MapEnv::from([
        ("GASNET_OFI_RECEIVE_BUFF_SIZE", "recv"),
        ("GASNET_OFI_NUM_RECEIVE_BUFFS", "100"),
    ]);
    assert_eq!(read(&env).unwrap().num_receive_buffs, 100);
    let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", "512K")]);
    assert_eq!(read(&env).unwrap().num_receive_buffs, 8);
}

#[test]
fn recv_mode_properties() {
    assert!(RecvBuffSize::Single.uses_multi_recv());
    assert!(!RecvBuffSize::Recv.uses_multi_recv());
    assert!(RecvBuffSize::Bytes(10).uses_multi_recv());
    assert_eq!(RecvBuffSize::Recv.buffer_bytes(8256), 8256);
    assert_eq!(RecvBuffSize::Bytes(4096).buffer_bytes(8256), 4096);
    assert_eq!(RecvBuffSize::Bytes(1 << 20).to_string(), "1M");
}

#[test]
fn num_receive_buffs_good_and_bad() {
    let env = MapEnv::from([("GASNET_OFI_NUM_RECEIVE_BUFFS", "2")]);
    assert_eq!(read(&env).unwrap().num_receive_buffs, 2);
    assert_eq!(
        err(&[("GASNET_OFI_NUM_RECEIVE_BUFFS", "1")]),
        "GASNET_OFI_NUM_RECEIVE_BUFFS=\"1\" is not accepted: expected a whole number from 2 to 65536"
    );
}

#[test]
fn pools_good_and_bad() {
    let env = MapEnv::from([
        ("GASNET_OFI_MAX_REQUEST_BUFFS", "100"),
        ("GASNET_OFI_MAX_REPLY_BUFFS", "4000"),
        ("GASNET_OFI_NUM_INITIAL_REPLY_BUFFS", "4000"),
    ]);
    let a = read(&env).unwrap();
    // The initial default is min(256, MAX).
    assert_eq!(
        (a.max_request_buffs, a.num_initial_request_buffs),
        (100, 100)
    );
    assert_eq!((a.max_reply_buffs, a.num_initial_reply_buffs), (4000, 4000));
    assert_eq!(
        err(&[("GASNET_OFI_MAX_REQUEST_BUFFS", "1")]),
        "GASNET_OFI_MAX_REQUEST_BUFFS=\"1\" is not accepted: expected a whole number from 2 to 1048576"
    );
    assert_eq!(
        err(&[("GASNET_OFI_MAX_REPLY_BUFFS", "lots")]),
        "GASNET_OFI_MAX_REPLY_BUFFS=\"lots\" is not accepted: expected a whole number from 2 to 1048576"
    );
    assert_eq!(
        err(&[("GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS", "1")]),
        "GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS=\"1\" is not accepted: expected a whole number from 2 to 1048576"
    );
    assert_eq!(
        err(&[("GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS", "2000")]),
        "GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS=\"2000\" is not accepted: expected a whole number \
from 2 to 1024 (GASNET_OFI_MAX_REQUEST_BUFFS = 1024)"
    );
    assert_eq!(
        err(&[
            ("GASNET_OFI_MAX_REPLY_BUFFS", "16"),
            ("GASNET_OFI_NUM_INITIAL_REPLY_BUFFS", "17")
        ]),
        "GASNET_OFI_NUM_INITIAL_REPLY_BUFFS=\"17\" is not accepted: expected a whole number \
from 2 to 16 (GASNET_OFI_MAX_REPLY_BUFFS = 16)"
    );
}

#[test]
fn inject_limit_and_alias() {
    let env = MapEnv::from([("GASNET_OFI_AM_INJECT_LIMIT", "1K")]);
    let a = read(&env).unwrap();
    assert_eq!(
        (a.inject_limit, a.inject_limit_var),
        (Some(1024), "GASNET_OFI_AM_INJECT_LIMIT")
    );
    // The alias applies when the main variable is unset ...
    let env = MapEnv::from([("GASNET_OFI_INJECT_LIMIT", "256")]);
    let r = EnvReader::quiet(&env);
    let a = AmConfig::from_env(&r).unwrap();
    assert_eq!(
        (a.inject_limit, a.inject_limit_var),
        (Some(256), "GASNET_OFI_INJECT_LIMIT")
    );
    assert!(r
        .reads()
        .iter()
        .any(|x| x.name == "GASNET_OFI_INJECT_LIMIT"));
    // ... or empty, and is ignored (not even read) when it is set.
    let env = MapEnv::from([
        ("GASNET_OFI_AM_INJECT_LIMIT", ""),
        ("GASNET_OFI_INJECT_LIMIT", "128"),
    ]);
    assert_eq!(read(&env).unwrap().inject_limit, Some(128));
    let env = MapEnv::from([
        ("GASNET_OFI_AM_INJECT_LIMIT", "64"),
        ("GASNET_OFI_INJECT_LIMIT", "junk"),
    ]);
    assert_eq!(read(&env).unwrap().inject_limit, Some(64));
    assert_eq!(err(&[("GASNET_OFI_AM_INJECT_LIMIT", "big")]), "GASNET_OFI_AM_INJECT_LIMIT=\"big\" is not accepted: expected a size in bytes (a number with an optional K, M, G or T suffix) [\"big\" is not a number]");
    assert_eq!(err(&[("GASNET_OFI_INJECT_LIMIT", "big")]), "GASNET_OFI_INJECT_LIMIT=\"big\" is not accepted: expected a size in bytes (a number with an optional K, M, G or T suffix) [\"big\" is not a number]");
}

#[test]
fn inject_limit_clamp_names_the_variable_used() {
    let env = MapEnv::from([("GASNET_OFI_INJECT_LIMIT", "4K")]);
    let a = read(&env).unwrap();
    let (n, note) = a.resolve_inject_limit(64);
    assert_eq!(n, 64);
    assert_eq!(
        note.unwrap(),
        "GASNET_OFI_INJECT_LIMIT=4096 is above the provider's maximum inject size of 64 bytes; using 64"
    );
    assert_eq!(
        read(&MapEnv::new()).unwrap().resolve_inject_limit(64),
        (64, None)
    );
}

#[test]
fn long_am_rma_thresh() {
    let env = MapEnv::from([("GASNET_OFI_LONG_AM_RMA_THRESH", "2K")]);
    let a = read(&env).unwrap();
    assert_eq!(a.long_am_rma_thresh, Some(2048));
    assert_eq!(a.resolve_long_am_rma_thresh(8256), (2048, None));
    assert_eq!(
        a.resolve_long_am_rma_thresh(1000),
        (
            1000,
            Some(
                "GASNET_OFI_LONG_AM_RMA_THRESH=2048 is above the largest AM data length of 1000 \
bytes (with GASNET_OFI_MAX_MEDIUM = 8192); using 1000"
                    .into()
            )
        )
    );
    assert_eq!(
        read(&MapEnv::new())
            .unwrap()
            .resolve_long_am_rma_thresh(8256),
        (8256, None)
    );
    assert_eq!(err(&[("GASNET_OFI_LONG_AM_RMA_THRESH", "2Q")]), 
        "GASNET_OFI_LONG_AM_RMA_THRESH=\"2Q\" is not accepted: expected a size in bytes (a number with an optional K, M, G or T suffix) [\"2Q\" is not a number]"
    );
}

#[test]
fn long_writedata_good_and_bad() {
    use crate::am::LongWritedata;
    assert_eq!(
        read(&MapEnv::new()).unwrap().long_writedata,
        LongWritedata::Auto
    );
    for (v, want) in [
        ("ON", LongWritedata::On),
        (" off ", LongWritedata::Off),
        ("auto", LongWritedata::Auto),
    ] {
        let env = MapEnv::from([("GASNET_OFI_LONG_AM_WRITEDATA", v)]);
        assert_eq!(read(&env).unwrap().long_writedata, want, "{v:?}");
    }
    assert_eq!(
        err(&[("GASNET_OFI_LONG_AM_WRITEDATA", "always")]),
        "GASNET_OFI_LONG_AM_WRITEDATA=\"always\" is not accepted: expected one of auto, on (or yes, 1), off (or no, 0)"
    );
}

#[test]
fn delivery_complete_good_and_bad() {
    let env = MapEnv::from([("GASNET_OFI_AM_USE_DELIVERY_COMPLETE", "yes")]);
    assert!(read(&env).unwrap().use_delivery_complete);
    assert_eq!(
        err(&[("GASNET_OFI_AM_USE_DELIVERY_COMPLETE", "2")]),
        "GASNET_OFI_AM_USE_DELIVERY_COMPLETE=\"2\" is not accepted: expected a boolean: 1/0, \
yes/no, y/n, true/false or on/off"
    );
}

#[test]
fn receive_buff_must_hold_the_largest_am() {
    let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", "8K")]);
    let a = read(&env).unwrap();
    assert_eq!(a.check_receive_buff(|m| m), Ok(()));
    assert_eq!(
        a.check_receive_buff(|m| m + 64).unwrap_err().to_string(),
        "GASNET_OFI_RECEIVE_BUFF_SIZE=\"8K\" is not accepted: expected a size of at least 8256 \
bytes (the largest Active Message with GASNET_OFI_MAX_MEDIUM = 8192), single or recv"
    );
    // The default 1M is too small for a 1M Medium: the error names the
    // variable the user set, as written, and the default it met.
    let env = MapEnv::from([("GASNET_OFI_MAX_MEDIUM", "1M")]);
    let a = read(&env).unwrap();
    assert_eq!(
        a.check_receive_buff(|m| (m + 64).next_multiple_of(8))
            .unwrap_err()
            .to_string(),
        "GASNET_OFI_MAX_MEDIUM=\"1M\" is not accepted: expected at most 1048512 bytes with \
GASNET_OFI_RECEIVE_BUFF_SIZE at its default of 1048576 (set GASNET_OFI_RECEIVE_BUFF_SIZE to at \
least 1048640, or to single or recv, for a larger Medium)"
    );
    // Both set: the buffer size is what is short.
    let env = MapEnv::from([
        ("GASNET_OFI_MAX_MEDIUM", "1M"),
        ("GASNET_OFI_RECEIVE_BUFF_SIZE", "1M"),
    ]);
    let e = read(&env)
        .unwrap()
        .check_receive_buff(|m| m + 64)
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("GASNET_OFI_RECEIVE_BUFF_SIZE=\"1M\" is not accepted"),
        "{e}"
    );
    for text in ["single", "recv"] {
        let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", text)]);
        assert_eq!(read(&env).unwrap().check_receive_buff(|_| 1 << 30), Ok(()));
    }
}

#[test]
fn buffer_counts_have_an_upper_limit() {
    let e = err(&[(NUM_RECEIVE_BUFFS, "18446744073709551615")]);
    assert!(e.contains(NUM_RECEIVE_BUFFS) && e.contains("65536"), "{e}");
    let e = err(&[(MAX_REPLY_BUFFS, "2000000")]);
    assert!(e.contains(MAX_REPLY_BUFFS) && e.contains("1048576"), "{e}");
}

#[test]
fn profile_receive_mode_keeps_a_set_count() {
    let mut a = read(&MapEnv::new()).unwrap();
    a.use_profile_receive(RecvBuffSize::Recv, false);
    assert_eq!(a.receive_buff_size, RecvBuffSize::Recv);
    assert_eq!(a.num_receive_buffs, NUM_RECEIVE_BUFFS_SINGLE_DEFAULT);
    let mut a = read(&MapEnv::from([(NUM_RECEIVE_BUFFS, "16")])).unwrap();
    a.use_profile_receive(RecvBuffSize::Recv, true);
    assert_eq!(a.receive_buff_size, RecvBuffSize::Recv);
    assert_eq!(a.num_receive_buffs, 16);
}
