//! Compile-time specialisation of the hot paths on the provider's
//! capabilities.
//!
//! The reference conduit fixes the MR mode and similar choices at configure
//! time (`--with-ofi-provider`, `--enable-ofi-mr-virt-addr`, ...) so that its
//! per-operation code has no branches on them; a "generic" build decides at
//! run time and pays for the branches. Here the decision is made once, at
//! start-up: [`dispatch`] turns the run-time [`Capabilities`] into a type
//! implementing [`Spec`] and calls the given [`SpecVisitor`] with it, so every
//! path below is monomorphised for that combination and the checks become
//! constants the compiler folds away.

use super::Capabilities;

/// The capabilities that change per-operation code, as constants.
pub trait Spec: Send + Sync + 'static {
    /// Remote addresses are virtual addresses (else offsets from the base).
    const MR_VIRT_ADDR: bool;
    /// Keys come from the provider (exchanged) rather than being requested.
    const MR_PROV_KEY: bool;
    /// Reposting a receive buffer may return -FI_EAGAIN and must be retried.
    const RETRY_RECVMSG: bool;

    /// The remote address to use for `offset` bytes into a segment whose
    /// owner mapped it at `base`.
    #[inline(always)]
    fn remote_addr(base: u64, offset: u64) -> u64 {
        if Self::MR_VIRT_ADDR {
            base + offset
        } else {
            offset
        }
    }
}

/// One combination of the constants.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProviderSpec<const VIRT_ADDR: bool, const PROV_KEY: bool, const RETRY_RECVMSG: bool>;

impl<const V: bool, const K: bool, const R: bool> Spec for ProviderSpec<V, K, R> {
    const MR_VIRT_ADDR: bool = V;
    const MR_PROV_KEY: bool = K;
    const RETRY_RECVMSG: bool = R;
}

/// Code to run specialised on a [`Spec`].
pub trait SpecVisitor {
    /// What the visit returns.
    type Output;
    /// Run with the chosen specialisation.
    fn visit<S: Spec>(self) -> Self::Output;
}

/// Call `v` with the specialisation matching `caps`.
pub fn dispatch<V: SpecVisitor>(caps: &Capabilities, v: V) -> V::Output {
    match (caps.mr_virt_addr, caps.mr_prov_key, caps.retry_recvmsg) {
        (false, false, false) => v.visit::<ProviderSpec<false, false, false>>(),
        (false, false, true) => v.visit::<ProviderSpec<false, false, true>>(),
        (false, true, false) => v.visit::<ProviderSpec<false, true, false>>(),
        (false, true, true) => v.visit::<ProviderSpec<false, true, true>>(),
        (true, false, false) => v.visit::<ProviderSpec<true, false, false>>(),
        (true, false, true) => v.visit::<ProviderSpec<true, false, true>>(),
        (true, true, false) => v.visit::<ProviderSpec<true, true, false>>(),
        (true, true, true) => v.visit::<ProviderSpec<true, true, true>>(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ofi::{AvType, Threading};
    use crate::profile::{Status, Version};

    fn caps(virt: bool, key: bool, retry: bool) -> Capabilities {
        Capabilities {
            provider: "p".into(),
            domain: "d".into(),
            fabric: "f".into(),
            profile: "generic".into(),
            status: Status::Usable,
            libfabric: Version::new(1, 17, 0),
            mr_virt_addr: virt,
            mr_prov_key: key,
            mr_endpoint: false,
            mr_allocated: false,
            av_type: AvType::Table,
            threading: Threading::Domain,
            thread_domain_in_par: false,
            multi_cq: false,
            retry_recvmsg: retry,
            inject_size: 0,
            max_msg_size: 0,
            cq_data_size: 0,
            multi_recv: true,
            notes: vec![],
        }
    }

    struct Probe;
    impl SpecVisitor for Probe {
        type Output = (bool, bool, bool, u64);
        fn visit<S: Spec>(self) -> Self::Output {
            (
                S::MR_VIRT_ADDR,
                S::MR_PROV_KEY,
                S::RETRY_RECVMSG,
                S::remote_addr(0x1000, 8),
            )
        }
    }

    #[test]
    fn every_combination_dispatches_to_its_constants() {
        for v in [false, true] {
            for k in [false, true] {
                for r in [false, true] {
                    let (sv, sk, sr, addr) = dispatch(&caps(v, k, r), Probe);
                    assert_eq!((sv, sk, sr), (v, k, r));
                    assert_eq!(addr, if v { 0x1008 } else { 8 });
                }
            }
        }
    }
}
