#!/usr/bin/env bash
# GASNet's own test programs, unmodified, built against this project's C
# API (gasnet.h, gasnetex.h, gasnet_tools.h) and run under gasnetrun-ofi:
# each with 2 ranks on the shared-memory path (GASNET_SUPERNODE_MAXSIZE=0,
# FI_PROVIDER=shm) and over tcp;ofi_rxm with the path off. Prints one line
# per program and configuration (ok / FAILED with the exit code and the
# output's last lines) and exits 1 if any failed.
#
#   bash scripts/gasnet1-tests.sh GASNET_SRC [TESTS]
#
# GASNET_SRC: a GASNet source tree with tests/test.h, e.g. a clone of
# https://github.com/evidence/axiom-evi-gasnet (GASNet 1.29.3). TESTS: a
# comma-separated list of its tests/*.c programs, each NAME[:ARG...][=CODE]
# (arguments separated by ':'; CODE the exit code the run must end with,
# default 0; testexit N must end with N). Default: the programs that build
# against this library (docs/c-api.md lists what the others need).
# Installs a release build under target/gasnet1-prefix first
# (scripts/install.sh).
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
[ -d "$1" ] || { echo "gasnet1-tests: GASNET_SRC '$1' is not a directory (give a GASNet source tree)" >&2; exit 2; }
src=$(CDPATH='' cd -- "$1" >/dev/null && pwd)
[ -f "$src/tests/test.h" ] || { echo "gasnet1-tests: $src/tests/test.h is missing (give a GASNet source tree)" >&2; exit 2; }
exits=$(for i in 1 2 3 5 6 7 8 9 10 11 12 13; do printf ',testexit:%s=%s' "$i" "$i"; done)
tests=${2:-testhello,testenv,testalign,testcore1,testcore3,testam,testsmall,testlarge,testnbr:10,testhsl:0,testrand:65536,testval,testqueue:10:64:65536,testmemset,testbarrierlate,testlogGP:100:10:8:1024,testvis,testslice,testbarrier,testbarrierconf,testmisc,testcore2$exits}
root=$(cd "$(dirname "$0")/.." && pwd)
prefix=$root/target/gasnet1-prefix
out=$root/target/gasnet1-tests
IFS=, read -r -a list <<<"$tests"
for item in "${list[@]}"; do
  [[ $item =~ ^[A-Za-z0-9_]+(:[A-Za-z0-9_.-]+)*(=[0-9]+)?$ ]] ||
    { echo "gasnet1-tests: '$item' is not NAME[:ARG...][=CODE] (for example testam or testexit:3=3)" >&2; exit 2; }
  t=${item%%[:=]*}
  [ -f "$src/tests/$t.c" ] || { echo "gasnet1-tests: $src/tests/$t.c does not exist" >&2; exit 2; }
done
bash "$root/scripts/install.sh" --prefix "$prefix" --kind shared >/dev/null
mkdir -p "$out"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cflags=$(pkg-config --cflags gasnet-ofi-seq) libs=$(pkg-config --libs gasnet-ofi-seq)
# Most programs link GASNet's delay loop (tests/delay.c).
cc -std=gnu11 -O2 $cflags -I"$src/tests" -c "$src/tests/delay.c" -o "$out/delay.o"
failed=0 passed=0
for item in "${list[@]}"; do
  want=0
  [[ $item == *=* ]] && want=${item##*=}
  spec=${item%%=*} t=${item%%[:=]*}
  args=() env=()
  [[ $spec == *:* ]] && IFS=: read -r -a args <<<"${spec#*:}"
  # testenv checks its arguments (one with spaces) and a variable, as
  # GASNet's own harness runs it.
  if [ "$spec" = testenv ]; then
    args=(GASNet is "Global Address Space Networking") env=("GASNET_DUMMY=GASNet dummy value")
  fi
  # shellcheck disable=SC2086 # flags are lists
  if ! cc -std=gnu11 -O2 $cflags -I"$src/tests" "$src/tests/$t.c" "$out/delay.o" -o "$out/$t" $libs >"$out/$t.build.log" 2>&1; then
    echo "$t: FAILED to build (see $out/$t.build.log)"; failed=1; continue
  fi
  for cfg in "shm 0" "tcp 1"; do
    read -r prov maxsize <<<"$cfg"
    dev=lo; [ "$prov" = shm ] && dev=shm
    log=$out/${spec//:/_}.$prov.log
    set +e
    env "${env[@]}" FI_PROVIDER=$prov GASNET_OFI_DEVICE=$dev GASNET_SUPERNODE_MAXSIZE=$maxsize GASNET_QUIET=1 \
      timeout -s KILL 300 "$prefix/bin/gasnetrun-ofi" -n 2 "$out/$t" "${args[@]}" >"$log" 2>&1
    rc=$?
    set -e
    what="$t ${args[*]:+${args[*]} }($prov, GASNET_SUPERNODE_MAXSIZE=$maxsize)"
    if [ "$rc" -eq "$want" ]; then
      echo "$what: ok (exit code $rc)"; passed=$((passed + 1))
    else
      echo "$what: FAILED with exit code $rc (want $want); last lines of $log:"; tail -5 "$log" | sed 's/^/    /'
      failed=1
    fi
  done
done
echo "gasnet1-tests: $passed runs passed$([ $failed = 0 ] || echo ", some FAILED")"

exit $failed
