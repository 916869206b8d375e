//! A rank's [`SimTransport`] at work: its posts queue sends, receive
//! buffers and RMA transfers on the fabric, its polls read the fabric's
//! queues, and its drop takes the rank off the network.

use super::state::{Posted, TxKind, TxOp};
use super::{SimRegion, SimTransport};
use crate::client::Error;
use crate::mem::Mapping;
use crate::transport::{Access, Completion, Context, Cq, Ep, Facts, Polled, PostError, Transport};
use std::mem::MaybeUninit;
use std::sync::Arc;

impl SimTransport {
    /// Queue a transfer of the pieces of `v` to or from `dest` (with
    /// `landed`, a write with remote CQ data for that endpoint). Several
    /// pieces per call exist only with
    /// [`SimConfig::remote_cq_data`](super::SimConfig::remote_cq_data).
    fn pieces(
        &self,
        set: usize,
        dest: usize,
        write: bool,
        v: &crate::ofi::RmaVec,
        landed: Option<(Ep, u64)>,
        ctx: Context,
    ) -> Result<(), PostError> {
        if !self.fabric.cfg.remote_cq_data {
            return Err(PostError::Failed(crate::ofi::OfiError::new(
                "a simulated transfer of several pieces",
                -(ofi_sys::FI_ENOSYS as i64),
            )));
        }
        let mut f = self.fabric.lock();
        f.maybe_again(self.rank)?;
        let pieces: Vec<_> = v
            .pieces()
            .into_iter()
            .map(|(local, len, addr, key)| (local, len, rma::plan::Remote { addr, key }))
            .collect();
        let len = pieces.iter().map(|p| p.1).sum();
        f.queue_tx(
            self.rank,
            set,
            TxOp {
                kind: TxKind::Pieces {
                    dest,
                    write,
                    pieces,
                    landed,
                },
                len,
                ctx,
                delay: 0,
            },
        );
        Ok(())
    }
}

impl Drop for SimTransport {
    /// The rank is gone: its queued transfers are dropped unexecuted (they
    /// would use its memory) and messages to it are discarded.
    fn drop(&mut self) {
        self.fabric.lock().close(self.rank);
    }
}

// SAFETY: `poll` writes `out[n]` before counting it, never past
// `out.len()` (the fabric hands out at most that many).
unsafe impl Transport for SimTransport {
    type Desc = ();
    type Region = SimRegion;

    fn facts(&self) -> &Facts {
        &self.facts
    }

    fn connect(&mut self, names: &[Vec<u8>]) -> Result<(), Error> {
        for (r, n) in names.iter().enumerate() {
            if n.as_slice() != (r as u32).to_le_bytes() {
                return Err(Error::Published {
                    rank: r,
                    what: "simulated endpoint name",
                });
            }
        }
        Ok(())
    }

    fn keep_alive(&mut self, set: usize, mem: Arc<Mapping>) {
        self.fabric.lock().keep_alive(self.rank, set, mem);
    }

    fn register(&self, mem: &Arc<Mapping>, _access: Access) -> Result<Vec<SimRegion>, Error> {
        let key = self.fabric.lock().register(self.rank, mem.clone());
        Ok(vec![SimRegion {
            key,
            mem: mem.clone(),
        }])
    }

    fn inject(&self, set: usize, ep: Ep, bytes: &[u8], dest: usize) -> Result<(), PostError> {
        let mut f = self.fabric.lock();
        f.maybe_refuse_send(self.rank)?;
        f.maybe_again(self.rank)?;
        f.deliver(self.rank, dest, set, ep, bytes.to_vec());
        Ok(())
    }

    unsafe fn send(
        &self,
        set: usize,
        ep: Ep,
        buf: *const u8,
        len: usize,
        dest: usize,
        ctx: Context,
    ) -> Result<(), PostError> {
        let mut f = self.fabric.lock();
        f.maybe_refuse_send(self.rank)?;
        f.maybe_again(self.rank)?;
        f.queue_tx(
            self.rank,
            set,
            TxOp {
                kind: TxKind::Send {
                    dest,
                    ep,
                    src: buf as usize,
                },
                len,
                ctx,
                delay: 0,
            },
        );
        Ok(())
    }

    unsafe fn post_recv(
        &self,
        set: usize,
        ep: Ep,
        buf: *mut u8,
        len: usize,
        ctx: Context,
        multi: bool,
    ) -> Result<(), PostError> {
        let mut f = self.fabric.lock();
        if multi && f.faults.nomem_multi_posts > 0 {
            f.faults.nomem_multi_posts -= 1;
            f.counts.nomem += 1;
            return Err(PostError::NoMemory);
        }
        f.maybe_again(self.rank)?;
        f.post(
            self.rank,
            set,
            ep,
            Posted {
                addr: buf as usize,
                len,
                ctx,
                multi,
                used: 0,
            },
        );
        Ok(())
    }

    unsafe fn write(
        &self,
        set: usize,
        dest: usize,
        src: *const u8,
        len: usize,
        _desc: Option<()>,
        remote: rma::plan::Remote,
        ctx: Context,
        inject: bool,
    ) -> Result<(), PostError> {
        let mut f = self.fabric.lock();
        f.maybe_again(self.rank)?;
        let data = if inject {
            // SAFETY: with FI_INJECT the source is valid for the call (the
            // caller's slice), and copied now.
            Some(unsafe { std::slice::from_raw_parts(src, len) }.to_vec())
        } else {
            None
        };
        f.queue_tx(
            self.rank,
            set,
            TxOp {
                kind: TxKind::Write {
                    dest,
                    src: src as usize,
                    data,
                    remote,
                },
                len,
                ctx,
                delay: 0,
            },
        );
        Ok(())
    }

    unsafe fn rma_vec(
        &self,
        set: usize,
        peer: usize,
        write: bool,
        v: &mut crate::ofi::RmaVec,
        ctx: Context,
    ) -> Result<(), PostError> {
        self.pieces(set, peer, write, v, None, ctx)
    }

    unsafe fn write_landing(
        &self,
        set: usize,
        ep: Ep,
        dest: usize,
        v: &mut crate::ofi::RmaVec,
        data: u64,
        ctx: Context,
    ) -> Result<(), PostError> {
        self.pieces(set, dest, true, v, Some((ep, data)), ctx)
    }

    unsafe fn read(
        &self,
        set: usize,
        from: usize,
        dst: *mut u8,
        len: usize,
        _desc: Option<()>,
        remote: rma::plan::Remote,
        ctx: Context,
    ) -> Result<(), PostError> {
        let mut f = self.fabric.lock();
        f.maybe_again(self.rank)?;
        f.queue_tx(
            self.rank,
            set,
            TxOp {
                kind: TxKind::Read {
                    from,
                    dst: dst as usize,
                    remote,
                },
                len,
                ctx,
                delay: 0,
            },
        );
        Ok(())
    }

    fn poll(
        &self,
        set: usize,
        cq: Cq,
        out: &mut [MaybeUninit<Completion>],
    ) -> Result<Polled, Error> {
        let virt = self.facts.mr_virt_addr;
        let mut f = self.fabric.lock();
        let got = match cq {
            Cq::Tx => f.poll_tx(self.rank, set, out.len(), virt),
            Cq::Rx(side) => f.poll_rx(self.rank, set, side, out.len()),
        };
        let mut n = 0;
        for e in got {
            match e {
                Ok(c) => {
                    out[n].write(c);
                    n += 1;
                }
                // `take` hands an error completion out alone.
                Err(err) => return Ok(Polled::Error(err)),
            }
        }
        Ok(if n == 0 {
            Polled::Empty
        } else {
            Polled::Completions(n)
        })
    }
}
