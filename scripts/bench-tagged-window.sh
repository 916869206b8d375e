#!/usr/bin/env bash
# The 1 MiB windowed tagged bandwidth over shm beside what the machine's
# kernel copy allows in the same shape, in one window. Each round runs:
# gex-bench --tests tagged (2 ranks, windows of 64 receives into disjoint
# parts of one 64 MiB buffer; its run includes fi_pingpong, one message in
# flight), then bench/c/cma_window.c (process_vm_readv, the copy shm makes
# for large messages, with no libfabric) into the same disjoint slots and
# into one slot, then, if FABTESTS names fabtests' fi_rdm_tagged_bw,
# fabtests' windowed test (windows of 64 and of 1; its receives share one
# buffer). Printed: each figure's median over the rounds, MB/s.
#
#   [BIN=DIR] [FABTESTS=PATH] bash scripts/bench-tagged-window.sh [ROUNDS]
#
# BIN holds gasnetrun-ofi and gex-bench built against libfabric 2.1
# (target/libfabric-2/release after `source scripts/libfabric-2.env` and
# `cargo build --release -p bench -p gasnetrun-ofi`: libfabric 1.17's shm
# refuses tagged messaging). ROUNDS defaults to 3. Measure on a quiet
# machine.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
rounds=${1:-3}
case $rounds in
  *[!0-9]*|'') ok=0 ;;
  *) ok=$(( 10#$rounds >= 1 )) ;;
esac
if [ "$ok" != 1 ]; then
  echo "bench-tagged-window: ROUNDS must be a positive integer, not '$rounds'" >&2
  exit 2
fi
bin=${BIN:-$here/target/libfabric-2/release}
for b in gasnetrun-ofi gex-bench; do
  [ -x "$bin/$b" ] || { echo "bench-tagged-window: BIN='$bin' holds no $b (build with libfabric 2.1: source scripts/libfabric-2.env; cargo build --release -p bench -p gasnetrun-ofi)" >&2; exit 2; }
done
if [ -n "${FABTESTS:-}" ] && [ ! -x "$FABTESTS" ]; then
  echo "bench-tagged-window: FABTESTS='$FABTESTS' is not an executable (fabtests' benchmarks/fi_rdm_tagged_bw)" >&2
  exit 2
fi
[ -f "$here/scripts/libfabric-2.env" ] && source "$here/scripts/libfabric-2.env"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cc -O2 -o "$work/cma_window" "$here/bench/c/cma_window.c"
size=1048576 window=64 count=640
export GASNET_QUIET=1 FI_PROVIDER=shm GASNET_OFI_DEVICE=shm GASNET_SUPERNODE_MAXSIZE=1
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  out=$(timeout 300 "$bin/gasnetrun-ofi" -n 2 "$bin/gex-bench" --tests tagged --sizes 1m \
    --reps 3 --no-mtl --window $window --flood-bytes 640m --iters $count 2>&1) || {
    echo "$out" >&2; echo "bench-tagged-window: gex-bench failed" >&2; exit 1; }
  echo "$out" | awk '$1=="tagged_bw"{print $5}' >> "$work/conduit"
  echo "$out" | awk '$1=="fi_pingpong_bw"{print $5}' >> "$work/pingpong"
  "$work/cma_window" $size $window $count | awk '{print $6}' >> "$work/cma_disjoint"
  "$work/cma_window" $size $window $count --same | awk '{print $6}' >> "$work/cma_same"
  if [ -n "${FABTESTS:-}" ]; then
    for w in $window 1; do
      timeout 60 "$FABTESTS" -p shm -W $w -S $size -I $count -b > "$work/ft_server" 2>&1 &
      sleep 0.5
      timeout 60 "$FABTESTS" -p shm -W $w -S $size -I $count -b 127.0.0.1 \
        | awk '$1=="1m"{print $5}' >> "$work/fabtests_w$w"
      wait
    done
  fi
  echo "round $r done (load $(cut -d' ' -f1 /proc/loadavg))"
done
median() { sort -g "$1" | awk '{v[NR]=$1} END{if(NR%2)print v[(NR+1)/2]; else print (v[NR/2]+v[NR/2+1])/2}'; }
printf '%-58s %10s  %s\n' "figure (1 MiB, shm, libfabric 2.1)" "MB/s" "runs"
row() {
  [ -s "$work/$1" ] || return 0
  printf '%-58s %10.1f  %s\n' "$2" "$(median "$work/$1")" "$(tr '\n' ' ' < "$work/$1")"
}
row conduit "conduit, windows of 64 into disjoint slots"
row cma_disjoint "process_vm_readv, 64 disjoint slots of one buffer"
row cma_same "process_vm_readv, one slot"
row pingpong "fi_pingpong, one in flight"
row fabtests_w64 "fabtests fi_rdm_tagged_bw, windows of 64 (one buffer)"
row fabtests_w1 "fabtests fi_rdm_tagged_bw, windows of 1"
