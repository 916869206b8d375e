# Sourced by bench-ab.sh and bench-cross.sh: for the figure $what (rtt,
# rtt-tagged or put) on provider $prov, sets `args` (gex-bench's
# arguments), defines `pick` (reads the figure of each repetition from
# gex-bench's output) and
# exports the provider's FI_PROVIDER and GASNET_OFI_DEVICE, and
# GASNET_SUPERNODE_MAXSIZE=1 unless set (the provider carries every message:
# builds from before the shared-memory path ignore the variable, so an A/B
# against them measures the same path). $1 names the calling script in
# errors.
case $what in
  rtt) args=(--tests am --sizes 8 --reps 5 --iters 50000 --flood-bytes 64 --no-pingpong)
       pick() { grep "us per round trip" | awk '{print $(NF-4)}'; } ;;
  # The same AM Short round trip with tagged messaging opened (its queues
  # beside the AM ones; its own tests run after the AM ones, no MTL).
  rtt-tagged) args=(--tests am,tagged --sizes 8 --reps 5 --iters 50000 --flood-bytes 64 --no-pingpong --no-mtl)
       pick() { grep "us per round trip" | awk '{print $(NF-4)}'; } ;;
  put) args=(--tests rma --sizes 8 --reps 5 --iters 50000 --no-pingpong)
       pick() { grep "blocking put/get 8 B" | awk '{print $(NF-3)}'; } ;;
  *) echo "$1: the figure must be rtt, rtt-tagged or put, not '$what'" >&2; exit 2 ;;
esac
dev=lo; [ "$prov" = shm ] && dev=shm
export GASNET_QUIET=1 FI_PROVIDER=$prov GASNET_OFI_DEVICE=$dev \
  GASNET_SUPERNODE_MAXSIZE=${GASNET_SUPERNODE_MAXSIZE:-1}
