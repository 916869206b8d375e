//! The receive side of the simulated network: arrived messages matched to
//! posted (multi-)receive buffers, then their data written and their
//! completions delivered when due, with the receive faults applied.

use super::{take, Entry, Fabric, Placed};
use crate::transport::sim::failure;
use crate::transport::{Completion, ErrorCompletion, Side};

impl Fabric {
    pub fn poll_rx(
        &mut self,
        rank: usize,
        set: usize,
        side: Side,
        max: usize,
    ) -> Vec<Result<Completion, ErrorCompletion>> {
        let k = side.index();
        let min_multi = self.min_multi;
        // Match waiting messages to posted buffers.
        loop {
            let Some(s) = self.ranks[rank].sets.get_mut(set) else {
                return Vec::new();
            };
            if s.inbound[k].is_empty() || s.posted[k].is_empty() {
                break;
            }
            let msg = s.inbound[k].pop_front().unwrap_or_default();
            let p = s.posted[k].front_mut().expect("checked non-empty");
            let multi = p.multi;
            let (entry, done) = if multi {
                let off = p.used;
                if msg.len() > p.len - off {
                    let e = failure(p.ctx, true, "a message larger than the buffer's rest");
                    s.posted[k].pop_front();
                    s.rx_ready[k].push_back(Entry::failed(e));
                    continue;
                }
                p.used += msg.len();
                let released = p.len - p.used < min_multi;
                (
                    Entry::ok(p.ctx, msg.len(), p.addr + off, released),
                    released,
                )
            } else {
                let len = msg.len().min(p.len);
                (Entry::ok(p.ctx, len, p.addr, false), true)
            };
            if done {
                s.posted[k].pop_front();
            }
            let delay = self.delay(rank);
            let s = &mut self.ranks[rank].sets[set];
            if multi && self.faults.fail_placed > 0 {
                self.faults.fail_placed -= 1;
                self.counts.failed += 1;
                let mut e = failure(entry.ctx, entry.released, "a received message");
                e.placed = Some((entry.buf, entry.len));
                s.placed[k].push(Placed {
                    entry: Entry::failed(e),
                    data: Vec::new(),
                    delay,
                });
                continue;
            }
            let early = self.faults.early_release && entry.released;
            if early {
                let ctx = entry.ctx;
                let mut earlier = false;
                for pl in s.placed[k].iter_mut().filter(|pl| pl.entry.ctx == ctx) {
                    pl.delay = pl.delay.max(1);
                    earlier = true;
                }
                if earlier {
                    self.counts.early_releases += 1;
                }
            }
            if self.faults.bare_release && entry.released {
                // The message without the flag, then the release alone,
                // both due together (the release never overtakes it).
                let release = Entry::ok(entry.ctx, 0, 0, true);
                s.placed[k].push(Placed {
                    entry: Entry {
                        released: false,
                        ..entry
                    },
                    data: msg,
                    delay,
                });
                s.placed[k].push(Placed {
                    entry: release,
                    data: Vec::new(),
                    delay,
                });
                continue;
            }
            s.placed[k].push(Placed {
                entry,
                data: msg,
                delay: if early { 0 } else { delay },
            });
        }
        // Deliver what is due: the data first, then the completion.
        let s = &mut self.ranks[rank].sets[set];
        let mut due = Vec::new();
        let mut i = 0;
        while i < s.placed[k].len() {
            if s.placed[k][i].delay == 0 {
                due.push(s.placed[k].remove(i));
            } else {
                s.placed[k][i].delay -= 1;
                i += 1;
            }
        }
        if self.faults.reorder && !self.faults.early_release {
            self.shuffle(rank, &mut due);
        }
        for pl in due {
            if pl.entry.err.is_some() {
                // A failed receive (`fail_placed`): no data, no delivery.
                self.ranks[rank].sets[set].rx_ready[k].push_back(pl.entry);
                continue;
            }
            // SAFETY: the buffer was posted by this rank's engine, which
            // keeps its memory alive (keep_alive) and does not touch it
            // until this completion is delivered; the placement lies inside
            // the posted length (checked when carved).
            unsafe {
                std::ptr::copy_nonoverlapping(
                    pl.data.as_ptr(),
                    pl.entry.buf as *mut u8,
                    pl.entry.len,
                )
            };
            self.counts.delivered += 1;
            self.ranks[rank].sets[set].rx_ready[k].push_back(pl.entry);
        }
        take(&mut self.ranks[rank].sets[set].rx_ready[k], max)
    }
}
