//! Opening tagged messaging: a tagged RDM endpoint (or a scalable one) of
//! the client's provider and domain, in a fabric and domain of its own, the
//! tag layout, and the exchange of endpoint names.

use super::engine::{new_ctx, open_sep_ctx, rx_budget, Ctx, Engine, SepParts};
use super::error::TaggedError;
use crate::boot::Bootstrap;
use crate::client::Error;
use crate::ofi::{
    AddressVector, AvType, CompletionQueue, Domain, Endpoint, Hints, InfoEntry, InfoList, MrMode,
    Threading,
};
use crate::sync::Mode;
use crate::transport::ofi::{pack_names, unpack_names};
use ofi_sys as sys;
use std::sync::OnceLock;
use tagged::{Layout, ProviderTagFacts, TagMode};

/// What start-up takes from the configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// `GASNET_OFI_TAG_MODE`.
    pub tag_mode: TagMode,
    /// `GASNET_OFI_PROGRESS_EVENT_CNT`.
    pub event_cnt: usize,
    /// `GASNET_OFI_ENABLE_SEP`.
    pub enable_sep: bool,
    /// `GASNET_OFI_THREAD_GROUPING`.
    pub grouping: bool,
    /// `GASNET_OFI_NUM_CTXTS`.
    pub num_ctxts: usize,
    /// Completion-queue entries (0: the provider's default).
    pub cq_size: usize,
    /// `GASNET_VERBOSEENV`: rank 0 reports the layout chosen.
    pub verbose: bool,
}

/// The client's provider, fabric and domain, which tagged messaging uses
/// too.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Where {
    /// Provider name, e.g. `tcp;ofi_rxm`.
    pub provider: String,
    /// Fabric name.
    pub fabric: String,
    /// Domain name.
    pub domain: String,
}

impl Where {
    /// Of a selected `fi_info` entry.
    pub fn of(e: &InfoEntry<'_>) -> Where {
        Where {
            provider: e.provider(),
            fabric: e.fabric(),
            domain: e.domain(),
        }
    }
}

fn hints<M: Mode>(w: &Where, caps: u64) -> Hints {
    Hints::new()
        .rdm()
        .caps(caps)
        .mr_mode(MrMode::VIRT_ADDR | MrMode::ALLOCATED | MrMode::PROV_KEY | MrMode::ENDPOINT)
        .threading(if M::PAR {
            Threading::Safe
        } else {
            Threading::Domain
        })
        .manual_progress()
        .provider(&w.provider)
        .fabric(&w.fabric)
        .domain(&w.domain)
        .msg_order(sys::FI_ORDER_SAS as u64)
}

/// The provider's facts and the tag layout for `mode`, with the `fi_info`
/// to open (asked for `FI_DIRECTED_RECV` and CQ data when the layout is
/// `ofi_tag_full`).
pub(crate) fn choose<M: Mode>(w: &Where, mode: TagMode) -> Result<(Layout, InfoList), Error> {
    refuse_defective(&w.provider, crate::ofi::runtime_version()).map_err(Error::from)?;
    let tagged = sys::FI_TAGGED as u64;
    let directed = InfoList::query(Some(
        &hints::<M>(w, tagged | sys::FI_DIRECTED_RECV).cq_data_size(4),
    ))?;
    let plain = InfoList::query(Some(&hints::<M>(w, tagged)))?;
    let Some(p) = plain.first() else {
        return Err(TaggedError::NoTaggedInfo {
            provider: w.provider.clone(),
            domain: w.domain.clone(),
        }
        .into());
    };
    let d = directed.first();
    let facts = ProviderTagFacts {
        directed_recv: d.is_some_and(|e| e.caps() & sys::FI_DIRECTED_RECV != 0),
        cq_data_size: d.map_or(p.cq_data_size(), |e| e.cq_data_size()),
        mem_tag_format: d.map_or(p.mem_tag_format(), |e| e.mem_tag_format()),
    };
    let layout = Layout::choose(mode, &facts, &w.provider).map_err(TaggedError::from)?;
    tracing::debug!(?facts, ?layout, "tag layout");
    let src = if layout.cq_data() { &directed } else { &plain };
    let entry = src.first().unwrap_or(p);
    Ok((layout, InfoList::dup(&entry)))
}

/// Providers whose tag matching is broken in the loaded libfabric.
///
/// shm before 1.19 (its own receive queues, replaced by util_srx in 1.19)
/// matches a receive against already-arrived messages with the *message's*
/// ignore mask instead of the receive's, so a wildcard receive (and every
/// receive here: the synchronous-send bit is always ignored) never matches
/// a message that arrived first; and it ignores FI_PEEK, so a probe posts a
/// zero-byte receive that consumes the message. Both read from
/// `prov/shm/src/smr_ep.c` (`smr_match_tagged`) and `smr_msg.c`
/// (`smr_trecvmsg`) of v1.17.0 and v1.18.0; gex-tagged hangs on them.
pub(crate) fn refuse_defective(
    provider: &str,
    (major, minor): (u32, u32),
) -> Result<(), TaggedError> {
    let name = provider.split(';').next().unwrap_or(provider);
    if name == "shm" && (major, minor) < (1, 19) {
        return Err(TaggedError::ProviderDefect {
            provider: provider.to_string(),
            version: format!("{major}.{minor}"),
            defect: "its tag matching uses the arrived message's ignore mask instead of the \
                     receive's (a wildcard receive never matches a message that arrived first) and it \
                     ignores FI_PEEK (a probe consumes the message); libfabric 1.19 fixed both",
            remedy: "Use libfabric 1.19 or later (scripts/setup.sh --libfabric=2), or another \
                     provider for the job (FI_PROVIDER=tcp or FI_PROVIDER=sockets)",
        });
    }
    Ok(())
}

/// Open tagged messaging for this rank (collective: every rank exchanges
/// its endpoint names, then all meet at a barrier).
pub(crate) fn open<M: Mode>(
    w: &Where,
    st: &Settings,
    boot: &dyn Bootstrap,
) -> Result<Engine<M>, Error> {
    let (layout, mut info) = choose::<M>(w, st.tag_mode)?;
    // Every rank of the job must fit the layout's source field (the tag
    // keeps only its low bits: larger ranks would alias smaller ones).
    layout
        .check_source(boot.size().saturating_sub(1) as u32)
        .map_err(TaggedError::from)?;
    let entry = info.first().ok_or(Error::NoFiInfo)?;
    let cq_data_size = entry.cq_data_size();
    let inject = entry.inject_size();
    let copy_small = !injects(&w.provider, crate::ofi::runtime_version());
    let bounded = crate::profile::lookup(&w.provider)
        .tagged_rx_bounded
        .unwrap_or(true);
    let budget = rx_budget(entry.rx_size(), bounded);
    let (max_tx, max_rx) = (entry.max_ep_tx_ctx(), entry.max_ep_rx_ctx());
    let av_type = match entry.av_type() {
        AvType::Unspec => AvType::Map,
        t => t,
    };
    let domain = Domain::open_entry(&entry)?;
    let size = boot.size();
    let rank = boot.rank();
    let event_cnt = st.event_cnt.max(1);
    let mut names = Vec::new();
    let mut ctxs: Vec<OnceLock<Ctx<M>>> = Vec::new();
    let mut sep = None;
    let av;
    if st.enable_sep {
        if max_tx.min(max_rx) <= 1 {
            return Err(TaggedError::SepUnsupported {
                provider: w.provider.clone(),
                tx: max_tx,
                rx: max_rx,
            }
            .into());
        }
        let n = st.num_ctxts.min(max_tx).min(max_rx).max(1);
        if n < st.num_ctxts {
            tracing::info!(
                "GASNET_OFI_NUM_CTXTS={} is more than provider {} offers ({n}): contexts are shared round-robin",
                st.num_ctxts,
                w.provider
            );
        }
        info.set_ctx_counts(n, n);
        let bits = (usize::BITS - (n - 1).leading_zeros()).max(1) as i32;
        av = AddressVector::open_rx_bits(&domain, av_type, size, bits)?;
        let s = Endpoint::open_scalable(&domain, &info)?
            .bind_av(&av)?
            .enable()?;
        names.push(s.name()?);
        let parts = SepParts {
            sep: s,
            domain: domain.clone(),
            rx_ctx_bits: bits,
            cq_size: st.cq_size,
            budget,
        };
        ctxs.extend((0..n).map(|_| OnceLock::new()));
        let _ = ctxs[0].set(open_sep_ctx::<M>(&parts, 0, event_cnt)?);
        sep = Some(parts);
    } else {
        let n = if st.grouping { st.num_ctxts.max(1) } else { 1 };
        av = AddressVector::open(&domain, av_type, n * size)?;
        for i in 0..n {
            let cq = CompletionQueue::open_tagged(&domain, st.cq_size)?;
            let ep = Endpoint::open_with(&domain, Some(&info))?
                .bind_cq(&cq, (sys::FI_TRANSMIT | sys::FI_RECV) as u64)?
                .bind_av(&av)?
                .enable()?;
            names.push(ep.name()?);
            let c = OnceLock::new();
            let _ = c.set(new_ctx::<M>(i, ep.clone(), ep, cq, event_cnt, budget));
            ctxs.push(c);
        }
    }
    let all = boot.allgather(&pack_names(&names)).map_err(Error::from)?;
    let mut addrs = vec![Vec::with_capacity(size); names.len()];
    for (r, packed) in all.iter().enumerate() {
        let theirs = unpack_names(r, names.len(), packed)?;
        for (i, name) in theirs.into_iter().enumerate() {
            addrs[i].push(name);
        }
    }
    let addrs = addrs
        .iter()
        .map(|row| av.insert(row))
        .collect::<Result<Vec<_>, _>>()?;
    boot.barrier().map_err(Error::from)?;
    let facts = super::paths::PathFacts {
        cq_data: layout.cq_data(),
        sep: sep.is_some(),
        copy_small,
        len_in_data: crate::profile::lookup(&w.provider)
            .tagged_truncation_unreported
            .unwrap_or(false)
            && cq_data_size >= 8,
    };
    if st.verbose && rank == 0 {
        gex_env::eprintln_whole!(
            "{}",
            report(&w.provider, st, &layout, ctxs.len(), budget, inject, facts)
        );
    }
    tracing::debug!(
        provider = %w.provider,
        mode = %layout.mode,
        contexts = ctxs.len(),
        sep = sep.is_some(),
        inject,
        copy_small,
        "tagged messaging open"
    );
    let mut eng = Engine::new(
        layout,
        rank as u32,
        size as u32,
        inject,
        st.grouping,
        ctxs.into_boxed_slice(),
        addrs,
        sep,
        event_cnt,
        facts,
    );
    eng.truncation_defect = truncation_defect(&w.provider, crate::ofi::runtime_version());
    eng.err_data_unflagged = crate::profile::lookup(&w.provider)
        .tagged_err_data_unflagged
        .unwrap_or(false);
    eng.no_claim = crate::profile::lookup(&w.provider)
        .tagged_no_claim
        .clone()
        .map(|why| (w.provider.clone(), why));
    if super::spill::needed(&w.provider, crate::ofi::runtime_version()) {
        eng.spill = super::spill::Spill::get();
    }
    if let Some(n) = crate::profile::lookup(&w.provider).tagged_send_window {
        eng.send_window = n.clamp(1, isize::MAX as usize) as isize;
    }
    Ok(eng)
}

/// Whether small tagged messages may be injected: not where the profile's
/// `tagged_inject_min_libfabric` is above the loaded libfabric (they are
/// then sent from copies).
fn injects(provider: &str, (major, minor): (u32, u32)) -> bool {
    let loaded = crate::profile::Version::new(major, minor, 0);
    crate::profile::lookup(provider)
        .tagged_inject_min_libfabric
        .is_none_or(|min| loaded >= min)
}

/// `(provider, version)` when a truncated receive breaks the connection.
///
/// tcp (under ofi_rxm) before 1.19 resets its receive state after a
/// truncation error without draining the rest of the message from the
/// socket, so the stream is out of step and later messages from that peer
/// never arrive (gex-tagged hangs after its truncation step). libfabric
/// fixed it in 1.19 ("prov/tcp: Continue receiving after truncation
/// error", 5d17a0966). The receive still reports the truncation, as an
/// error that says so.
pub(crate) fn truncation_defect(
    provider: &str,
    (major, minor): (u32, u32),
) -> Option<(String, String)> {
    let core = provider.split(';').next().unwrap_or(provider);
    (core == "tcp" && (major, minor) < (1, 19))
        .then(|| (provider.to_string(), format!("{major}.{minor}")))
}

/// The line `GASNET_VERBOSEENV=1` prints: the tag layout chosen (and
/// from which `GASNET_OFI_TAG_MODE`), its fields and the contexts.
#[allow(clippy::too_many_arguments)]
fn report(
    provider: &str,
    st: &Settings,
    layout: &Layout,
    contexts: usize,
    budget: isize,
    inject: usize,
    facts: super::paths::PathFacts,
) -> String {
    let inject = if facts.copy_small {
        format!(
            "no message injected (profile: tagged_inject_min_libfabric); up to {inject} bytes sent from a copy"
        )
    } else {
        format!("messages up to {inject} bytes injected")
    };
    let rx = if budget >= isize::MAX / 4 {
        "until the provider refuses".to_string()
    } else {
        format!("{budget} per context")
    };
    format!(
        "tagged: provider {provider}: GASNET_OFI_TAG_MODE={} -> {} ({} communicator-id, {} source, {} tag bits{}); \
         {contexts} {} context(s); application receives posted {rx}; send and receive paths: {}; {inject}{}",
        st.tag_mode,
        layout.mode,
        layout.cid_bits,
        layout.src_bits,
        layout.tag_bits,
        if layout.cq_data() { ", source rank in CQ data" } else { "" },
        if facts.sep { "scalable-endpoint" } else { "regular-endpoint" },
        super::paths::Paths::<crate::sync::Seq>::pick(facts).name,
        if facts.len() {
            "; each message's length travels in the CQ data (profile: tagged_truncation_unreported)"
        } else {
            ""
        },
    )
}

impl Settings {
    /// From the client's configuration.
    pub fn of(cfg: &crate::config::Config) -> Settings {
        Settings {
            tag_mode: cfg.tagged.tag_mode,
            event_cnt: cfg.tagged.progress_event_cnt,
            enable_sep: cfg.tagged.enable_sep,
            grouping: cfg.tagged.thread_grouping,
            num_ctxts: cfg.tagged.num_ctxts,
            cq_size: cfg.cq.tx_cq_size,
            verbose: cfg.general.verbose_env,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{injects, refuse_defective, truncation_defect};

    /// ofi_rxd injects nothing before libfabric 2.4 (its fi_tsend loses a
    /// message once injects hold every transmit entry); other providers,
    /// and rxd from 2.4, inject up to the provider's inject size.
    #[test]
    fn rxd_injects_no_tagged_message_before_2_4() {
        assert!(!injects("udp;ofi_rxd", (1, 17)));
        assert!(!injects("udp;ofi_rxd", (2, 1)));
        assert!(!injects("udp;ofi_rxd", (2, 3)));
        assert!(injects("udp;ofi_rxd", (2, 4)));
        assert!(injects("tcp;ofi_rxm", (1, 17)));
        assert!(injects("sockets", (1, 17)));
        assert!(injects("shm", (2, 1)));
    }

    #[test]
    fn tcp_before_1_19_reports_truncation_as_a_defect() {
        assert_eq!(
            truncation_defect("tcp;ofi_rxm", (1, 17)),
            Some(("tcp;ofi_rxm".to_string(), "1.17".to_string()))
        );
        assert_eq!(truncation_defect("tcp;ofi_rxm", (1, 19)), None);
        assert_eq!(truncation_defect("tcp", (2, 1)), None);
        assert_eq!(truncation_defect("sockets", (1, 17)), None);
        assert_eq!(truncation_defect("udp;ofi_rxd", (1, 17)), None);
    }

    #[test]
    fn shm_before_1_19_is_refused_naming_the_defect_and_the_remedy() {
        let e = refuse_defective("shm", (1, 17)).unwrap_err().to_string();
        assert!(
            e.starts_with("tagged messaging is not possible with provider shm in libfabric 1.17: "),
            "{e}"
        );
        assert!(
            e.contains("ignores FI_PEEK") && e.contains("FI_PROVIDER=tcp"),
            "{e}"
        );
        assert!(refuse_defective("shm", (1, 18)).is_err());
        assert!(refuse_defective("shm", (1, 19)).is_ok());
        assert!(refuse_defective("shm", (2, 1)).is_ok());
        assert!(refuse_defective("tcp;ofi_rxm", (1, 17)).is_ok());
        assert!(refuse_defective("sockets", (1, 17)).is_ok());
    }
}
