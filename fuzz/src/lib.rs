//! The harnesses behind the fuzz targets, and the seeds they start from.
//!
//! Each module holds one target's `run(&[u8])` (what `fuzz_targets/<name>.rs`
//! calls for every input libFuzzer generates) and its `seeds()` (the small
//! corpus of valid inputs that `cargo run --example gen_seeds` writes to
//! `seeds/<name>/`). The harnesses panic only when the code under test
//! panics or breaks one of the properties they check (a decoded message
//! that does not re-encode to the same thing, ...): every such panic is a
//! finding.
//!
//! `cargo test` in this directory runs every harness over its seeds
//! without libFuzzer (a quick check that the harnesses build and accept
//! their seeds). See `docs/fuzzing.md` and `scripts/fuzz.sh`.

pub mod am_wire;
pub mod bootstrap_wire;
pub mod config;
pub mod pshm_ring;
pub mod vis_packed;

/// A target's seeds: file name and contents.
pub type Seeds = Vec<(String, Vec<u8>)>;

/// Every target: its name and its seeds.
pub fn all_seeds() -> Vec<(&'static str, Seeds)> {
    vec![
        ("am_wire", am_wire::seeds()),
        ("bootstrap_wire", bootstrap_wire::seeds()),
        ("config", config::seeds()),
        ("pshm_ring", pshm_ring::seeds()),
        ("vis_packed", vis_packed::seeds()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_accepts_its_seeds() {
        for (target, seeds) in all_seeds() {
            assert!(!seeds.is_empty(), "{target} has no seeds");
            for (name, bytes) in seeds {
                match target {
                    "am_wire" => am_wire::run(&bytes),
                    "bootstrap_wire" => bootstrap_wire::run(&bytes),
                    "config" => config::run(&bytes),
                    "pshm_ring" => pshm_ring::run(&bytes),
                    "vis_packed" => vis_packed::run(&bytes),
                    _ => unreachable!(),
                }
                let _ = name;
            }
        }
    }

    #[test]
    fn committed_seeds_are_current() {
        // seeds/<target>/<name> must hold what the generator writes, so a
        // change of the wire formats shows up here rather than as a stale
        // corpus (regenerate with `cargo run --example gen_seeds`).
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
        for (target, seeds) in all_seeds() {
            for (name, bytes) in seeds {
                let p = dir.join(target).join(&name);
                let on_disk = std::fs::read(&p).unwrap_or_else(|e| {
                    panic!("{}: {e} (run `cargo run --example gen_seeds`)", p.display())
                });
                assert_eq!(on_disk, bytes, "{} is stale", p.display());
            }
        }
    }

    #[test]
    fn small_random_inputs_do_not_panic() {
        // A cheap sweep, so that `cargo test` here catches gross breakage
        // without libFuzzer.
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for len in 0..96usize {
            for _ in 0..50 {
                let buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                am_wire::run(&buf);
                bootstrap_wire::run(&buf);
                config::run(&buf);
                pshm_ring::run(&buf);
                vis_packed::run(&buf);
            }
        }
    }
}
