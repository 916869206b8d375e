#!/usr/bin/env bash
# The same-host AM Short round trip beside GASNet's smp conduit, side by
# side in one window (docs/PERFORMANCE.md, "Same-host AM round trip beside
# GASNet's smp conduit"): each round runs gex-bench on the shared-memory
# path (2 ranks, --tests am --sizes 8), then GASNet's testam (its AMShort
# ping-pong ReqRep from `testam ITERS 0 A`: section A only, 2 PSHM nodes),
# then conduit's shm_floor example (the cache-line floor); printed: each
# round's lines.
#
#   bash scripts/bench-gasnet-smp.sh GASNET_SRC [ROUNDS] [ITERS]
#
# GASNET_SRC: a GASNet-1 source tree with its Bootstrap script, e.g. a
# clone of https://github.com/evidence/axiom-evi-gasnet (GASNet 1.29.3);
# it is bootstrapped and built in GASNET_SRC/build-smp the first time
# (smp conduit, PSHM, SEQ, release). That fork disables gasnet_pshm.c with
# `#ifndef GASNET_PSHM`; this script restores `#if GASNET_PSHM` in its
# copy if it finds the line. Needs autoconf, automake and a release build
# of this project (cargo build --release -p bench -p gasnetrun-ofi;
# cargo build --release -p conduit --example shm_floor). Measure on a
# quiet machine: two spinning ranks fill the two CPUs.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 3 ]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
rounds=${2:-3} iters=${3:-200000}
for v in "ROUNDS=$rounds" "ITERS=$iters"; do
  [[ ${v#*=} =~ ^[1-9][0-9]*$ ]] || { echo "bench-gasnet-smp: ${v%%=*} '${v#*=}' is not a positive whole number" >&2; exit 2; }
done
[ "$iters" -ge 1000 ] || { echo "bench-gasnet-smp: ITERS '$iters' is below 1000 (too few round trips to time)" >&2; exit 2; }
[ -d "$1" ] || { echo "bench-gasnet-smp: GASNET_SRC '$1' is not a directory (give a GASNet-1 source tree)" >&2; exit 2; }
src=$(CDPATH='' cd -- "$1" >/dev/null && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
rel=$root/target/release
for b in gasnetrun-ofi gex-bench examples/shm_floor; do
  [ -x "$rel/$b" ] || { echo "bench-gasnet-smp: $rel/$b is missing: cargo build --release -p bench -p gasnetrun-ofi && cargo build --release -p conduit --example shm_floor" >&2; exit 2; }
done
[ -x "$src/Bootstrap" ] || { echo "bench-gasnet-smp: $src has no Bootstrap: give a GASNet-1 source tree" >&2; exit 2; }
build=$src/build-smp
testam=$build/smp-conduit/testam
if [ ! -x "$testam" ]; then
  [ -f "$src/gasnet_pshm.c" ] || { echo "bench-gasnet-smp: $src/gasnet_pshm.c is missing: give a GASNet-1 source tree with PSHM" >&2; exit 2; }
  sed -i 's/^#ifndef GASNET_PSHM \/\* Otherwise file is empty \*\//#if GASNET_PSHM \/* Otherwise file is empty *\//' "$src/gasnet_pshm.c"
  [ -x "$src/configure" ] || (cd "$src" && ./Bootstrap >bootstrap.log 2>&1) ||
    { echo "bench-gasnet-smp: Bootstrap failed: see $src/bootstrap.log" >&2; exit 1; }
  mkdir -p "$build"
  (cd "$build" && CC="gcc -fgnu89-inline -fcommon" "$src/configure" --disable-mpi --disable-udp \
      --disable-ibv --disable-ofi --disable-psm --disable-mxm --disable-portals4 --enable-smp \
      --enable-pshm >configure.log 2>&1 &&
   make -C smp-conduit -j2 seq >make.log 2>&1 && make -C smp-conduit testam >>make.log 2>&1) ||
    { echo "bench-gasnet-smp: building GASNet failed: see $build/configure.log and $build/make.log" >&2; exit 1; }
fi
for r in $(seq "$rounds"); do
  echo "round $r, load $(cut -d' ' -f1-3 /proc/loadavg)"
  out=$(GASNET_SUPERNODE_MAXSIZE=0 GASNET_QUIET=1 timeout 300 "$rel/gasnetrun-ofi" -n 2 \
      "$rel/gex-bench" --tests am --sizes 8 --reps 5 --iters $((iters / 4)) 2>&1) ||
    { echo "bench-gasnet-smp: round $r: gex-bench failed (exit $?):" >&2; echo "$out" >&2; exit 1; }
  grep am_short_rtt <<<"$out"
  out=$(cd "$build/smp-conduit" && GASNET_PSHM_NODES=2 timeout 120 ./testam "$iters" 0 A 2>&1) ||
    { echo "bench-gasnet-smp: round $r: testam failed (exit $?):" >&2; echo "$out" >&2; exit 1; }
  grep "AMShort     ping-pong roundtrip ReqRep" <<<"$out"
  "$rel/examples/shm_floor" "$iters" 5 | grep -E "two cache|two shared"
done
