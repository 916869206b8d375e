#!/usr/bin/env bash
# A/B one latency of two builds of gex-bench with many alternating runs, for
# differences of a few percent (one run's median moves by +-3% on a 2-core
# machine). Each round runs OLD then NEW (2-rank jobs on PROVIDER); the
# figure of a run is the median of its 5 repetitions. Printed: each build's
# median over the runs, NEW/OLD, and a 90% bootstrap interval of NEW/OLD.
#
#   [COPIES=N] bash scripts/bench-ab.sh OLD_DIR NEW_DIR rtt|rtt-tagged|put [ROUNDS] [PROVIDER]
#
# rtt: AM Short round trip (--tests am); rtt-tagged: the same with tagged
# messaging opened (--tests am,tagged); put: 8-byte blocking put
# (--tests rma). OLD_DIR and NEW_DIR hold gasnetrun-ofi and gex-bench.
# Each build runs from COPIES (default 4) copies of its two binaries, used
# in turn: a file's code sits in the same physical pages for as long as it
# stays in the page cache, and where those pages fall in the caches moves a
# spin loop's latency by a few percent, the same way for a whole series
# (two fresh copies of one build measured 0.98-0.99 apart; four copies
# each, 1.001).
# SPLIT=US (a figure in us, e.g. 0.45) also keeps every repetition and
# reports them split at US: this machine's vCPUs switch between a fast and a
# slow state (a cache line's round trip differs by up to 10x) every few
# seconds, so a run's median can be of either state or of both; the
# repetitions below US are compared with each other, those above with each
# other (medians, their ratio new/old and a 90% bootstrap interval).
# Measure on a quiet machine.
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$1 new=$2 what=$3 rounds=${4:-20} prov=${5:-shm}
# shellcheck source=bench-figure.sh
source "$(dirname "$0")/bench-figure.sh" bench-ab
copies=${COPIES:-4}
case $copies in
  *[!0-9]*) copies_ok=0 ;;
  *) copies_ok=$(( 10#$copies >= 1 )) ;;
esac
if [ "$copies_ok" != 1 ]; then
  echo "bench-ab: COPIES must be a positive integer, not '$copies'" >&2
  exit 2
fi
split=${SPLIT:-}
if [ -n "$split" ] && ! [[ $split =~ ^[0-9]*\.?[0-9]+$ ]]; then
  echo "bench-ab: SPLIT must be a figure in us such as 0.45, not '$split'" >&2
  exit 2
fi
for d in "$old" "$new"; do
  for b in gasnetrun-ofi gex-bench; do
    [ -x "$d/$b" ] || { echo "bench-ab: '$d' holds no $b (give the target/release of a build with -p bench -p gasnetrun-ofi)" >&2; exit 2; }
  done
done
out=$(mktemp)
bins=$(mktemp -d)
trap 'rm -rf "$out" "$out.reps" "$bins"' EXIT
for v in old new; do
  d=$old; [ $v = new ] && d=$new
  for c in $(seq 1 "$copies"); do
    mkdir -p "$bins/$v$c"
    cp "$d/gasnetrun-ofi" "$d/gex-bench" "$bins/$v$c/"
  done
done
for r in $(seq 1 "$rounds"); do
  for v in old new; do
    d=$bins/$v$(( (r - 1) % copies + 1 ))
    all=$(timeout 300 "$d/gasnetrun-ofi" -n 2 -E FI_PROVIDER,GASNET_OFI_DEVICE,GASNET_SUPERNODE_MAXSIZE \
          "$d/gex-bench" "${args[@]}" 2>&1 | pick)
    x=$(echo "$all" | sort -n | sed -n 3p)
    [ -n "$x" ] || { echo "bench-ab: a $v run printed no figure" >&2; exit 1; }
    echo "$v $x" >> "$out"
    for y in $all; do echo "$v $y" >> "$out.reps"; done
  done
done
python3 - "$out" "$what" "$prov" "$split" <<'EOF'
import random, statistics, sys
runs = {"old": [], "new": []}
for line in open(sys.argv[1]):
    v, x = line.split()
    runs[v].append(float(x))
o, n = statistics.median(runs["old"]), statistics.median(runs["new"])
random.seed(1)
boot = sorted(
    statistics.median(random.choices(runs["new"], k=len(runs["new"])))
    / statistics.median(random.choices(runs["old"], k=len(runs["old"])))
    for _ in range(2000)
)
lo, hi = boot[100], boot[1899]
print(f"{sys.argv[2]} {sys.argv[3]}: {len(runs['old'])} runs per build; "
      f"old {o:.3f} us, new {n:.3f} us, new/old {n / o:.3f} (90% interval {lo:.3f}..{hi:.3f})")
if sys.argv[4]:
    cut = float(sys.argv[4])
    reps = {"old": [], "new": []}
    for line in open(sys.argv[1] + ".reps"):
        v, x = line.split()
        reps[v].append(float(x))
    for name, keep in (("below", lambda x: x < cut), ("above", lambda x: x >= cut)):
        a = [x for x in reps["old"] if keep(x)]
        b = [x for x in reps["new"] if keep(x)]
        if len(a) < 3 or len(b) < 3:
            print(f"  repetitions {name} {cut} us: old {len(a)}, new {len(b)} (too few to compare)")
            continue
        boot = sorted(
            statistics.median(random.choices(b, k=len(b)))
            / statistics.median(random.choices(a, k=len(a)))
            for _ in range(2000)
        )
        ma, mb = statistics.median(a), statistics.median(b)
        print(f"  repetitions {name} {cut} us: old {len(a)} median {ma:.3f} us, "
              f"new {len(b)} median {mb:.3f} us, new/old {mb / ma:.3f} "
              f"(90% interval {boot[100]:.3f}..{boot[1899]:.3f})")
EOF
