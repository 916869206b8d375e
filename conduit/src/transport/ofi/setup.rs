//! Setting the transport up once it is open, none of it on the hot path:
//! every rank's endpoint addresses inserted into the address vector
//! (`Transport::connect`), memory registered (`Transport::register`) and
//! the provider asked which atomics it performs (`Transport::atomic_valid`).
//! The `Transport` impl in the parent module calls these.

use super::addr::{ep_index, EPS};
use super::atomic_ops::{call, datatype, fi_op};
use super::{unpack_names, DomainLock, OfiRegion, OfiTransport};
use crate::client::Error;
use crate::mem::Mapping;
use crate::ofi::{Endpoint, MemoryRegion};
use crate::transport::{Access, Ep};
use ofi_sys as sys;
use rma::atomic::{AtomicType, Native};
use std::sync::atomic::Ordering;
use std::sync::Arc;

impl<L: DomainLock> OfiTransport<L> {
    /// `Transport::connect`: insert every rank's endpoint names (this
    /// rank's own only where the address vector holds no others).
    pub(super) fn connect_names(&mut self, names: &[Vec<u8>]) -> Result<(), Error> {
        let per = EPS * self.nsets;
        if self.own_only {
            let b = names.get(self.rank).ok_or(Error::Published {
                rank: self.rank,
                what: "set of endpoint names",
            })?;
            let own = unpack_names(self.rank, per, b)?;
            let _g = self.lock.enter();
            let got = self.av.insert(&own)?;
            self.addrs = vec![sys::FI_ADDR_NOTAVAIL_VALUE; names.len() * per];
            self.addrs[self.rank * per..(self.rank + 1) * per].copy_from_slice(&got);
            return Ok(());
        }
        let mut all: Vec<&[u8]> = Vec::with_capacity(names.len() * per);
        for (r, b) in names.iter().enumerate() {
            all.extend(unpack_names(r, per, b)?);
        }
        let _g = self.lock.enter();
        self.addrs = self.av.insert(&all)?;
        Ok(())
    }

    /// `Transport::register`: one region, or one per set (bound to its RMA
    /// endpoint) where the provider binds regions to endpoints.
    pub(super) fn register_mapping(
        &self,
        mem: &Arc<Mapping>,
        access: Access,
    ) -> Result<Vec<OfiRegion>, Error> {
        let bits = match access {
            Access::LocalRead => sys::FI_WRITE | sys::FI_READ,
            Access::Remote => {
                sys::FI_REMOTE_READ | sys::FI_REMOTE_WRITE | sys::FI_READ | sys::FI_WRITE
            }
        } as u64;
        let _g = self.lock.enter();
        let mut out = Vec::new();
        let bound: Vec<Option<&Endpoint>> = if self.facts.mr_endpoint {
            self.sets
                .iter()
                .map(|s| Some(&s.eps[ep_index(Ep::Rma)]))
                .collect()
        } else {
            vec![None]
        };
        for ep in bound {
            let key = self.next_key.fetch_add(1, Ordering::Relaxed);
            out.push(MemoryRegion::register(
                &self.domain,
                mem.clone(),
                bits,
                key,
                ep,
            )?);
        }
        Ok(out)
    }

    /// `Transport::atomic_valid`: whether set `set`'s RMA endpoint performs
    /// `native` on `ty`.
    pub(super) fn native_atomic_valid(&self, set: usize, ty: AtomicType, native: Native) -> bool {
        if !self.facts.atomic {
            return false;
        }
        let _g = self.lock.enter();
        self.ep(set, Ep::Rma)
            .atomic_valid(call(native.call), datatype(ty), fi_op(native.op))
    }
}
