#!/usr/bin/env bash
# Installs what building and testing the conduit needs on Debian 12 (run as
# root, or with sudo available). Idempotent: installs only what is missing.
set -euo pipefail

packages=(
  build-essential pkg-config
  libfabric-dev libfabric-bin      # libfabric 1.17: headers, library, fi_info, fi_pingpong
  libclang-dev                     # bindgen (ofi-sys)
  libhwloc-dev libudev-dev         # hwlocality: GASNET_OFI_DEVICE_<ids> topology
  openssh-server openssh-client    # ssh spawner tests run a real sshd
  openmpi-bin libopenmpi-dev libpmix-dev   # mpi / pmi spawners
  iproute2 procps                  # network namespaces for multi-host tests; ps
)

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
