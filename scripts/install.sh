#!/usr/bin/env bash
# Install the GASNet-EX C API: lib/libgasnet-ofi-seq.{a,so}, include/
# (gasnetex.h, gasnet_tools.h, gasnet.h, gasnet_coll.h, gasnet_vis.h,
# gasnet_ratomic.h), lib/pkgconfig/gasnet-ofi-seq.pc
# and bin/gasnetrun-ofi (with bin/gex-providers) under a prefix.
#
#   scripts/install.sh --prefix DIR [--kind both|static|shared] [--debug] [--no-build]
#
#   --kind     which libraries (default both; with both, the pkg-config
#              command links the shared one; install with --kind static to
#              link statically with the same command)
#   --debug    install the dev-profile build (target/debug) instead of release
#   --no-build install what is already built
#   --from DIR install the artifacts in DIR (a cargo profile directory such
#              as target/debug; implies --no-build; the test suite uses this)
#
# Then: cc $(pkg-config --cflags gasnet-ofi-seq) prog.c $(pkg-config --libs gasnet-ofi-seq)
# with PKG_CONFIG_PATH=DIR/lib/pkgconfig, and run with DIR/bin/gasnetrun-ofi -n N ./a.out
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
prefix="" kind=both profile=release build=1 from=
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --kind) kind="${2:?--kind needs both, static or shared}"; shift 2 ;;
        --debug) profile=debug; shift ;;
        --no-build) build=0; shift ;;
        --from) from="${2:?--from needs a directory}"; build=0; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "install.sh: unknown argument '$1' (accepted: --prefix DIR, --kind both|static|shared, --debug, --no-build, --from DIR)" >&2; exit 2 ;;
    esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix DIR is required" >&2; exit 2; }
case "$kind" in both|static|shared) ;; *) echo "install.sh: --kind '$kind': accepted are both, static, shared" >&2; exit 2 ;; esac

target="${from:-${CARGO_TARGET_DIR:-$here/target}/$profile}"
if [ "$build" = 1 ]; then
    flags=()
    [ "$profile" = release ] && flags=(--release)
    (cd "$here" && cargo build "${flags[@]}" -p gasnet-ofi -p gasnetrun-ofi && cargo build "${flags[@]}" -p conduit --bin gex-providers)
fi
for f in libgasnet_ofi_seq.a libgasnet_ofi_seq.so gasnetrun-ofi gex-providers; do
    [ -e "$target/$f" ] || { echo "install.sh: $target/$f is missing: build it (cargo build -p gasnet-ofi -p gasnetrun-ofi -p conduit --bins${profile/debug/}) or drop --no-build" >&2; exit 1; }
done

mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/bin"
prefix="$(cd "$prefix" && pwd)"
rm -f "$prefix/lib/libgasnet-ofi-seq.a" "$prefix/lib/libgasnet-ofi-seq.so"
[ "$kind" != shared ] && install -m 0644 "$target/libgasnet_ofi_seq.a" "$prefix/lib/libgasnet-ofi-seq.a"
[ "$kind" != static ] && install -m 0755 "$target/libgasnet_ofi_seq.so" "$prefix/lib/libgasnet-ofi-seq.so"
install -m 0644 "$here"/capi/include/gasnetex.h "$here"/capi/include/gasnet_tools.h "$here"/capi/include/gasnet.h "$here"/capi/include/gasnet_coll.h "$here"/capi/include/gasnet_vis.h "$here"/capi/include/gasnet_ratomic.h "$prefix/include/"
install -m 0755 "$target/gasnetrun-ofi" "$prefix/bin/gasnetrun-ofi"
# `gasnetrun-ofi --list-providers` runs the gex-providers beside it.
install -m 0755 "$target/gex-providers" "$prefix/bin/gex-providers"

# The libraries a static link needs after the Rust archive (from
# `cargo rustc -- --print native-static-libs`); harmless for the shared one.
# libfabric is the one the library was built against (pkg-config's, e.g.
# the 2.1 of scripts/libfabric-2.env), found at run time through an rpath.
lf_dirs=$(pkg-config --libs-only-L libfabric 2>/dev/null || true)
lf=""
for d in $lf_dirs; do lf="$lf $d -Wl,-rpath,${d#-L}"; done
deps="${lf# }${lf:+ }-lfabric -lpmix -lhwloc -ludev -lpthread -lgcc_s -lutil -lrt -ldl -lm -lc"
cat > "$prefix/lib/pkgconfig/gasnet-ofi-seq.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: gasnet-ofi-seq
Description: GASNet-EX C API over libfabric (gasnet-ofi, SEQ library)
Version: 0.1.0
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -lgasnet-ofi-seq $deps
PC
echo "installed gasnet-ofi ($kind, from ${from:-$profile}) in $prefix"
