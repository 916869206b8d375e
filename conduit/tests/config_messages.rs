//! A refused value's message states the variable's whole rule, the same
//! for every way of being wrong (not a number, below or above a bound):
//! a minimum that depends on another variable, values excluded between
//! bounds, a multiple of the page size.

use conduit::config::Config;
use gex_env::{EnvReader, MapEnv};

fn refusal(var: &str, value: &str) -> String {
    let env = MapEnv::from([(var, value)]);
    match Config::from_env_with_page_size(&EnvReader::quiet(&env), 4096) {
        Ok(_) => panic!("{var}={value:?} was accepted"),
        Err(e) => e.to_string(),
    }
}

fn accepted(var: &str, value: &str) {
    let env = MapEnv::from([(var, value)]);
    if let Err(e) = Config::from_env_with_page_size(&EnvReader::quiet(&env), 4096) {
        panic!("{var}={value:?} was refused: {e}");
    }
}

/// Every refusal of `var` among `values` ends with `rule` (after a parse
/// failure, its reason follows in brackets).
fn same_rule(var: &str, values: &[&str], rule: &str) {
    for v in values {
        let m = refusal(var, v);
        let head = format!("{var}=\"{v}\" is not accepted: expected {rule}");
        assert!(
            m.starts_with(&head),
            "{var}={v}:\n  got  {m}\n  want {head}"
        );
        let rest = &m[head.len()..];
        assert!(
            rest.is_empty() || (rest.starts_with(" [") && rest.ends_with(']')),
            "{var}={v}: {m}"
        );
    }
}

#[test]
fn bounce_buffer_count_names_its_real_minimum() {
    same_rule(
        "GASNET_OFI_NUM_BBUFS",
        &["banana", "-1", "0", "3"],
        "a whole number of at least 4 (GASNET_OFI_BBUF_THRESHOLD / GASNET_OFI_BBUF_SIZE = \
16384 / 4096)",
    );
    accepted("GASNET_OFI_NUM_BBUFS", "4");
}

#[test]
fn bounce_buffer_size_is_a_page_multiple() {
    same_rule(
        "GASNET_OFI_BBUF_SIZE",
        &["banana", "0", "3", "6K"],
        "a positive multiple of the page size (4096 bytes; a number with an optional K, M, G \
or T suffix)",
    );
    accepted("GASNET_OFI_BBUF_SIZE", "8K");
}

#[test]
fn malloc_keep_states_its_gap() {
    same_rule(
        "GASNET_OFI_MALLOC_KEEP",
        &["banana", "-1", "1", "127K", "3G"],
        "0 (leave glibc alone) or a size from 128K to 2147483647 bytes (a number with an \
optional K, M, G or T suffix; glibc's own thresholds are 128K: less would return memory sooner)",
    );
    accepted("GASNET_OFI_MALLOC_KEEP", "0");
    accepted("GASNET_OFI_MALLOC_KEEP", "128K");
}

#[test]
fn ring_size_states_both_bounds() {
    same_rule(
        "GASNET_OFI_PSHM_RING_SIZE",
        &["banana", "0", "2G"],
        "a size from twice the largest Active Message to 1G (a number with an optional K, M, \
G or T suffix)",
    );
}
