#!/usr/bin/env bash
# The README's test command: set-up, then formatting, lints and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
cargo test --workspace
# The fuzz harnesses (a workspace of their own, see docs/fuzzing.md) run over
# their seeds without libFuzzer, so a format change cannot leave them behind.
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
cargo clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
cargo test --manifest-path fuzz/Cargo.toml
