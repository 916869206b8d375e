#!/usr/bin/env python3
"""Summarise scripts/bench-issue15.sh's output directory: every figure of
issue 15's acceptance list per round, its median and range over the rounds,
its target and whether the median meets it.

    python3 scripts/bench-issue15-summary.py OUT
"""
import functools
import glob
import os
import re
import statistics
import sys

ROW = re.compile(
    r"^(\S+)\s+(\d+|-)\s+\S+\s+\S+\s+([\d.]+)\s+\[[\d.]+ \.\. [\d.]+\]\s+(\S+)\s+(\S+)\s+(\S+)\s*$"
)


@functools.lru_cache(maxsize=None)
def table(path):
    """gex-bench's table: {(test, size): (ours, raw, ratio, paired)}."""
    rows = {}
    if not os.path.isfile(path):
        sys.exit(f"bench-issue15-summary: {path} is missing (an interrupted run?)")
    with open(path) as f:
        for line in f:
            m = ROW.match(line)
            if m:
                num = lambda s: float(s) if s != "-" else None
                rows[(m[1], m[2])] = (float(m[3]), num(m[4]), num(m[5]), num(m[6]))
    return rows


def cell(path, test, size, column):
    """One figure of a table: column 0 ours, 3 the paired ratio."""
    row = table(path).get((test, size))
    if row is None:
        sys.exit(f"bench-issue15-summary: {path} has no {test} row of size {size} (a failed or partial gex-bench run)")
    if row[column] is None:
        sys.exit(f"bench-issue15-summary: {path}: {test} of size {size} has no ratio to fi_pingpong (did fi_pingpong run? apt-get install libfabric-bin)")
    return row[column]


def rss_start(path):
    """The largest resident set of a rank after start-up, KiB (at the end
    the serving rank also holds the RMA tests' 64 MiB segment)."""
    with open(path) as f:
        return max(int(m[1]) for m in re.finditer(r"after start-up (\d+)", f.read()))


def floor(path):
    """shm_floor's lines: {label: us}."""
    with open(path) as f:
        return {
            m[1].strip(): float(m[2])
            for m in re.finditer(r"^\s+(\D+?)\s+([\d.]+)\s*$", f.read(), re.M)
        }


def main():
    if len(sys.argv) != 2 or not os.path.isdir(sys.argv[1]):
        sys.exit(__doc__)
    out = sys.argv[1]
    rounds = sorted({int(os.path.basename(p).split("-")[0]) for p in glob.glob(f"{out}/*-samehost.txt")})
    if not rounds:
        sys.exit(f"bench-issue15-summary: no <round>-samehost.txt in {out}")
    # (label, target description, holds(value), per-round value function)
    ours = lambda path, t, s: lambda r: cell(f"{out}/{r}-{path}.txt", t, s, 0)
    paired = lambda path, t, s: lambda r: cell(f"{out}/{r}-{path}.txt", t, s, 3)
    ratio = lambda path, a, b: lambda r: (
        cell(f"{out}/{r}-{path}.txt", *a, 0) / cell(f"{out}/{r}-{path}.txt", *b, 0)
    )
    mb = ("1048576",)
    figures = [
        ("same-host AM Short round trip, us", "<= 0.25", lambda v: v <= 0.25, ours("samehost", "am_short_rtt", "8")),
        ("same-host 8 B put, us", "<= 0.01", lambda v: v <= 0.01, ours("samehost", "put_latency", "8")),
        ("same-host 8 B get, us", "<= 0.01", lambda v: v <= 0.01, ours("samehost", "get_latency", "8")),
        ("same-host 1 MiB put / memcpy", ">= 0.9", lambda v: v >= 0.9,
         ratio("samehost", ("put_nbi_bw", *mb), ("memcpy_put_bw", *mb))),
    ]
    for path, name, base in (("shm", "shm", 4.1), ("tcp", "tcp;ofi_rxm", 1.6)):
        figures += [
            (f"{name}: 1 MiB NBI get / put, one buffer", ">= 0.9", lambda v: v >= 0.9,
             ratio(path, ("get_nbi_bw", *mb), ("put_nbi_bw", *mb))),
            (f"{name}: 1 MiB NBI get / put, spread", ">= 0.9", lambda v: v >= 0.9,
             ratio(path, ("get_nbi_bw_spread", *mb), ("put_nbi_bw_spread", *mb))),
            (f"{name}: 8 B NBI put rate / issue's {base} MB/s", ">= 5", lambda v: v >= 5,
             lambda r, p=path, b=base: cell(f"{out}/{r}-{p}.txt", "put_nbi_bw", "8", 0) / b),
            (f"{name}: AM Short round trip / 2 fi_pingpong one-way (paired)", "<= 1.0", lambda v: v <= 1.0,
             paired(path, "am_short_rtt", "8")),
            (f"{name}: AM Short round trip, us", "", None, ours(path, "am_short_rtt", "8")),
        ]
    figures.append(("tcp;ofi_rxm: resident memory after start-up, 2 ranks, MiB", "(-n 16 <= 32 MB: tests/tests/memory.rs)",
                    None, lambda r: rss_start(f"{out}/{r}-tcp.txt") / 1024))
    for label in ("flags in one cache line", "flags in two cache lines", "two shared-memory rings", "a lane, replies in place"):
        figures.append((f"shm_floor: {label}, us", "", None, lambda r, l=label: floor(f"{out}/{r}-floor.txt")[l]))
    # Every figure is read before anything is printed, so a partial run
    # ends with its error alone.
    lines = []
    for label, target, holds, value in figures:
        vals = [value(r) for r in rounds]
        med = statistics.median(vals)
        verdict = "" if holds is None else ("yes" if holds(med) else "NO")
        lines.append(f"  {label:62} {med:9.4g} [{min(vals):.4g} .. {max(vals):.4g}]  {target:8} {verdict}")
    print(f"issue 15's figures over {len(rounds)} rounds in {out}: median [min .. max] per round, target, held?")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
