#!/usr/bin/env bash
# The README's main command: set-up, build, show what this machine's fabric
# offers, then run a 4-rank job on it (bootstrap, endpoint-name exchange and a
# message around the ring of ranks) with the default spawner and provider.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --workspace --quiet
export PATH="$PWD/target/release:$PATH"
gasnetrun-ofi --list-providers
echo
echo "== gasnetrun-ofi -n 4 gex-startup"
gasnetrun-ofi -n 4 "$PWD/target/release/gex-startup"
