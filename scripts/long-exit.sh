#!/usr/bin/env bash
# The --long tier of the exit tests (issue 16; a script, not CI): every
# exit form of a 4-rank job, RUNS times each (default 100) on shm and on
# tcp;ofi_rxm, checking the launcher's exit code and, where the form prints
# one, rank 0's summary line. Each job has a deadline (timeout -k kills
# what is left) and the script checks that no rank survives a run and that
# no shm object is left in /dev/shm. Prints a Markdown table of passes per
# form and provider (docs/exit-long.md records the latest); exits 1 if
# any run failed, with the failing runs' output in the log directory.
#
#   bash scripts/long-exit.sh [RUNS]
#
# LONG_EXIT_FORMS (a grep -E pattern on the form's name) and
# LONG_EXIT_PROVIDERS (space-separated) narrow the table.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-100}
case $runs in ''|*[!0-9]*|0) echo "long-exit: RUNS must be a positive integer, not '$runs'" >&2; exit 2 ;; esac
cargo build --release --quiet -p gasnetrun-ofi -p tests -p gex-examples --bins --examples
bin=$PWD/target/release
log=$(mktemp -d /tmp/long-exit.XXXXXX)
# form|program and arguments|expected exit code|expected start of stdout
forms=(
  "collective exit from rank 0|gex-am exit rank0 7|7|"
  "collective exit from rank 1|gex-am exit rank1 7|7|"
  "exit from a handler|gex-am exit handler 7|7|"
  "every rank exits after a barrier|gex-am exit after-barrier 7|7|"
  "return from main|gex-am exit return 0|0|"
  "std::process::exit without the client's exit|gex-rma std-exit|3|"
  "error exit (unknown mode)|gex-rma no-such-mode|1|"
  "AM core, summary line|gex-am core|0|gex-am core: ok"
  "GUPS example, summary line|examples/gups 5000|0|gups: ok:"
)
# shm provider objects left by processes that are gone (those of live
# processes, such as another job's, are not this job's leftovers); each run
# is compared with what was there just before it.
objects() {
  find /dev/shm -maxdepth 1 -regex '.*/[0-9]+:[0-9]+:[0-9]+' | sort | while read -r f; do
    p=${f##*/}; p=${p%%:*}
    [ -d "/proc/$p" ] || echo "$f"
  done
}
failed=0
read -r -a provs <<<"${LONG_EXIT_PROVIDERS:-shm tcp;ofi_rxm}"
echo "| exit form |$(printf ' %s |' "${provs[@]}")"
echo "| --- |$(printf ' --- |%.0s' "${provs[@]}")"
for f in "${forms[@]}"; do
  IFS='|' read -r name cmd code want <<<"$f"
  if [ -n "${LONG_EXIT_FORMS:-}" ] && ! grep -qE "$LONG_EXIT_FORMS" <<<"$name"; then continue; fi
  row="| $name |"
  for prov in "${provs[@]}"; do
    dev=lo; [ "$prov" = shm ] && dev=shm
    ok=0
    for i in $(seq 1 "$runs"); do
      read -r -a argv <<<"$cmd"
      out=$log/run.out err=$log/run.err
      before=$(objects)
      set +e
      FI_PROVIDER=$prov GASNET_OFI_DEVICE=$dev GASNET_QUIET=1 GASNET_EXITTIMEOUT=30 \
        timeout -k 5 120 "$bin/gasnetrun-ofi" -n 4 "$bin/${argv[0]}" "${argv[@]:1}" >"$out" 2>"$err"
      rc=$?
      set -e
      good=1 why=()
      if [ "$rc" != "$code" ]; then good=0; why+=("exit code"); fi
      if [ -n "$want" ] && ! head -n 1 "$out" | grep -q "^$want"; then good=0; why+=("summary line"); fi
      survivors=$(pgrep -af "^$bin/${argv[0]}" || true)
      if [ -n "$survivors" ]; then good=0; why+=("processes left"); pkill -9 -f "^$bin/${argv[0]}" || true; fi
      # An object of a gone process that is removed within a second was
      # being cleaned up by another job's launcher; a leak stays.
      if [ "$(objects)" != "$before" ]; then
        sleep 1
        if [ "$(objects)" != "$before" ]; then good=0; why+=("/dev/shm objects left"); fi
      fi
      if [ $good = 1 ]; then
        ok=$((ok + 1))
      else
        failed=1
        keep=$log/fail-$(echo "$name-$prov-$i" | tr -c 'a-zA-Z0-9-' _)
        { echo "failed: ${why[*]}"; echo "exit code $rc (expected $code)"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err";
          echo "--- new /dev/shm objects"; comm -13 <(echo "$before") <(objects);
          echo "--- processes of the program left"; echo "$survivors";
          echo "--- their state"; for p in $(awk '{print $1}' <<<"$survivors"); do cat "/proc/$p/status" 2>/dev/null | head -8; done; } >"$keep"
      fi
    done
    row="$row $ok/$runs |"
  done
  echo "$row"
done
echo
echo "$(date -u '+%Y-%m-%d %H:%M UTC'), libfabric $(pkg-config --modversion libfabric), $(nproc) CPUs, load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ $failed = 1 ]; then
  echo "long-exit: some runs failed; their output is in $log" >&2
  exit 1
fi
rm -rf "$log"
