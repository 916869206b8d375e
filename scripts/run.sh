#!/usr/bin/env bash
# The README's main command: set-up, build, show what this machine's fabric
# offers, then run a small gex-bench job (2 ranks, default spawner, the
# default provider for one host) with fi_pingpong measured beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cargo build --release --workspace --quiet
bin="$PWD/target/release"
"$bin/gasnetrun-ofi" --list-providers
echo
echo "== gasnetrun-ofi -n 2 gex-bench (small run; see docs/PERFORMANCE.md for the full one)"
echo "   the two ranks share this host: AMs and RMA go through shared memory (the same-host path)"
"$bin/gasnetrun-ofi" -n 2 "$bin/gex-bench" --iters 2000 --reps 3 --sizes 8,64k,1m --flood-bytes 16m
echo
echo "== the same with the shared-memory path off (GASNET_SUPERNODE_MAXSIZE=1): the provider carries every message"
GASNET_SUPERNODE_MAXSIZE=1 "$bin/gasnetrun-ofi" -n 2 "$bin/gex-bench" --iters 2000 --reps 3 --sizes 8,64k,1m --flood-bytes 16m
