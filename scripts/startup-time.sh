#!/usr/bin/env bash
# Start-up and exit cost of a job per libfabric: the wall time of
# `gasnetrun-ofi -n N hello` (every rank starts the client, attaches a
# segment, meets the others in a barrier and exits; examples/hello.rs) for
# N = 2, 16 and 64 on this host, median of RUNS runs, with Debian's
# libfabric 1.17 (target/release) and, when built, the libfabric 2.1 of
# `scripts/setup.sh --libfabric=2` (target/libfabric-2/release). Builds
# what it runs. docs/launching.md records the figures.
#
#   bash scripts/startup-time.sh [RUNS] [RANKS...]
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=${1:-3}
shift || true
ranks=("$@")
[ ${#ranks[@]} -gt 0 ] || ranks=(2 16 64)
case $runs in ''|*[!0-9]*|0) echo "startup-time: RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac
build() {
  cargo build --release --quiet -p gasnetrun-ofi --bin gasnetrun-ofi
  cargo build --release --quiet -p gex-examples --example hello
}
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
measure() { # label bindir
  local label=$1 dir=$2
  for n in "${ranks[@]}"; do
    local times=()
    for _ in $(seq 1 "$runs"); do
      local t0 t1 out
      t0=$(date +%s.%N)
      out=$(timeout 300 "$dir/gasnetrun-ofi" -n "$n" "$dir/examples/hello" 2>&1) \
        || { echo "startup-time: $label, $n ranks failed: $out" >&2; exit 1; }
      t1=$(date +%s.%N)
      grep -q "^hello: ok: $n ranks" <<<"$out" || { echo "startup-time: $label, $n ranks: no success line: $out" >&2; exit 1; }
      times+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
    done
    printf '%s\t%s ranks\tmedian %.2f s\t(runs: %s)\n' "$label" "$n" \
      "$(printf '%s\n' "${times[@]}" | median)" "$(printf '%.2f ' "${times[@]}")"
  done
}
echo "load at start: $(cut -d' ' -f1-3 /proc/loadavg); CPUs: $(nproc)"
(unset LD_LIBRARY_PATH CARGO_TARGET_DIR RUSTFLAGS PKG_CONFIG_PATH CONDUIT_LIBFABRIC; build)
(unset LD_LIBRARY_PATH; measure "libfabric $(pkg-config --modversion libfabric)" "$root/target/release")
if [ -f "$root/.libfabric-2/lib/pkgconfig/libfabric.pc" ]; then
  (
    unset CARGO_TARGET_DIR RUSTFLAGS
    # shellcheck source=libfabric-2.env
    source scripts/libfabric-2.env
    build
    measure "libfabric $(pkg-config --modversion libfabric)" "$CARGO_TARGET_DIR/release"
  )
else
  echo "libfabric 2.1 not built (bash scripts/setup.sh --libfabric=2): measured 1.17 only"
fi
