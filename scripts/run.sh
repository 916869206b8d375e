#!/usr/bin/env bash
# The README's main command: set-up, build, then show what this machine's
# fabric offers and start a small job on it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --workspace --quiet
export PATH="$PWD/target/release:$PATH"
gasnetrun-ofi --list-providers
