//! Fuzz target `vis_packed`: see `gex_fuzz::vis_packed` (fuzz/src/vis_packed.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gex_fuzz::vis_packed::run(data));
