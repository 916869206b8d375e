//! Fuzz target `am_wire`: see `gex_fuzz::am_wire` (fuzz/src/am_wire.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gex_fuzz::am_wire::run(data));
