//! Fuzz target `config`: see `gex_fuzz::config` (fuzz/src/config.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gex_fuzz::config::run(data));
