#!/usr/bin/env bash
# Installs what building and testing the conduit needs on Debian 12 (run as
# root, or with sudo available). Idempotent: installs only what is missing.
#
#   bash scripts/setup.sh                  # Debian's libfabric 1.17 (the default)
#   bash scripts/setup.sh --libfabric=2    # also libfabric 2.1 from Debian's
#                                          # source package, in .libfabric-2/
#
# After --libfabric=2, `source scripts/libfabric-2.env` builds, tests and
# runs against 2.1 (see docs/libfabric-versions.md).
set -euo pipefail
libfabric=1
for a in "$@"; do
  case $a in
    --libfabric=1|--libfabric=1.17) libfabric=1 ;;
    --libfabric=2|--libfabric=2.1) libfabric=2 ;;
    -h|--help) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "setup: unknown argument '$a'; accepted: --libfabric=1 (Debian's 1.17, the default) or --libfabric=2 (2.1 built from Debian's source package)" >&2; exit 2 ;;
  esac
done

packages=(
  build-essential pkg-config      # C API tests: cc, c++, pkg-config
  python3 binutils                 # capi/gen/am_families.py (the header's AM families); readelf, nm
  libfabric-dev libfabric-bin      # libfabric 1.17: headers, library, fi_info, fi_pingpong
  libclang-dev                     # bindgen (ofi-sys)
  libhwloc-dev libudev-dev         # hwlocality: GASNET_OFI_DEVICE_<ids> topology
  openssh-server openssh-client    # ssh spawner tests run a real sshd
  openmpi-bin libopenmpi-dev libpmix-dev   # mpi / pmi spawners
  slurm-wlm munge                  # a one-node Slurm for gasnetrun-ofi/tests/slurm.rs;
                                   # its mpi/pmix plugin loads libpmix-dev's pmix2/lib/libpmix.so
  iproute2 procps                  # network namespaces for multi-host tests; ps
)

if [ "$libfabric" = 2 ]; then
  packages+=(autoconf automake libtool make xz-utils)   # libfabric 2.1's autogen.sh and build
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: cargo not found; install a Rust toolchain (rustup, Rust 1.85 or newer)" >&2
  exit 1
fi

if [ "$libfabric" = 2 ]; then
  bash "$(dirname "$0")/libfabric-2.sh"
fi
