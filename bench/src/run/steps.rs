//! The measured steps: AM round trips and floods, RMA latency and
//! bandwidth, barriers. Every rank runs each step; rank 0 times it.

use super::{Bench, Fallible, H_LONG, H_LONG_PING, H_MED, H_PING};
use conduit::client::{AmStats, PutCounts};
use std::sync::atomic::Ordering;
use std::time::Instant;

impl Bench<'_> {
    /// AM Short round trips: `n` pings, each waiting for its pong.
    pub(super) fn round_trips(&mut self, n: usize) -> Fallible<f64> {
        let sh = self.sh.clone();
        let t = Instant::now();
        for i in 0..n {
            let want = sh.pongs.load(Ordering::Relaxed) + 1;
            self.c.request_short(1, H_PING, &[i as u32, 0x5a5a_5a5a])?;
            self.c
                .block_until(|| sh.pongs.load(Ordering::Relaxed) >= want)?;
        }
        Ok(t.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64)
    }

    pub(super) fn am_short(&mut self) -> Fallible<()> {
        self.c.barrier()?;
        if self.rank0() {
            let warm = (self.o.iters / 10).clamp(10, 1000);
            self.round_trips(warm)?;
            let before = self.c.stats();
            let us = self.round_trips(self.o.iters)?;
            let path = path_of(&before, &self.c.stats());
            let f = self.figs.get("am_short_rtt", Some(8), "us");
            f.ours.push(us);
            f.path = Some(path);
            self.progress(&format!("  {us:.3} us per round trip"));
            // A round of progress that finds nothing (the other ranks
            // poll too, in their wait for the next step): what every
            // wait spins on, and what a message waits for before it is
            // seen.
            let n = self.o.iters;
            let t = Instant::now();
            for _ in 0..n {
                self.c.poll()?;
            }
            let poll_us = t.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64;
            self.figs.get("empty_poll", None, "us").ours.push(poll_us);
            self.progress(&format!("  {:.1} ns per empty poll", poll_us * 1e3));
        }
        self.step_end(false)
    }

    /// AM Long round trips by size: a Long request whose handler answers
    /// with a Short reply, each waited for (put-then-send pays a write's
    /// round trip before the header leaves; one message does not).
    pub(super) fn am_long_rtt(&mut self) -> Fallible<()> {
        let sizes = self.o.sizes.clone();
        let payload: Vec<u8> = (0..sizes.iter().copied().max().unwrap_or(0))
            .map(|i| (i * 5) as u8)
            .collect();
        let sh = self.sh.clone();
        for &size in &sizes {
            self.c.barrier()?;
            if self.rank0() {
                let n = self.o.flood_count(size).min(self.o.iters);
                let one = |n: usize| -> Fallible<f64> {
                    let t = Instant::now();
                    for i in 0..n {
                        let want = sh.pongs.load(Ordering::Relaxed) + 1;
                        self.c
                            .request_long(1, H_LONG_PING, &[i as u32, 0], &payload[..size], 0)?;
                        self.c
                            .block_until(|| sh.pongs.load(Ordering::Relaxed) >= want)?;
                    }
                    Ok(t.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64)
                };
                one((n / 10).max(4))?;
                let before = self.c.stats();
                let us = one(n)?;
                let path = path_of(&before, &self.c.stats());
                let f = self.figs.get("am_long_rtt", Some(size), "us");
                f.ours.push(us);
                f.path = Some(path);
            }
            self.step_end(false)?;
        }
        Ok(())
    }

    /// One flood of `n` messages of `size` bytes, acknowledged by the last
    /// one's handler; returns MB/s (10^6 B/s) over the whole flood.
    pub(super) fn flood(
        &mut self,
        long: bool,
        size: usize,
        n: usize,
        payload: &[u8],
    ) -> Fallible<f64> {
        let sh = self.sh.clone();
        let want = sh.acks.load(Ordering::Relaxed) + 1;
        let t = Instant::now();
        for _ in 0..n {
            if long {
                self.c
                    .request_long(1, H_LONG, &[n as u32], &payload[..size], 0)?;
            } else {
                self.c
                    .request_medium(1, H_MED, &[n as u32], &payload[..size])?;
            }
        }
        self.c
            .block_until(|| sh.acks.load(Ordering::Relaxed) >= want)?;
        Ok((n * size) as f64 / t.elapsed().as_secs_f64() / 1e6)
    }

    pub(super) fn am_floods(&mut self, long: bool) -> Fallible<()> {
        let sizes: Vec<usize> = self
            .o
            .sizes
            .iter()
            .copied()
            .filter(|&s| long || s <= self.c.max_medium())
            .collect();
        let payload: Vec<u8> = (0..sizes.iter().copied().max().unwrap_or(0))
            .map(|i| (i * 7) as u8)
            .collect();
        let test = if long {
            "am_long_flood"
        } else {
            "am_medium_flood"
        };
        for &size in &sizes {
            self.c.barrier()?;
            if self.rank0() {
                let n = self.o.flood_count(size);
                self.flood(long, size, (n / 10).max(4), &payload)?;
                let before = self.c.stats();
                let mbs = self.flood(long, size, n, &payload)?;
                let path = path_of(&before, &self.c.stats());
                let f = self.figs.get(test, Some(size), "MB/s");
                f.ours.push(mbs);
                f.path = Some(path);
            }
            self.step_end(false)?;
        }
        Ok(())
    }

    /// Blocking put and get latency by size (each returns at remote
    /// completion, i.e. after at least a round trip), with the put path.
    pub(super) fn rma_latency(&mut self) -> Fallible<()> {
        let sizes = self.o.sizes.clone();
        let largest = sizes.iter().copied().max().unwrap_or(0);
        let mut buf: Vec<u8> = (0..largest).map(|i| (i * 11) as u8).collect();
        for &size in &sizes {
            self.c.barrier()?;
            if self.rank0() {
                let n = self.o.flood_count(size);
                for _ in 0..(n / 10).clamp(1, 1000) {
                    self.c.put(1, 0, &buf[..size])?;
                }
                let t = Instant::now();
                for i in 0..n {
                    // Each put carries new data, written as a program
                    // would write a value it then puts: a whole word where
                    // the payload has one (a one-byte store followed by
                    // the put's 8-byte load of the same word cannot be
                    // forwarded from the store buffer, and that stall, ~4
                    // ns here, would be the benchmark's, not the put's).
                    if size >= 8 {
                        buf[..8].copy_from_slice(&(i as u64).to_ne_bytes());
                    } else if size > 0 {
                        buf[0] = i as u8;
                    }
                    self.c.put(1, 0, &buf[..size])?;
                }
                let put_us = t.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64;
                let f = self.figs.get("put_latency", Some(size), "us");
                f.ours.push(put_us);
                // A blocking put injects what fits and otherwise writes
                // straight from the caller's buffer (it waits anyway).
                f.path = Some(if self.c.is_shared(1) {
                    "shared".into()
                } else if size <= self.c.put_limits().inject {
                    "inject".into()
                } else {
                    "direct".into()
                });
                let t = Instant::now();
                for _ in 0..n {
                    self.c.get(1, 0, &mut buf[..size])?;
                }
                let get_us = t.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64;
                self.figs
                    .get("get_latency", Some(size), "us")
                    .ours
                    .push(get_us);
                self.progress(&format!(
                    "  blocking put/get {size} B: {put_us:.3} / {get_us:.3} us"
                ));
            }
            self.step_end(false)?;
        }
        Ok(())
    }

    /// NBI put and get bandwidth: `flood_count(size)` operations in flight,
    /// one sync; MB/s (10^6 B/s).
    pub(super) fn rma_bandwidth(&mut self) -> Fallible<()> {
        let sizes = self.o.sizes.clone();
        let largest = sizes.iter().copied().max().unwrap_or(0);
        let src: Vec<u8> = (0..largest).map(|i| (i * 13) as u8).collect();
        let mut dst = vec![0u8; self.o.rma_span(largest)];
        // The same, for gets into page-aligned buffers: one page more, so
        // that the first can start at a page boundary.
        let mut paged = vec![0u8; dst.len() + 4096];
        // Touch every page before timing: a fresh allocation is mapped on
        // first write, and the gets would otherwise time page faults.
        for b in dst.iter_mut().chain(paged.iter_mut()).step_by(4096) {
            *b = 1;
        }
        // The same for the target's segment, which the spread puts write:
        // fill it once, untimed.
        if self.rank0() && largest > 0 {
            self.c.rma_scope(|s| {
                for off in (0..dst.len()).step_by(largest) {
                    s.put_nbi(1, off, &src[..largest.min(dst.len() - off)])?;
                }
                s.sync_nbi(conduit::client::NbiSync::Puts)
            })?;
        }
        for &size in &sizes {
            self.c.barrier()?;
            if self.rank0() {
                let n = self.o.flood_count(size);
                let before = self.c.put_counts();
                let shared_before = self.c.stats().shared_rma;
                let t = Instant::now();
                self.c.rma_scope(|s| {
                    for _ in 0..n {
                        s.put_nbi(1, 0, &src[..size])?;
                    }
                    s.sync_nbi(conduit::client::NbiSync::Puts)
                })?;
                let mbs = (n * size) as f64 / t.elapsed().as_secs_f64() / 1e6;
                let f = self.figs.get("put_nbi_bw", Some(size), "MB/s");
                f.ours.push(mbs);
                f.path = Some(path_since(self.c, &before, shared_before));
                // Gets land in disjoint parts of `dst` (at most n of them).
                let per = (dst.len() / size.max(1)).max(1).min(n);
                // The same puts in the gets' shape: each of `per` in a row
                // to its own part of the target's segment (as large as
                // `dst`), so that both directions write as much memory.
                let before = self.c.put_counts();
                let shared_before = self.c.stats().shared_rma;
                let t = Instant::now();
                let mut done = 0usize;
                while done < n {
                    let k = per.min(n - done);
                    self.c.rma_scope(|s| {
                        for i in 0..k {
                            s.put_nbi(1, i * size, &src[..size])?;
                        }
                        s.sync_nbi(conduit::client::NbiSync::Puts)
                    })?;
                    done += k;
                }
                let mbs = (n * size) as f64 / t.elapsed().as_secs_f64() / 1e6;
                let f = self.figs.get("put_nbi_bw_spread", Some(size), "MB/s");
                f.ours.push(mbs);
                f.path = Some(path_since(self.c, &before, shared_before));
                // Gets in the put's shape (as GASNet's testlarge): every one
                // into the same range of this rank's segment, one sync.
                let t = Instant::now();
                self.c.rma_scope(|s| {
                    for _ in 0..n {
                        s.get_nbi_to_segment(1, 0, 0, size)?;
                    }
                    s.sync_nbi(conduit::client::NbiSync::Gets)
                })?;
                let mbs = (n * size) as f64 / t.elapsed().as_secs_f64() / 1e6;
                self.figs
                    .get("get_nbi_bw", Some(size), "MB/s")
                    .ours
                    .push(mbs);
                // Gets into buffers of this process: those in flight need
                // disjoint destinations, `per` of them per sync.
                let mbs = self.spread_gets(n, size, &mut dst, size.max(1), per)?;
                self.figs
                    .get("get_nbi_bw_spread", Some(size), "MB/s")
                    .ours
                    .push(mbs);
                // The same into page-aligned buffers, each at a page
                // boundary, as the segment's side is: where a copy's speed
                // depends on the offset between source and destination
                // within a page (docs/PERFORMANCE.md, "Copies between
                // 4 KiB-aliased buffers"), this figure is the gets' own.
                let skip = paged.as_ptr().align_offset(4096);
                let stride = size.max(1).next_multiple_of(4096);
                let per_paged = per.min((paged.len() - skip) / stride).max(1);
                let mbs = self.spread_gets(n, size, &mut paged[skip..], stride, per_paged)?;
                self.figs
                    .get("get_nbi_bw_spread_paged", Some(size), "MB/s")
                    .ours
                    .push(mbs);
                // The same-host limit, in this process with the same shapes:
                // the put's (one source to one destination, n times) and the
                // get's (one source into disjoint parts of `dst`), with the
                // segment's side page-aligned as the segment is (the put
                // writes offset 0, the gets read it), so each copy has its
                // transfer's offset between source and destination within a
                // page, which decides the speed of glibc's `memcpy` on some
                // CPUs (docs/PERFORMANCE.md, "Copies between 4 KiB-aliased
                // buffers").
                let mut one_mem = vec![0u8; size + 4096];
                let one = page_aligned(&mut one_mem, size);
                let t = Instant::now();
                for i in 0..n {
                    one.copy_from_slice(&src[..size]);
                    std::hint::black_box(&mut *one);
                    if size > 0 {
                        one[0] = i as u8;
                    }
                }
                let mbs = (n * size) as f64 / t.elapsed().as_secs_f64() / 1e6;
                self.figs
                    .get("memcpy_put_bw", Some(size), "MB/s")
                    .ours
                    .push(mbs);
                let mut seg_mem = vec![0u8; size + 4096];
                let seg = page_aligned(&mut seg_mem, size);
                seg.copy_from_slice(&src[..size]);
                let t = Instant::now();
                let mut done = 0usize;
                while done < n {
                    let k = per.min(n - done);
                    if size > 0 {
                        for chunk in dst.chunks_mut(size).take(k) {
                            let l = chunk.len();
                            chunk.copy_from_slice(&seg[..l]);
                        }
                    }
                    std::hint::black_box(&mut dst);
                    done += k;
                }
                let mbs = (n * size) as f64 / t.elapsed().as_secs_f64() / 1e6;
                self.figs
                    .get("memcpy_get_bw", Some(size), "MB/s")
                    .ours
                    .push(mbs);
            }
            self.step_end(false)?;
        }
        Ok(())
    }

    /// `n` NBI gets of `size` bytes from offset 0 of rank 1's segment, `per`
    /// in flight per sync, into the first `size` bytes of consecutive
    /// `stride`-byte parts of `bufs`; MB/s (10^6 B/s).
    fn spread_gets(
        &self,
        n: usize,
        size: usize,
        bufs: &mut [u8],
        stride: usize,
        per: usize,
    ) -> Fallible<f64> {
        let t = Instant::now();
        let mut done = 0usize;
        while done < n {
            let k = per.min(n - done);
            self.c.rma_scope(|s| {
                for chunk in bufs.chunks_mut(stride).take(k) {
                    s.get_nbi(1, 0, &mut chunk[..size])?;
                }
                s.sync_nbi(conduit::client::NbiSync::Gets)
            })?;
            done += k;
        }
        Ok((n * size) as f64 / t.elapsed().as_secs_f64() / 1e6)
    }

    pub(super) fn barriers(&mut self) -> Fallible<()> {
        let n = self.o.iters;
        for _ in 0..(n / 10).clamp(10, 1000) {
            self.c.barrier()?;
        }
        let t = Instant::now();
        for _ in 0..n {
            self.c.barrier()?;
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / n.max(1) as f64;
        if self.rank0() {
            self.figs.get("barrier", None, "us").ours.push(us);
        }
        self.step_end(false)
    }
}

/// The path a send took, from the counters before and after it.
fn path_of(before: &AmStats, after: &AmStats) -> String {
    if after.shared_sent > before.shared_sent {
        // Through the receiver's ring (a Long's payload copied first).
        return "shared".into();
    }
    if after.long_landed > before.long_landed {
        // Payload and header in one write with remote CQ data.
        return "writedata".into();
    }
    if after.long_rma > before.long_rma {
        // The payload went by a blocking RMA write; the header after it.
        return "rma-block".into();
    }
    let mut p = Vec::new();
    if after.injected > before.injected {
        p.push("inject");
    }
    if after.sent_from_buffer > before.sent_from_buffer {
        p.push("bounce");
    }
    p.join("+")
}

/// The path the puts since `before` (and `shared_before` copies through
/// the shared-memory path) took: `shared`, or what `put_path` says.
fn path_since(c: &conduit::client::Client, before: &PutCounts, shared_before: u64) -> String {
    if c.stats().shared_rma > shared_before {
        "shared".into()
    } else {
        put_path(before, &c.put_counts())
    }
}

/// The put paths taken (`inject`, `bounce`, `block`, `+`-joined), from the
/// counters before and after.
fn put_path(before: &PutCounts, after: &PutCounts) -> String {
    let mut path = Vec::new();
    if after.inject > before.inject {
        path.push("inject");
    }
    if after.bounce > before.bounce {
        path.push("bounce");
    }
    if after.block > before.block {
        path.push("block");
    }
    if after.aggregate > before.aggregate {
        path.push("aggregate");
    }
    path.join("+")
}

/// The `len` bytes of `mem` (at least `len + 4095` long) that start at its
/// first page boundary.
fn page_aligned(mem: &mut [u8], len: usize) -> &mut [u8] {
    let skip = mem.as_ptr().align_offset(4096);
    &mut mem[skip..skip + len]
}
