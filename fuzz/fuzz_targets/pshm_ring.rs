//! Fuzz target `pshm_ring`: see `gex_fuzz::pshm_ring` (fuzz/src/pshm_ring.rs) and docs/fuzzing.md.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| gex_fuzz::pshm_ring::run(data));
