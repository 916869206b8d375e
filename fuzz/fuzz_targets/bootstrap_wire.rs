//! Fuzz target `bootstrap_wire`: see `gex_fuzz::bootstrap_wire` (fuzz/src/bootstrap_wire.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gex_fuzz::bootstrap_wire::run(data));
