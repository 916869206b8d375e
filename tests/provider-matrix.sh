#!/usr/bin/env bash
# The provider matrix: build the release programs, then run gex-matrix,
# which runs the conformance programs and a quick gex-bench over every
# libfabric provider this machine offers, for the libfabric it runs against
# (version X.Y), and writes docs/providers/libfabric-X.Y.md (the run in
# full) and docs/providers/libfabric-X.Y.json (its summary), then
# docs/providers.md: every version's run side by side, from every
# docs/providers/libfabric-*.json present. Run it once per version:
#
#   bash tests/provider-matrix.sh                      # libfabric 1.17 (the system's)
#   (source scripts/libfabric-2.env && bash tests/provider-matrix.sh)   # libfabric 2.1
#   bash tests/provider-matrix.sh --providers shm,tcp --no-bench
#   bash tests/provider-matrix.sh --must-pass none     # record failures, never fail
#   bash tests/provider-matrix.sh --out -              # only the run's document, to stdout
#
# Arguments go to gex-matrix (target/release/gex-matrix --help lists them:
# --providers, --programs, --deadline SECONDS, --no-bench, --must-pass,
# --out FILE|-). Exit status: 0 when every program passed on the must-pass
# providers (--must-pass, default shm,tcp); 1 when one failed there (the
# files are written all the same; failures on other providers are only
# recorded); 2 for a usage or set-up error. Honours CARGO_TARGET_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet -p tests -p conduit -p gasnetrun-ofi -p bench -p gex-examples --bins --examples
target="${CARGO_TARGET_DIR:-target}"
shown="tests/provider-matrix.sh"
# The documents show the command; under scripts/libfabric-2.env, with it.
if [ "${CONDUIT_LIBFABRIC:-}" = 2 ]; then
  shown="source scripts/libfabric-2.env && $shown"
fi
if [ $# -gt 0 ]; then
  printf -v quoted ' %q' "$@"
  shown+="$quoted"
fi
exec "$target/release/gex-matrix" --command-line "$shown" "$@"
