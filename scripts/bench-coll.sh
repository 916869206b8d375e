#!/usr/bin/env bash
# Collectives and atomics figures of docs/PERFORMANCE.md, side by side in
# one window: broadcast and allreduce latency at 8 B and 64 KiB on 4 ranks
# (the conduit's gex-coll `lat` mode, beside Open MPI's MPI_Bcast /
# MPI_Allreduce from bench/c/coll_lat.c built with mpicc and run with
# Debian's mpirun), and fetch-and-add latency on 2 ranks, native vs by
# Active Message (gex-atomics `lat`, one job each way, and `pair`, both
# ways in one job, 15 pairs of back-to-back blocks: its figure is the
# median of the pairs' ratios, which the machine's changes of speed move
# far less), beside the provider's own floor with no conduit
# (bench/c/raw_atomic.c: shm's fi_fetch_atomic against its 8-byte message
# round trip, 15 pairs of blocks in one run: the closer the conduit's AM
# path gets to the provider's round trip, the closer native / AM gets to
# that ratio). The conduit rows come from target/release (the 1.17 build)
# whatever libfabric the raw row is built against.
# Each configuration runs ROUNDS times
# (default 3), alternating; the conduit with the collective cache within
# a supernode (shared), without it (shared-am), over a provider with chunks
# as AMs (the default there) or written into the caches by RMA (-rma);
# `-pinned` rows (both Open MPI and the conduit) bind rank r to CPU
# r % CPUs with taskset, so the scheduler's placement (which moves
# oversubscribed ranks between CPUs and makes runs bimodal) is the same
# for both; printed: every run's line, then per figure the median over the
# runs and its ratio to Open MPI's (collectives; `-pinned` rows to Open
# MPI's pinned run) or to the AM figure (native atomics).
#
#   bash scripts/bench-coll.sh [ROUNDS]
#
# Needs a release build (cargo build --release -p tests -p gasnetrun-ofi)
# and Open MPI (apt-get install openmpi-bin libopenmpi-dev). Measure on a
# quiet machine: 4 ranks on 2 cores already oversubscribe it.
set -euo pipefail
rounds=${1:-3}
root=$(cd "$(dirname "$0")/.." && pwd)
rel=$root/target/release
for b in gasnetrun-ofi gex-coll gex-atomics; do
  [ -x "$rel/$b" ] || { echo "bench-coll: $rel/$b is missing: cargo build --release -p tests -p gasnetrun-ofi" >&2; exit 2; }
done
command -v mpicc >/dev/null || { echo "bench-coll: mpicc not found: apt-get install openmpi-bin libopenmpi-dev" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
mpicc -O2 -o "$out/coll_lat" "$root/bench/c/coll_lat.c"
# The provider's floor, built against the libfabric pkg-config names (the
# system's, or 2.x under scripts/libfabric-2.env), as the conduit is.
# shellcheck disable=SC2046
cc -O2 $(pkg-config --cflags libfabric) -o "$out/raw_atomic" "$root/bench/c/raw_atomic.c" \
  $(pkg-config --libs libfabric) -Wl,-rpath,"$(pkg-config --variable=libdir libfabric)"
# Bind a rank (Open MPI's or the conduit's rank variable) to one CPU.
printf '%s\n' '#!/bin/sh' \
  'r=${OMPI_COMM_WORLD_RANK:-${GASNET_OFI_RANK:?no rank variable}}' \
  'exec taskset -c $((r % $(nproc))) "$@"' > "$out/pin"
chmod +x "$out/pin"
export GASNET_QUIET=1
coll() { # name provider maxsize [var=value...]; PIN=1 binds the ranks
  dev=lo; [ "$2" = shm ] && dev=shm
  env "${@:4}" FI_PROVIDER=$2 GASNET_OFI_DEVICE=$dev GASNET_SUPERNODE_MAXSIZE=$3 \
    timeout 600 "$rel/gasnetrun-ofi" -n 4 ${PIN:+"$out/pin"} "$rel/gex-coll" lat 1000 | tail -1 | sed "s/^/$1 /"
}
atom() { # name provider mode
  dev=lo; [ "$2" = shm ] && dev=shm
  FI_PROVIDER=$2 GASNET_OFI_DEVICE=$dev GASNET_SUPERNODE_MAXSIZE=1 GASNET_OFI_ATOMICS=$3 \
    timeout 600 "$rel/gasnetrun-ofi" -n 2 "$rel/gex-atomics" lat 20000 | tail -1 | sed "s/^/$1 /"
}
pair() { # name provider
  dev=lo; [ "$2" = shm ] && dev=shm
  FI_PROVIDER=$2 GASNET_OFI_DEVICE=$dev GASNET_SUPERNODE_MAXSIZE=1 \
    timeout 600 "$rel/gasnetrun-ofi" -n 2 "$rel/gex-atomics" pair 2000 | tail -1 | sed "s/^/$1 /"
}
for r in $(seq 1 "$rounds"); do
  echo "ompi $(mpirun --allow-run-as-root --oversubscribe --bind-to none -n 4 "$out/coll_lat" 1000)"
  echo "ompi-pinned $(mpirun --allow-run-as-root --oversubscribe --bind-to none -n 4 "$out/pin" "$out/coll_lat" 1000)"
  coll conduit-shared shm 0
  PIN=1 coll conduit-shared-pinned shm 0
  coll conduit-shared-am shm 0 GASNET_OFI_COLL_CACHE_PAGES=0
  coll conduit-shm shm 1
  coll conduit-shm-rma shm 1 GASNET_OFI_COLL_RMA=on
  coll conduit-tcp tcp 1
  coll conduit-tcp-rma tcp 1 GASNET_OFI_COLL_RMA=on
  atom atomic-shm-native shm native
  atom atomic-shm-am shm am
  atom atomic-tcp-native tcp native
  atom atomic-tcp-am tcp am
  pair atomic-shm-pair shm
  pair atomic-tcp-pair tcp
  echo "atomic-shm-raw $(timeout 120 "$out/raw_atomic" 20000 shm | tail -1)"
  uptime | sed 's/^/# load: /'
done | tee "$out/lines"
echo
echo "# medians over $rounds runs"
awk '
  function med(a, n,   i, j, t) {
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  /^#/ { next }
  /broadcast/ {
    name = $1; c[name]++
    # fields: "<size> B broadcast X us allreduce Y us, <size> B ..."
    for (i = 1; i <= NF; i++) {
      if ($i == "B") size = $(i - 1)
      if ($i == "broadcast") { k = name SUBSEP size SUBSEP "bcast"; v[k, c[name]] = $(i + 1) + 0; keys[k] = 1 }
      if ($i == "allreduce") { k = name SUBSEP size SUBSEP "allreduce"; v[k, c[name]] = $(i + 1) + 0; keys[k] = 1 }
    }
  }
  /native \/ AM/ {
    name = $1; c[name]++
    for (i = 1; i <= NF; i++) if ($i == "/" && $(i + 1) == "AM") { k = name SUBSEP "8" SUBSEP "pair"; v[k, c[name]] = $(i + 2) + 0; keys[k] = 1 }
    next
  }
  /fetch-and-add \/ round trip/ {
    name = $1; c[name]++
    for (i = 1; i <= NF; i++) if ($i == "trip" && $(i - 1) == "round" && $(i - 2) == "/") { k = name SUBSEP "8" SUBSEP "raw"; v[k, c[name]] = $(i + 1) + 0; keys[k] = 1 }
    next
  }
  /fetch-and-add latency/ {
    name = $1; c[name]++
    for (i = 1; i <= NF; i++) if ($i == "latency") { k = name SUBSEP "8" SUBSEP "fadd"; v[k, c[name]] = $(i + 1) + 0; keys[k] = 1 }
  }
  END {
    for (k in keys) {
      split(k, p, SUBSEP); n = c[p[1]]
      for (i = 1; i <= n; i++) x[i] = v[k, i]
      m[k] = med(x, n)
    }
    for (k in keys) {
      split(k, p, SUBSEP)
      if (p[3] == "raw") {
        printf "%-22s %-9s %6s B %10.3f     (the provider alone: fetch-and-add / message round trip, median over the runs)\n", p[1], p[3], p[2], m[k]
      } else if (p[3] == "pair") {
        printf "%-22s %-9s %6s B %10.3f     (native / am: median over the runs of the paired medians)\n", p[1], p[3], p[2], m[k]
      } else if (p[3] == "fadd") {
        base = p[1]; sub(/-native$/, "-am", base)
        b = m[base SUBSEP "8" SUBSEP "fadd"]
        printf "%-22s %-9s %6s B %10.3f us  (/ am %.2f)\n", p[1], p[3], p[2], m[k], b ? m[k] / b : 0
      } else {
        b = m[(p[1] ~ /-pinned$/ ? "ompi-pinned" : "ompi") SUBSEP p[2] SUBSEP p[3]]
        printf "%-22s %-9s %6s B %10.3f us  (/ Open MPI %.2f)\n", p[1], p[3], p[2], m[k], b ? m[k] / b : 0
      }
    }
  }' "$out/lines" | sort
