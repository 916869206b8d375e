#!/usr/bin/env bash
# Fuzzes the parsers of untrusted input with cargo-fuzz (libFuzzer); see
# docs/fuzzing.md. Run `bash scripts/fuzz.sh --help` for the options.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: bash scripts/fuzz.sh [OPTIONS] [TARGET...] [-- LIBFUZZER_OPTION...]

Fuzzes each TARGET (default: every target in fuzz/fuzz_targets/, one after
the other) with libFuzzer through cargo-fuzz, starting from the committed
seed corpus (fuzz/seeds/<target>/), the local corpus a previous run left
(fuzz/corpus/<target>/, not committed) and, if there is one, the
dictionary fuzz/dicts/<target>.dict. Prints per target the executions,
the wall time, executions per second, coverage, corpus size and the result,
then a summary table. Exits 1 if any target crashed, hung or ran out of
memory, naming the input that did it (fuzz/artifacts/<target>/...).

Installs what is missing first: the Debian packages the workspace needs
(scripts/setup.sh) and cargo-fuzz (`cargo install cargo-fuzz --locked`).
Works on the stable toolchain (RUSTC_BOOTSTRAP=1, no sanitizer: -s none).

Options:
  --runs N        stop each target after N executions (default 10000000)
  --seconds S     stop each target after S seconds instead (with --runs too:
                  whichever comes first)
  --max-len N     largest input libFuzzer generates (default: libFuzzer's,
                  4096 bytes or the largest seed)
  --timeout S     an input running longer than S seconds is a hang (default 10)
  --no-setup      do not run scripts/setup.sh (packages already installed)
  --list          list the targets and exit
  -h, --help      this text

Anything after `--` goes to libFuzzer unchanged (e.g. -- -only_ascii=1 -dict=FILE).

Examples:
  bash scripts/fuzz.sh                        # every target, 10M executions each
  bash scripts/fuzz.sh --seconds 60 config    # one target for a minute
  bash scripts/fuzz.sh am_wire -- -only_ascii=1

Reproduce a crash:  fuzz/target/x86_64-unknown-linux-gnu/release/<target> <artifact>
             or:    RUSTC_BOOTSTRAP=1 cargo fuzz run -s none <target> <artifact>
EOF
}

cd "$(dirname "$0")/.."
root=$(pwd)
fuzz_dir="$root/fuzz"
triple=$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')
triple=${triple:-x86_64-unknown-linux-gnu}
bin_dir="$fuzz_dir/target/$triple/release"
log_dir="$fuzz_dir/target/fuzz-logs"

all_targets() {
  local f
  for f in "$fuzz_dir"/fuzz_targets/*.rs; do basename "$f" .rs; done
}

runs=""
seconds=""
max_len=""
timeout=10
setup=1
targets=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --list) all_targets; exit 0 ;;
    --runs) runs=${2:?--runs needs a number}; shift 2 ;;
    --runs=*) runs=${1#*=}; shift ;;
    --seconds) seconds=${2:?--seconds needs a number}; shift 2 ;;
    --seconds=*) seconds=${1#*=}; shift ;;
    --max-len) max_len=${2:?--max-len needs a number}; shift 2 ;;
    --max-len=*) max_len=${1#*=}; shift ;;
    --timeout) timeout=${2:?--timeout needs a number}; shift 2 ;;
    --timeout=*) timeout=${1#*=}; shift ;;
    --no-setup) setup=0; shift ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "fuzz.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
for v in "$runs" "$seconds" "$max_len" "$timeout"; do
  if [ -n "$v" ] && ! [[ "$v" =~ ^[0-9]+$ ]]; then
    echo "fuzz.sh: $v is not a whole number" >&2
    exit 2
  fi
done
if [ -z "$runs" ] && [ -z "$seconds" ]; then runs=10000000; fi

known=$(all_targets)
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets <<<"$known"
fi
for t in "${targets[@]}"; do
  if ! grep -qx "$t" <<<"$known"; then
    echo "fuzz.sh: no target $t; the targets are: $(echo $known)" >&2
    exit 2
  fi
done

if [ "$setup" -eq 1 ]; then
  bash scripts/setup.sh
fi
if ! command -v cargo-fuzz >/dev/null 2>&1 && ! [ -x "$HOME/.cargo/bin/cargo-fuzz" ]; then
  echo "fuzz.sh: cargo-fuzz is not installed; installing it (cargo install cargo-fuzz --locked, a few minutes)"
  cargo install cargo-fuzz --locked
fi
export PATH="$HOME/.cargo/bin:$PATH"
export RUSTC_BOOTSTRAP=1

echo "fuzz.sh: building ${targets[*]} (cargo fuzz build -s none; the first build takes a few minutes)"
if [ ${#targets[@]} -eq "$(wc -l <<<"$known")" ]; then
  cargo fuzz build -s none
else
  for t in "${targets[@]}"; do cargo fuzz build -s none "$t"; done
fi

mkdir -p "$log_dir"
opts=(-print_final_stats=1 "-timeout=$timeout")
[ -n "$runs" ] && opts+=("-runs=$runs")
[ -n "$seconds" ] && opts+=("-max_total_time=$seconds")
[ -n "$max_len" ] && opts+=("-max_len=$max_len")
opts+=("${extra[@]}")

failed=()
rows=()
for t in "${targets[@]}"; do
  corpus="$fuzz_dir/corpus/$t"
  seeds="$fuzz_dir/seeds/$t"
  artifacts="$fuzz_dir/artifacts/$t"
  log="$log_dir/$t.log"
  mkdir -p "$corpus" "$artifacts"
  dict=()
  [ -f "$fuzz_dir/dicts/$t.dict" ] && dict=("-dict=$fuzz_dir/dicts/$t.dict")
  corpora=("$corpus")
  [ -d "$seeds" ] && corpora+=("$seeds")
  cmd=("$bin_dir/$t" "${opts[@]}" "${dict[@]}" "-artifact_prefix=$artifacts/" "${corpora[@]}")
  echo
  echo "== $t"
  echo "   ${cmd[*]#"$root/"}"
  start=$(date +%s.%N)
  set +e
  "${cmd[@]}" >"$log" 2>&1
  rc=$?
  set -e
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  if [ -z "$execs" ]; then
    # Killed before the final statistics: take the last status line.
    execs=$(grep -oE '^#[0-9]+' "$log" | tail -n 1 | tr -d '#')
  fi
  execs=${execs:-0}
  rate=$(awk -v n="$execs" -v s="$wall" 'BEGIN { if (s > 0) printf "%.0f", n / s; else print 0 }')
  last=$(grep -E '^#[0-9]+.*cov: ' "$log" | tail -n 1 || true)
  cov=$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")
  ft=$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")
  corp=$(sed -nE 's/.* corp: ([0-9]+\/[0-9]+[A-Za-z]*).*/\1/p' <<<"$last")
  rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log" | tail -n 1)
  files=$(find "$corpus" -type f | wc -l)
  artifact=$(sed -nE 's/.*Test unit written to (.*)$/\1/p' "$log" | tail -n 1)
  if [ "$rc" -eq 0 ] && [ -z "$artifact" ]; then
    result="ok, 0 crashes"
  else
    case "$(basename "${artifact:-none}")" in
      crash-*) kind="CRASH" ;;
      timeout-*) kind="HANG (over ${timeout}s)" ;;
      oom-*) kind="OUT OF MEMORY" ;;
      leak-*) kind="LEAK" ;;
      *) kind="FAILED (libFuzzer exit $rc)" ;;
    esac
    result="$kind: ${artifact:-no artifact written} (log: ${log#"$root/"})"
    failed+=("$t: $result")
  fi
  printf '   executions  %s\n   wall time   %s s\n   exec/s      %s\n' "$execs" "$wall" "$rate"
  printf '   coverage    cov %s, ft %s\n   corpus      %s in memory, %s files in %s\n' \
    "${cov:-?}" "${ft:-?}" "${corp:-?}" "$files" "${corpus#"$root/"}"
  printf '   peak RSS    %s MB\n   result      %s\n' "${rss:-?}" "$result"
  if [ -n "$artifact" ]; then
    echo "   --- end of the log:"
    grep -vE '^#[0-9]+' "$log" | tail -n 30 | sed 's/^/   | /'
    if [ -f "$artifact" ]; then
      echo "   input (hex): $(od -An -tx1 -v "$artifact" | tr -d ' \n' | head -c 2000)"
    fi
  fi
  rows+=("| \`$t\` | $execs | $wall s | $rate | ${corp:-?} ($files files) | ${cov:-?} | ${ft:-?} | $result |")
done

echo
echo "| target | executions | wall time | exec/s | corpus at the end | cov | ft | result |"
echo "|---|---|---|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
echo
echo "libFuzzer options: ${opts[*]}, and per target -dict=fuzz/dicts/<target>.dict (where there is one), -artifact_prefix=fuzz/artifacts/<target>/, corpora fuzz/corpus/<target> fuzz/seeds/<target>"

if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "fuzz.sh: ${#failed[@]} target(s) failed:" >&2
  printf '  %s\n' "${failed[@]}" >&2
  exit 1
fi
echo "fuzz.sh: every target ran without a crash"
