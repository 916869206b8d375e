#!/bin/sh
# Run gex-bench on shm and on tcp;ofi_rxm (loopback), as docs/PERFORMANCE.md
# describes. Usage: bench/run.sh [OUTDIR] [gex-bench options...]
# Build first: cargo build --release -p bench -p gasnetrun-ofi
set -eu
out=${1:-bench-results}
[ $# -gt 0 ] && shift
bin=${CARGO_TARGET_DIR:-target}/release
mkdir -p "$out"
for prov in shm tcp; do
    if [ "$prov" = shm ]; then dev=shm; else dev=lo; fi
    echo "== $prov ==" >&2
    FI_PROVIDER=$prov GASNET_OFI_DEVICE=$dev GASNET_QUIET=1 \
        "$bin/gasnetrun-ofi" -n 2 "$bin/gex-bench" --wait-quiet 300 \
        --json "$out/$prov.json" --csv "$out/$prov.csv" --plot "$out/$prov.svg" "$@" | tee "$out/$prov.txt"
done
