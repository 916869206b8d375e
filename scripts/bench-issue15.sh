#!/usr/bin/env bash
# Issue 15's figures in one window (docs/PERFORMANCE.md, "Where things
# stand"): each round runs, one after another and never at the same time,
# gex-bench (2 ranks, --tests am,rma --sizes 8,1m) on the same-host path
# (shm provider, shared memory on), on the shm provider with shared memory
# off (GASNET_SUPERNODE_MAXSIZE=1), on tcp;ofi_rxm over loopback (shared
# memory off), then conduit's shm_floor example (the cache-line floor).
# Each job's output goes to OUT/<round>-<path>.txt; at the end
# scripts/bench-issue15-summary.py prints every figure with its target,
# the median over the rounds and whether it holds.
#
#   bash scripts/bench-issue15.sh OUT [ROUNDS] [ITERS]
#
# ROUNDS defaults to 4, ITERS (gex-bench --iters on the shm paths; a
# quarter of it on tcp) to 20000. Needs a release build: cargo build
# --release -p bench -p gasnetrun-ofi && cargo build --release -p conduit
# --example shm_floor (the binaries are taken from $CARGO_TARGET_DIR, so
# after `source scripts/libfabric-2.env` the libfabric 2.1 build runs).
# Measure on a quiet machine: two spinning ranks fill two CPUs.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
out=$1 rounds=${2:-4} iters=${3:-20000}
for v in "ROUNDS=$rounds" "ITERS=$iters"; do
  [[ ${v#*=} =~ ^[1-9][0-9]*$ ]] || { echo "bench-issue15: ${v%%=*} '${v#*=}' is not a positive whole number" >&2; exit 2; }
done
[ "$iters" -ge 1000 ] || { echo "bench-issue15: ITERS '$iters' is below 1000 (too few operations to time)" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
rel=${CARGO_TARGET_DIR:-$root/target}/release
for b in gasnetrun-ofi gex-bench examples/shm_floor; do
  [ -x "$rel/$b" ] || { echo "bench-issue15: $rel/$b is missing: cargo build --release -p bench -p gasnetrun-ofi && cargo build --release -p conduit --example shm_floor" >&2; exit 2; }
done
mkdir -p "$out"
bench() { # NAME ITERS ENV...
  local name=$1 n=$2
  shift 2
  env GASNET_QUIET=1 "$@" timeout 900 "$rel/gasnetrun-ofi" -n 2 "$rel/gex-bench" \
    --tests am,rma --sizes 8,1m --reps 5 --iters "$n" > "$out/$r-$name.txt" 2> "$out/$r-$name.err" \
    || { echo "bench-issue15: round $r, $name failed; see $out/$r-$name.err" >&2; exit 1; }
}
for r in $(seq 1 "$rounds"); do
  echo "bench-issue15: round $r of $rounds" >&2
  bench samehost "$iters" FI_PROVIDER=shm GASNET_OFI_DEVICE=shm GASNET_SUPERNODE_MAXSIZE=0
  bench shm "$iters" FI_PROVIDER=shm GASNET_OFI_DEVICE=shm GASNET_SUPERNODE_MAXSIZE=1
  bench tcp $((iters / 4)) FI_PROVIDER='tcp;ofi_rxm' GASNET_OFI_DEVICE=lo GASNET_SUPERNODE_MAXSIZE=1
  timeout 300 "$rel/examples/shm_floor" > "$out/$r-floor.txt" 2>&1 \
    || { echo "bench-issue15: round $r, shm_floor failed; see $out/$r-floor.txt" >&2; exit 1; }
done
python3 "$root/scripts/bench-issue15-summary.py" "$out"
