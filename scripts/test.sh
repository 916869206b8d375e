#!/usr/bin/env bash
# The README's test command: set-up, then formatting, lints, the API
# documentation and every test.
set -euo pipefail
cd "$(dirname "$0")/.."
# Under `source scripts/libfabric-2.env` (CONDUIT_LIBFABRIC=2) everything
# below builds and runs against libfabric 2.1 in .libfabric-2/.
if [ "${CONDUIT_LIBFABRIC:-1}" = 2 ]; then
  bash scripts/setup.sh --libfabric=2
  echo "test: against libfabric $(pkg-config --modversion libfabric) ($(pkg-config --variable=libdir libfabric)), target dir ${CARGO_TARGET_DIR:-target}"
else
  bash scripts/setup.sh
fi
cargo fmt --all -- --check
cargo clippy --workspace --all-targets -- -D warnings
# The API documentation builds without a broken or private link.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
cargo test --workspace
# The fuzz harnesses (a workspace of their own, see docs/fuzzing.md) run over
# their seeds without libFuzzer, so a format change cannot leave them behind.
cargo fmt --manifest-path fuzz/Cargo.toml -- --check
cargo clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings
cargo test --manifest-path fuzz/Cargo.toml
