//! The transmit side of the simulated network: queued sends and RMA
//! transfers carried out (their regions checked) when a rank reads its TX
//! queue, and where their completions are reported.

use super::{side_of, take, Entry, Fabric, TxKind, TxOp};
use crate::transport::sim::failure;
use crate::transport::{Completion, Context, ErrorCompletion, Side};

impl Fabric {
    fn region(
        &self,
        rank: usize,
        remote: rma::plan::Remote,
        len: usize,
        virt: bool,
    ) -> Option<*mut u8> {
        let g = self
            .regions
            .iter()
            .find(|g| g.rank == rank && g.key == remote.key)?;
        let off = if virt {
            (remote.addr as usize).checked_sub(g.mem.as_ptr() as usize)?
        } else {
            remote.addr as usize
        };
        g.mem.range(off, len)
    }

    fn execute(&mut self, rank: usize, set: usize, op: TxOp, virt: bool) -> Entry {
        match op.kind {
            TxKind::Send { dest, ep, src } => {
                if self.faults.fail_sends > 0 {
                    self.faults.fail_sends -= 1;
                    self.counts.failed += 1;
                    return Entry::failed(failure(op.ctx, false, "a send"));
                }
                // SAFETY: the engine keeps a send's buffer valid until its
                // completion, which is generated below.
                let bytes =
                    unsafe { std::slice::from_raw_parts(src as *const u8, op.len) }.to_vec();
                self.deliver(rank, dest, set, ep, bytes);
                Entry::ok(op.ctx, 0, 0, false)
            }
            TxKind::Write {
                dest,
                src,
                data,
                remote,
            } => {
                if self.faults.fail_rma > 0 {
                    self.faults.fail_rma -= 1;
                    self.counts.failed += 1;
                    return Entry::failed(failure(op.ctx, false, "an RMA write"));
                }
                let Some(to) = self.region(dest, remote, op.len, virt) else {
                    return Entry::failed(failure(op.ctx, false, "an RMA write outside a region"));
                };
                match data {
                    // SAFETY: `to` lies in a registered mapping (checked by
                    // region), kept alive by the table.
                    Some(d) => unsafe { std::ptr::copy(d.as_ptr(), to, op.len) },
                    // SAFETY: as above; the source is valid until this
                    // transfer's completion (the engine's contract).
                    None => unsafe { std::ptr::copy(src as *const u8, to, op.len) },
                }
                Entry::ok(op.ctx, 0, 0, false)
            }
            TxKind::Pieces {
                dest,
                write,
                pieces,
                landed,
            } => {
                // A failed transfer is reported here only: nothing is
                // moved and the target sees no completion.
                if self.faults.fail_rma > 0 {
                    self.faults.fail_rma -= 1;
                    self.counts.failed += 1;
                    return Entry::failed(failure(op.ctx, false, "a transfer of several pieces"));
                }
                let mut at = Vec::with_capacity(pieces.len());
                for &(_, len, remote) in &pieces {
                    let Some(p) = self.region(dest, remote, len, virt) else {
                        return Entry::failed(failure(
                            op.ctx,
                            false,
                            "a transfer of several pieces outside a region",
                        ));
                    };
                    at.push(p);
                }
                for (&(local, len, _), p) in pieces.iter().zip(at) {
                    // SAFETY: as for Write and Read: `p` lies in a
                    // registered mapping (checked), the local piece is
                    // valid and untouched by the engine until this
                    // transfer's completion.
                    unsafe {
                        if write {
                            std::ptr::copy(local as *const u8, p, len)
                        } else {
                            std::ptr::copy(p, local as *mut u8, len)
                        }
                    };
                }
                if let Some((ep, data)) = landed {
                    if let Some(s) = self
                        .ranks
                        .get_mut(dest)
                        .filter(|r| r.open)
                        .and_then(|r| r.sets.get_mut(set))
                    {
                        s.rx_ready[side_of(ep)].push_back(Entry {
                            data,
                            ..Entry::ok(Context::Landed, 0, 0, false)
                        });
                    }
                }
                Entry::ok(op.ctx, 0, 0, false)
            }
            TxKind::Read { from, dst, remote } => {
                if self.faults.fail_rma > 0 {
                    self.faults.fail_rma -= 1;
                    self.counts.failed += 1;
                    return Entry::failed(failure(op.ctx, false, "an RMA read"));
                }
                let Some(at) = self.region(from, remote, op.len, virt) else {
                    return Entry::failed(failure(op.ctx, false, "an RMA read outside a region"));
                };
                // SAFETY: `at` lies in a registered mapping (checked); the
                // destination is valid and untouched until this transfer's
                // completion (the engine's contract).
                unsafe { std::ptr::copy(at, dst as *mut u8, op.len) };
                Entry::ok(op.ctx, 0, 0, false)
            }
        }
    }

    pub fn poll_tx(
        &mut self,
        rank: usize,
        set: usize,
        max: usize,
        virt: bool,
    ) -> Vec<Result<Completion, ErrorCompletion>> {
        let Some(s) = self.ranks[rank].sets.get_mut(set) else {
            return Vec::new();
        };
        let mut due = Vec::new();
        let mut i = 0;
        while i < s.tx_queue.len() {
            if s.tx_queue[i].delay == 0 {
                due.push(s.tx_queue.remove(i));
            } else {
                s.tx_queue[i].delay -= 1;
                i += 1;
            }
        }
        if self.faults.reorder {
            self.shuffle(rank, &mut due);
        }
        let on_reply = self.faults.tx_on_reply;
        let paired = self.faults.am_paired;
        for op in due {
            let e = self.execute(rank, set, op, virt);
            let s = &mut self.ranks[rank].sets[set];
            match e.ctx {
                Context::Send {
                    side: Side::Request,
                    ..
                } if paired => s.rx_ready[Side::Reply.index()].push_back(e),
                Context::Send {
                    side: Side::Reply, ..
                } if paired => s.tx_ready.push_back(e),
                Context::Rma { .. }
                | Context::Send {
                    side: Side::Reply, ..
                } if on_reply => s.rx_ready[Side::Reply.index()].push_back(e),
                _ => s.tx_ready.push_back(e),
            }
        }
        take(&mut self.ranks[rank].sets[set].tx_ready, max)
    }
}
