#!/usr/bin/env bash
# Which rank of a 2-rank job makes two builds differ: runs the 8-byte
# blocking put (or the AM round trip) with every pairing of the builds'
# gex-bench, rank 0 (the one that measures) and rank 1 (the target, which
# only polls) each from OLD or NEW: OO, NN, NO (rank 0 new, rank 1 old) and
# ON, alternating ROUNDS times. Prints each pairing's median over the runs
# and the ratios that isolate each side, with 90% bootstrap intervals. The
# builds must speak the same wire protocol (the launcher of NEW starts
# both). Measure on a quiet machine.
#
#   bash scripts/bench-cross.sh OLD_DIR NEW_DIR put|rtt|rtt-tagged [ROUNDS] [PROVIDER]
set -euo pipefail
if [ $# -lt 3 ]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
old=$1 new=$2 what=$3 rounds=${4:-30} prov=${5:-shm}
# shellcheck source=bench-figure.sh
source "$(dirname "$0")/bench-figure.sh" bench-cross
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/rank.sh" <<'W'
#!/bin/sh
# Rank 0 runs $BENCH_R0/gex-bench, the others $BENCH_R1/gex-bench.
if [ "$GASNET_OFI_RANK" = 0 ]; then exec "$BENCH_R0/gex-bench" "$@"; fi
exec "$BENCH_R1/gex-bench" "$@"
W
chmod +x "$tmp/rank.sh"
for _ in $(seq 1 "$rounds"); do
  for pair in OO NN NO ON; do
    BENCH_R0=$old; [ "${pair:0:1}" = N ] && BENCH_R0=$new
    BENCH_R1=$old; [ "${pair:1:1}" = N ] && BENCH_R1=$new
    export BENCH_R0 BENCH_R1
    x=$(timeout 300 "$new/gasnetrun-ofi" -n 2 -E FI_PROVIDER,GASNET_OFI_DEVICE,GASNET_SUPERNODE_MAXSIZE,BENCH_R0,BENCH_R1 \
          "$tmp/rank.sh" "${args[@]}" 2>&1 | pick | sort -n | sed -n 3p)
    [ -n "$x" ] || { echo "bench-cross: a $pair run printed no figure" >&2; exit 1; }
    echo "$pair $x" >> "$tmp/out"
  done
done
python3 - "$tmp/out" "$what" "$prov" <<'PY'
import random, statistics, sys
d = {}
for line in open(sys.argv[1]):
    k, v = line.split()
    d.setdefault(k, []).append(float(v))
m = {k: statistics.median(v) for k, v in d.items()}
print(f"{sys.argv[2]} {sys.argv[3]}: {len(d['OO'])} runs per pairing (rank 0 build, rank 1 build)")
for k in ("OO", "NN", "NO", "ON"):
    print(f"  {k}: {m[k]:.3f} us")
def ratio(a, b):
    random.seed(1)
    boot = sorted(statistics.median(random.choices(d[a], k=len(d[a])))
                  / statistics.median(random.choices(d[b], k=len(d[b]))) for _ in range(2000))
    return f"{m[a] / m[b]:.3f} (90% interval {boot[100]:.3f}..{boot[1899]:.3f})"
print(f"  both new / both old:          NN/OO {ratio('NN', 'OO')}")
print(f"  rank 1 new (rank 0 old):      ON/OO {ratio('ON', 'OO')}")
print(f"  rank 1 new (rank 0 new):      NN/NO {ratio('NN', 'NO')}")
print(f"  rank 0 new (rank 1 old):      NO/OO {ratio('NO', 'OO')}")
print(f"  rank 0 new (rank 1 new):      NN/ON {ratio('NN', 'ON')}")
PY
