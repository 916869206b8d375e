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
# processes, such as another job's, are not this job's leftovers).
objects() {
  find /dev/shm -maxdepth 1 -regex '.*/[0-9]+:[0-9]+:[0-9]+' | sort | while read -r f; do
    p=${f##*/}; p=${p%%:*}
    [ -d "/proc/$p" ] || echo "$f"
  done
}
before=$(objects)
failed=0
echo "| exit form | shm | tcp;ofi_rxm |"
echo "| --- | --- | --- |"
for f in "${forms[@]}"; do
  IFS='|' read -r name cmd code want <<<"$f"
  row="| $name |"
  for prov in shm "tcp;ofi_rxm"; do
    dev=lo; [ "$prov" = shm ] && dev=shm
    ok=0
    for i in $(seq 1 "$runs"); do
      read -r -a argv <<<"$cmd"
      out=$log/run.out err=$log/run.err
      set +e
      FI_PROVIDER=$prov GASNET_OFI_DEVICE=$dev GASNET_QUIET=1 GASNET_EXITTIMEOUT=30 \
        timeout -k 5 120 "$bin/gasnetrun-ofi" -n 4 "$bin/${argv[0]}" "${argv[@]:1}" >"$out" 2>"$err"
      rc=$?
      set -e
      good=1
      [ "$rc" = "$code" ] || good=0
      if [ -n "$want" ] && ! head -n 1 "$out" | grep -q "^$want"; then good=0; fi
      if pgrep -f "^$bin/${argv[0]}" >/dev/null; then good=0; pkill -9 -f "^$bin/${argv[0]}" || true; fi
      sleep 0.05
      if [ "$(objects)" != "$before" ]; then good=0; fi
      if [ $good = 1 ]; then
        ok=$((ok + 1))
      else
        failed=1
        keep=$log/fail-$(echo "$name-$prov-$i" | tr -c 'a-zA-Z0-9-' _)
        { echo "exit code $rc (expected $code)"; echo "--- stdout"; cat "$out"; echo "--- stderr"; cat "$err";
          echo "--- new /dev/shm objects"; comm -13 <(echo "$before") <(objects); } >"$keep"
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
