//! Opening the libfabric transport: domain, address vector, and for each
//! endpoint set its two RDM endpoints with their queues; the endpoint
//! names every rank publishes.

use super::addr::{Senders, EPS};
use super::lock::{DomainLock, Unsynced};
use super::{OfiSet, OfiTransport};
use crate::client::Error;
use crate::ofi::{AddressVector, CompletionQueue, Domain, Endpoint, InfoList};
use crate::profile::Capabilities;
use crate::transport::{Facts, Network, OpenPlan};
use ofi_sys as sys;
use std::marker::PhantomData;
use std::sync::atomic::AtomicU64;

/// What opening the libfabric transport needs (from provider selection and
/// the configuration).
#[derive(Debug)]
pub struct OfiNetwork<L: DomainLock = Unsynced> {
    /// A one-entry copy of the chosen `fi_info`.
    pub info: InfoList,
    /// Its capabilities.
    pub caps: Capabilities,
    /// TX queue entries (0: provider default).
    pub tx_cq_size: usize,
    /// Receive queue entries.
    pub rx_cq_size: usize,
    /// AM sends with FI_DELIVERY_COMPLETE (else FI_INJECT_COMPLETE).
    pub msg_delivery_complete: bool,
    /// One lock around every call (multi-threaded FI_THREAD_DOMAIN).
    pub big_lock: bool,
    /// The threading of the transport it opens.
    pub lock: PhantomData<L>,
}

pub(crate) fn pack_names(names: &[Vec<u8>]) -> Vec<u8> {
    let mut out = Vec::new();
    for n in names {
        out.extend_from_slice(&(n.len() as u16).to_le_bytes());
        out.extend_from_slice(n);
    }
    out
}

pub(crate) fn unpack_names(rank: usize, want: usize, b: &[u8]) -> Result<Vec<&[u8]>, Error> {
    let mut out = Vec::with_capacity(want);
    let mut at = 0;
    while at + 2 <= b.len() {
        let len = u16::from_le_bytes([b[at], b[at + 1]]) as usize;
        at += 2;
        let Some(n) = b.get(at..at + len) else { break };
        out.push(n);
        at += len;
    }
    if out.len() != want || at != b.len() {
        return Err(Error::Published {
            rank,
            what: "set of endpoint names",
        });
    }
    Ok(out)
}

impl<L: DomainLock> OfiNetwork<L> {
    fn open_set(
        &self,
        domain: &Domain,
        av: &AddressVector,
        plan: &OpenPlan,
    ) -> Result<OfiSet, Error> {
        let entry = self.info.first().ok_or(Error::NoFiInfo)?;
        let msg_flags = if self.msg_delivery_complete {
            sys::FI_DELIVERY_COMPLETE
        } else {
            sys::FI_INJECT_COMPLETE
        } as u64;
        let mut msg_info = InfoList::dup(&entry);
        msg_info.set_tx_op_flags(msg_flags);
        let tx = CompletionQueue::open(domain, self.tx_cq_size)?;
        let rx = [
            CompletionQueue::open(domain, self.rx_cq_size)?,
            CompletionQueue::open(domain, self.rx_cq_size)?,
        ];
        // Before fi_enable on libfabric 2.x (whose shm ignores a later
        // setting), after it on 1.x (whose shm crashes on an earlier one).
        let early = crate::ofi::runtime_version().0 >= 2;
        let msg_ep =
            |rx: &CompletionQueue, tx: Option<&CompletionQueue>| -> Result<Endpoint, Error> {
                let b = Endpoint::open_with(domain, Some(&msg_info))?;
                let b = match tx {
                    Some(tx) => b
                        .bind_cq(tx, sys::FI_TRANSMIT as u64)?
                        .bind_cq(rx, sys::FI_RECV as u64)?,
                    None => b.bind_cq(rx, (sys::FI_TRANSMIT | sys::FI_RECV) as u64)?,
                };
                let b = b.bind_av(av)?;
                if plan.multi_recv && early {
                    b.set_min_multi_recv(plan.min_multi_recv)?;
                }
                let ep = b.enable()?;
                if plan.multi_recv {
                    if !early {
                        ep.set_min_multi_recv(plan.min_multi_recv)?;
                    }
                    check_min_multi_recv(&ep, plan.min_multi_recv)?;
                }
                Ok(ep)
            };
        let req = msg_ep(&rx[0], Some(&tx))?;
        // The reply endpoint carries RMA as well (each RMA post gives its
        // completion semantics: FI_DELIVERY_COMPLETE for writes and
        // atomics) and is bound whole to the reply queue, which every
        // round reads in both progress modes: reply sends' and transfers'
        // completions are read there, and that read drives the transfers
        // that target this rank (RMA at the target reports nothing). A
        // round thus drives two endpoints (three while a request's send
        // completion is owed) where the three-endpoint set drove five, and
        // a rank waiting for a blocking put drives two where it drove six.
        let rep = msg_ep(&rx[1], None)?;
        Ok(OfiSet {
            eps: [req, rep],
            tx,
            rx,
        })
    }
}

/// The provider must report the FI_OPT_MIN_MULTI_RECV it was given: a
/// smaller value lets a message overrun the end of a receive buffer.
fn check_min_multi_recv(ep: &Endpoint, want: usize) -> Result<(), Error> {
    match ep.min_multi_recv() {
        Ok(got) if got < want => Err(Error::MinMultiRecv { got, want }),
        Ok(_) => Ok(()),
        Err(e) => {
            tracing::debug!("cannot read FI_OPT_MIN_MULTI_RECV back: {e}");
            Ok(())
        }
    }
}

impl<L: DomainLock> Network for OfiNetwork<L> {
    type Transport = OfiTransport<L>;

    fn open(self, plan: &OpenPlan) -> Result<(OfiTransport<L>, Vec<u8>), Error> {
        let net = self;
        let entry = net.info.first().ok_or(Error::NoFiInfo)?;
        let domain = Domain::open_entry(&entry)?;
        let ranks = if plan.own_addresses_only {
            1
        } else {
            plan.size
        };
        let count = EPS * plan.sets * ranks;
        let av = AddressVector::open(&domain, net.caps.av_type, count).map_err(|source| {
            Error::AvOpen {
                count,
                sets: plan.sets,
                ranks,
                provider: net.caps.provider.clone(),
                source,
            }
        })?;
        let mut sets = Vec::with_capacity(plan.sets);
        let mut names = Vec::with_capacity(EPS * plan.sets);
        for _ in 0..plan.sets {
            let s = net.open_set(&domain, &av, plan)?;
            for ep in &s.eps {
                names.push(ep.name()?);
            }
            sets.push(s);
        }
        let paired = crate::profile::lookup(&net.caps.provider).am_paired_endpoints == Some(true);
        if paired {
            tracing::debug!(
                "{}: AM requests leave from the reply endpoint and replies from the request endpoint (profile: am_paired_endpoints)",
                net.caps.provider
            );
        }
        let quiet = crate::profile::lookup(&net.caps.provider).quiet_reply_queue == Some(true);
        if quiet {
            tracing::debug!(
                "{}: RMA goes to the peer's request endpoint; a round reads the reply queue only while something can arrive there (profile: quiet_reply_queue)",
                net.caps.provider
            );
        }
        let facts = Facts {
            provider: net.caps.provider.clone(),
            max_msg_size: net.caps.max_msg_size,
            mr_virt_addr: net.caps.mr_virt_addr,
            mr_endpoint: net.caps.mr_endpoint,
            atomic: net.caps.atomic,
            rma_iov_limit: net
                .info
                .iter()
                .next()
                .map_or(1, |e| e.rma_iov_limit().max(1)),
            remote_cq_data: net.caps.cq_data_size >= 8,
        };
        Ok((
            OfiTransport {
                facts,
                msg_completion: if net.msg_delivery_complete {
                    sys::FI_DELIVERY_COMPLETE
                } else {
                    sys::FI_INJECT_COMPLETE
                } as u64,
                senders: Senders::new(paired),
                sets,
                nsets: plan.sets,
                addrs: Vec::new(),
                rank: plan.rank,
                own_only: plan.own_addresses_only,
                av,
                domain,
                // Requested keys (providers without FI_MR_PROV_KEY) must be
                // unique in the domain.
                next_key: AtomicU64::new(1),
                lock: L::new(net.big_lock),
                pending: (0..plan.sets).map(|_| Default::default()).collect(),
                tx_idle: (0..plan.sets).map(|_| Default::default()).collect(),
                rma_peer: if quiet {
                    crate::transport::Ep::Request
                } else {
                    crate::transport::Ep::Rma
                },
                quiet,
                reply_watch: (0..plan.sets).map(|_| Default::default()).collect(),
                since_request: (0..plan.sets).map(|_| Default::default()).collect(),
                rx_idle: (0..plan.sets).map(|_| Default::default()).collect(),
            },
            pack_names(&names),
        ))
    }
}
