#!/usr/bin/env bash
# Measure two builds of gex-bench side by side in one window: alternate
# OLD and NEW runs (each a 2-rank job under its own gasnetrun-ofi) ROUNDS
# times per provider, then print the medians of each figure and NEW/OLD.
#
#   bash scripts/bench-vs.sh OLD_DIR NEW_DIR [ROUNDS] [PROVIDER...]
#
# OLD_DIR and NEW_DIR hold gasnetrun-ofi and gex-bench (e.g. a release
# build of the previous commit in a git worktree, and target/release).
# Extra gex-bench options go in GEX_BENCH_ARGS (default: AM round trip and
# 8-byte put/get latency, 5 repetitions of 20,000, each beside fi_pingpong).
# Printed per figure: the median over all runs of each build's per-run
# median, NEW/OLD, and, where gex-bench measured fi_pingpong beside it, each
# build's median paired ratio (ours / fi_pingpong of the same repetition),
# which cancels the machine's drift between runs. JSON of every run is kept
# in $OUT (default /tmp/bench-vs). Measure on a quiet machine: with 2
# cores a third busy process ruins spin-polling latencies.
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$1 new=$2 rounds=${3:-5}
shift 2; [ $# -gt 0 ] && shift
providers=("$@"); [ ${#providers[@]} -eq 0 ] && providers=(shm tcp)
args=${GEX_BENCH_ARGS:---tests am,rma --sizes 8 --reps 5 --iters 20000}
out=${OUT:-/tmp/bench-vs}
mkdir -p "$out"
for d in "$old" "$new"; do
  for b in gasnetrun-ofi gex-bench; do
    [ -x "$d/$b" ] || { echo "bench-vs: $d/$b is missing" >&2; exit 2; }
  done
done
export GASNET_QUIET=1
for p in "${providers[@]}"; do
  dev=lo; [ "$p" = shm ] && dev=shm
  for r in $(seq 1 "$rounds"); do
    for v in old new; do
      d=$old; [ $v = new ] && d=$new
      # shellcheck disable=SC2086
      FI_PROVIDER=$p GASNET_OFI_DEVICE=$dev timeout 600 "$d/gasnetrun-ofi" -n 2 \
        -E FI_PROVIDER,GASNET_OFI_DEVICE "$d/gex-bench" $args --json "$out/$p-$v-$r.json" >/dev/null
      echo -n "$p $v $r; " >&2
    done
  done
done
echo >&2
python3 - "$out" "${providers[@]}" <<'EOF'
import json, statistics, sys, glob
out, provs = sys.argv[1], sys.argv[2:]
med = statistics.median
print(f"{'provider':10} {'figure':16} {'size':>5} {'unit':5} {'old':>9} {'new':>9} {'new/old':>8} {'old/raw':>8} {'new/raw':>8} {'ratio':>6}")
for p in provs:
    fig = {}
    for v in ("old", "new"):
        for f in sorted(glob.glob(f"{out}/{p}-{v}-*.json")):
            for row in json.load(open(f))["rows"]:
                if row.get("ours"):
                    d = fig.setdefault((row["test"], row["size"], row["unit"]), {}).setdefault(v, {"ours": [], "paired": []})
                    d["ours"].append(row["ours"]["median"])
                    if row.get("paired_ratio") is not None:
                        d["paired"].append(row["paired_ratio"])
    for (t, s, u), vv in fig.items():
        if "old" in vv and "new" in vv:
            o, n = med(vv["old"]["ours"]), med(vv["new"]["ours"])
            line = f"{p:10} {t:16} {str(s):>5} {u:5} {o:9.3f} {n:9.3f} {n/o:8.3f}"
            if vv["old"]["paired"] and vv["new"]["paired"]:
                po, pn = med(vv["old"]["paired"]), med(vv["new"]["paired"])
                line += f" {po:8.3f} {pn:8.3f} {pn/po:6.3f}"
            print(line)
EOF
