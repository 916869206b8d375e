#!/usr/bin/env bash
# The C API's AM Short round trip and 8-byte blocking put latency beside
# the Rust API's (gex-bench), side by side in one run: each round runs
# gex-bench's rtt and put figures (a job each, 5 repetitions; the run's
# figure is their median) and then capi/bench/pingpong.c's (the same loops
# through gasnetex.h, a job each, 5 repetitions), 2 ranks on PROVIDER. Printed per figure:
# each API's median over the rounds, C/Rust, and a 90% bootstrap interval.
#
#   bash scripts/bench-capi.sh PREFIX [ROUNDS] [PROVIDER] [ITERS]
#
# PREFIX: a release install (scripts/install.sh --prefix PREFIX);
# gex-bench is taken from target/release. Measure on a quiet machine.
set -euo pipefail
if [ $# -lt 1 ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
prefix=$1 rounds=${2:-10} prov=${3:-shm} iters=${4:-50000}
here="$(cd "$(dirname "$0")/.." && pwd)"
bench="$here/target/release/gex-bench"
[ -x "$bench" ] || { echo "bench-capi: $bench is missing: cargo build --release -p bench" >&2; exit 1; }
exe=$(mktemp -d)/pingpong
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
# shellcheck disable=SC2046
cc -O2 -std=c99 $(pkg-config --cflags gasnet-ofi-seq) "$here/capi/bench/pingpong.c" \
   $(pkg-config --libs gasnet-ofi-seq) -o "$exe"
dev=lo; [ "$prov" = shm ] && dev=shm
export GASNET_QUIET=1 FI_PROVIDER=$prov GASNET_OFI_DEVICE=$dev
run="$prefix/bin/gasnetrun-ofi"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
median3() { sort -n | sed -n 3p; }
echo "bench-capi: $prov, $rounds rounds, $iters iterations, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq 1 "$rounds"); do
  r=$(timeout 300 "$run" -n 2 -E FI_PROVIDER,GASNET_OFI_DEVICE "$bench" --tests am --sizes 8 --reps 5 \
        --iters "$iters" --flood-bytes 64 --no-pingpong 2>&1 | grep "us per round trip" | awk '{print $(NF-4)}' | median3)
  p=$(timeout 300 "$run" -n 2 -E FI_PROVIDER,GASNET_OFI_DEVICE "$bench" --tests rma --sizes 8 --reps 5 \
        --iters "$iters" --no-pingpong 2>&1 | grep "blocking put/get 8 B" | awk '{print $(NF-3)}' | median3)
  cr=$(timeout 300 "$run" -n 2 "$exe" "$iters" 5 rtt 2>&1 | grep "us per round trip" | awk '{print $(NF-4)}' | median3)
  cp=$(timeout 300 "$run" -n 2 "$exe" "$iters" 5 put 2>&1 | grep "blocking put 8 B" | awk '{print $(NF-1)}' | median3)
  for v in "$r" "$p" "$cr" "$cp"; do [ -n "$v" ] || { echo "bench-capi: a run printed no figure" >&2; exit 1; }; done
  echo "rtt $r $cr" >> "$out"
  echo "put $p $cp" >> "$out"
done
python3 - "$out" "$prov" <<'PY'
import random, statistics, sys
rows = {"rtt": ([], []), "put": ([], [])}
for line in open(sys.argv[1]):
    k, rust, c = line.split()
    rows[k][0].append(float(rust)); rows[k][1].append(float(c))
random.seed(1)
for k, name in (("rtt", "AM Short round trip"), ("put", "8-byte blocking put")):
    rust, c = rows[k]
    mr, mc = statistics.median(rust), statistics.median(c)
    boot = sorted(statistics.median(random.choices(c, k=len(c))) / statistics.median(random.choices(rust, k=len(rust)))
                  for _ in range(2000))
    print(f"{sys.argv[2]} {name}: {len(rust)} rounds; Rust API {mr:.3f} us, C API {mc:.3f} us, "
          f"C/Rust {mc / mr:.3f} (90% interval {boot[100]:.3f}..{boot[1899]:.3f})")
PY
