#!/usr/bin/env bash
# Builds libfabric 2.1.0 from Debian's source package into .libfabric-2/ at
# the repository root (ignored by git), beside the system's libfabric 1.17.
# Run by `scripts/setup.sh --libfabric=2`; afterwards
# `source scripts/libfabric-2.env` points pkg-config, the loader and PATH at
# it. Idempotent: does nothing when .libfabric-2 already holds 2.1.0.
#
# How: an apt configuration private to .libfabric-2/apt (the system's apt
# sources, lists and caches are not touched) with one deb-src entry for
# Debian's unstable suite, on the mirror the machine's own Debian sources
# use; `apt-get source --tar-only --download-only` fetches the upstream
# tarball, which is checked against the SHA-256 of the Sources index (itself
# verified by apt against the suite's signed InRelease); then autogen.sh,
# configure with only the providers a machine without HPC hardware can use
# (shm, tcp, rxm, udp, rxd, sockets) and make install.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest="$root/.libfabric-2"
want="${LIBFABRIC2_VERSION:-2.1.0}"
log() { echo "libfabric-2: $*"; }
die() { echo "libfabric-2: error: $*" >&2; exit 1; }

have=$(PKG_CONFIG_PATH="$dest/lib/pkgconfig" pkg-config --modversion libfabric 2>/dev/null || true)
if [ "$have" = "$want" ] && [ -x "$dest/bin/fi_info" ]; then
  log "libfabric $want is already built in $dest"
  exit 0
fi

# The mirror: the first URI of the machine's Debian sources that serves its
# release (deb822 .sources files first, then one-line .list files).
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "/etc/os-release names no VERSION_CODENAME; this script is for Debian"
mirror=""
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
for f in /etc/apt/sources.list.d/*.sources; do
  [ -f "$f" ] || continue
  # Paragraphs: Types, URIs, Suites, Signed-By.
  read -r m k < <(awk -v cn="$codename" '
    function flush() { if (types ~ /(^| )deb( |$)/ && (" " suites " ") ~ (" " cn " ") && uris != "") { split(uris, u, " "); print u[1], (signed == "" ? "-" : signed); found = 1; exit } types = uris = suites = signed = "" }
    /^[ \t]*$/ { flush(); next }
    /^Types:/ { sub(/^Types:[ \t]*/, ""); types = $0 }
    /^URIs:/ { sub(/^URIs:[ \t]*/, ""); uris = $0 }
    /^Suites:/ { sub(/^Suites:[ \t]*/, ""); suites = $0 }
    /^Signed-By:/ { sub(/^Signed-By:[ \t]*/, ""); signed = $0 }
    END { if (!found) flush() }' "$f") || true
  if [ -n "${m:-}" ]; then
    mirror=$m
    [ "$k" != "-" ] && [ -f "$k" ] && keyring=$k
    break
  fi
done
if [ -z "$mirror" ]; then
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    mirror=$(awk -v cn="$codename" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) { while ($i !~ /\]$/) i++; i++ } if ($(i + 1) == cn) { print $i; exit } }' "$f")
    [ -n "$mirror" ] && break
  done
fi
[ -n "$mirror" ] || die "no 'deb' entry for $codename in /etc/apt/sources.list or /etc/apt/sources.list.d; cannot tell which Debian mirror to fetch the libfabric source from"
log "Debian mirror (from the machine's apt sources): $mirror"

apt_dir="$dest/apt"
rm -rf "$apt_dir"
mkdir -p "$apt_dir/sources" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/download"
cat > "$apt_dir/sources/unstable-src.sources" <<EOF
Types: deb-src
URIs: $mirror
Suites: unstable
Components: main
Signed-By: $keyring
EOF
apt_opts=(
  -o "Dir::Etc::sourcelist=/dev/null"
  -o "Dir::Etc::sourceparts=$apt_dir/sources"
  -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir/cache"
  -o "APT::Sandbox::User=root"
)
log "reading Debian unstable's source index"
apt-get -qq "${apt_opts[@]}" update || die "apt-get update of the private source list failed (network, or the mirror $mirror)"
record=$(apt-cache "${apt_opts[@]}" showsrc libfabric 2>/dev/null) || die "Debian unstable's index has no libfabric source package"
# The newest Debian revision of the wanted upstream version.
version=$(printf '%s\n' "$record" | awk '/^Version: /{print $2}' | grep -E "^([0-9]+:)?${want//./\\.}-" | sort -V | tail -1 || true)
if [ -z "$version" ]; then
  offered=$(printf '%s\n' "$record" | awk '/^Version: /{print $2}' | paste -sd, -)
  die "Debian unstable no longer carries libfabric $want (it has: $offered); set LIBFABRIC2_VERSION to one of those upstream versions"
fi
tarball="libfabric_${want}.orig.tar.xz"
sha=$(printf '%s\n' "$record" | awk -v v="$version" -v t="$tarball" '
  /^Version: / { cur = $2 } /^Checksums-Sha256:/ { in_sums = 1; next } /^[^ ]/ { in_sums = 0 }
  in_sums && cur == v && $3 == t { print $1; exit }')
[ -n "$sha" ] || die "the Sources index gives no SHA-256 for $tarball"
log "fetching $tarball (source package libfabric $version)"
(cd "$apt_dir/download" && apt-get -qq "${apt_opts[@]}" source --tar-only --download-only "libfabric=$version") \
  || die "apt-get source libfabric=$version failed"
echo "$sha  $apt_dir/download/$tarball" | sha256sum -c --quiet - \
  || die "$tarball does not match the SHA-256 of Debian's Sources index ($sha)"
log "$tarball matches the Sources index (sha256 $sha)"

src="$dest/src"
rm -rf "$src"
mkdir -p "$src"
tar -xJf "$apt_dir/download/$tarball" -C "$src" --strip-components=1
cd "$src"
jobs=$(nproc)
log "autogen.sh"
./autogen.sh > "$dest/autogen.log" 2>&1 || die "autogen.sh failed: see $dest/autogen.log"
log "configure (providers: shm tcp rxm udp rxd sockets)"
./configure --prefix="$dest" --disable-static --enable-only \
  --enable-shm --enable-tcp --enable-rxm --enable-udp --enable-rxd --enable-sockets \
  > "$dest/configure.log" 2>&1 || die "configure failed: see $dest/configure.log"
log "make -j$jobs install"
make -j"$jobs" install > "$dest/make.log" 2>&1 || die "make failed: see $dest/make.log"
got=$(PKG_CONFIG_PATH="$dest/lib/pkgconfig" pkg-config --modversion libfabric)
[ "$got" = "$want" ] || die "built libfabric reports version $got, expected $want"
log "built libfabric $got in $dest; providers: $("$dest/bin/fi_info" -l 2>/dev/null | grep -v version | tr -d ':' | paste -sd' ')"
