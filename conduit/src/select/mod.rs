//! Provider and device selection.
//!
//! `fi_getinfo` is asked for FI_EP_RDM endpoints with FI_MSG and FI_RMA,
//! manual progress and FI_RM_ENABLED, offering only the modes and MR-mode
//! bits the conduit handles. Each answer is checked against its profile
//! ([`crate::profile::reconcile`]); a second query that also offers the
//! modes the conduit refuses (FI_MR_LOCAL, FI_CONTEXT, FI_CONTEXT2,
//! FI_MSG_PREFIX, FI_RESTRICTED_COMP) finds the providers that need them, so
//! a listing can say why they were skipped. Then the provider variables
//! (`GASNET_OFI_PROVIDER_INCLUDE` or `_EXCLUDE`, and `FI_PROVIDER`; see
//! `narrow.rs`) and the requested device (`GASNET_OFI_DEVICE` or its
//! topology family) narrow the list, and the most preferred provider wins.

mod filter;
pub mod listing;
mod narrow;
pub mod topology;

pub use filter::ProviderFilter;

use crate::config::ProviderList;
use crate::ofi::{Hints, InfoList, MrMode, OfiError, Threading};
use crate::profile::{self, reconcile, Capabilities, ProviderFacts, Rejection, Status, Version};
use ofi_sys as sys;

/// What selection needs from the configuration.
#[derive(Debug, Clone, Default)]
pub struct SelectOptions {
    /// The user's `FI_PROVIDER` value.
    pub fi_provider: Option<String>,
    /// `GASNET_OFI_PROVIDER_INCLUDE` or `GASNET_OFI_PROVIDER_EXCLUDE`.
    pub provider_list: ProviderList,
    /// The requested device as `(variable, value)`.
    pub device: Option<(String, String)>,
    /// False only for `GASNET_OFI_RECEIVE_BUFF_SIZE=recv`.
    pub need_multi_recv: bool,
    /// `GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER`.
    pub allow_untrusted: bool,
    /// All ranks share one host (prefer shm and the loopback device).
    pub single_host: bool,
    /// A multi-threaded client: the domain is opened FI_THREAD_SAFE, or
    /// FI_THREAD_DOMAIN (plus one lock in the conduit) where the provider's
    /// profile says so.
    pub threads: bool,
    /// Open endpoints with FI_ATOMIC when the chosen provider offers it
    /// (native atomic domains); without it atomics go by Active Message.
    pub atomics: bool,
}

/// One provider/domain pair found, with its verdict.
#[derive(Debug, Clone)]
pub struct Candidate {
    /// What fi_getinfo said.
    pub facts: ProviderFacts,
    /// Usable (with the capabilities to use) or why not.
    pub verdict: Result<Capabilities, Rejection>,
}

/// The chosen provider and domain.
#[derive(Debug)]
pub struct Selected {
    /// A one-entry copy of the chosen `fi_info`, to open fabric and domain.
    pub info: InfoList,
    /// The capabilities to specialise on.
    pub caps: Capabilities,
}

/// Why selection failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// A libfabric call failed.
    #[error(transparent)]
    Ofi(#[from] OfiError),
    /// `FI_PROVIDER`, `GASNET_OFI_PROVIDER_INCLUDE` or
    /// `GASNET_OFI_PROVIDER_EXCLUDE` matched nothing usable.
    #[error("{var}={value:?} matches no usable provider; usable providers here: {}", list_or_none(.available))]
    NoSuchProvider {
        /// The variable.
        var: String,
        /// The variable's value.
        value: String,
        /// Usable providers.
        available: Vec<String>,
    },
    /// `FI_PROVIDER` and the provider list each allow usable providers, but
    /// none in common.
    #[error("FI_PROVIDER={fi_provider:?} and {var}={value:?} select no common provider: FI_PROVIDER allows {}; {var} allows {}", list_or_none(.fi_allows), list_or_none(.list_allows))]
    NoCommonProvider {
        /// `FI_PROVIDER`'s value.
        fi_provider: String,
        /// `GASNET_OFI_PROVIDER_INCLUDE` or `GASNET_OFI_PROVIDER_EXCLUDE`.
        var: String,
        /// Its value.
        value: String,
        /// The usable providers `FI_PROVIDER` matches.
        fi_allows: Vec<String>,
        /// The usable providers the list allows.
        list_allows: Vec<String>,
    },
    /// The requested device matched nothing usable.
    #[error("{var}={value:?} names no usable device; available devices: {}", list_or_none(.available))]
    NoSuchDevice {
        /// `GASNET_OFI_DEVICE` or a family member.
        var: String,
        /// Its value.
        value: String,
        /// `domain (provider)` entries.
        available: Vec<String>,
    },
    /// Nothing usable at all.
    #[error("no usable libfabric provider found (ofi-conduit needs FI_EP_RDM with FI_MSG and FI_RMA{}){}", if *.need_multi_recv { " and FI_MULTI_RECV" } else { "" }, skipped_text(.skipped))]
    NothingUsable {
        /// Whether FI_MULTI_RECV was required.
        need_multi_recv: bool,
        /// `provider (domain): reason` for each candidate skipped.
        skipped: Vec<String>,
    },
}

fn list_or_none(v: &[String]) -> String {
    if v.is_empty() {
        "none".into()
    } else {
        v.join(", ")
    }
}

fn skipped_text(v: &[String]) -> String {
    if v.is_empty() {
        String::new()
    } else {
        format!("; skipped: {}", v.join("; "))
    }
}

fn hints(refused_modes_too: bool) -> Hints {
    let mut mr = MrMode::VIRT_ADDR | MrMode::ALLOCATED | MrMode::PROV_KEY | MrMode::ENDPOINT;
    let mut mode = 0u64;
    if refused_modes_too {
        mr |= MrMode::LOCAL;
        mode = sys::FI_CONTEXT | sys::FI_CONTEXT2 | sys::FI_MSG_PREFIX | sys::RESTRICTED_COMP;
    }
    Hints::new()
        .rdm()
        .caps((sys::FI_MSG | sys::FI_RMA) as u64)
        .mode(mode)
        .mr_mode(mr)
        .threading(Threading::Domain)
        .manual_progress()
}

/// Every provider/domain pair on this machine that offers RDM endpoints
/// with FI_MSG and FI_RMA, each with its verdict, in libfabric's order.
pub fn candidates(
    need_multi_recv: bool,
    allow_untrusted: bool,
) -> Result<Vec<Candidate>, OfiError> {
    let accepted = InfoList::query(Some(&hints(false)))?;
    let all = InfoList::query(Some(&hints(true)))?;
    let mut out: Vec<Candidate> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let core_version = accepted
        .iter()
        .chain(all.iter())
        .map(|e| e.provider_version())
        .find(|(maj, _)| *maj >= 100);
    let libfabric = Version::libfabric(core_version);
    for (list, refused) in [(&accepted, false), (&all, true)] {
        for e in list.iter() {
            let facts = ProviderFacts::from_entry(&e);
            let key = (
                facts.provider.clone(),
                facts.domain.clone(),
                facts.fabric.clone(),
            );
            if !seen.insert(key) {
                continue;
            }
            let prof = profile::lookup(&facts.provider);
            let mut verdict = reconcile(prof, &facts, libfabric, allow_untrusted, need_multi_recv);
            if refused && verdict.is_ok() {
                // Only reachable when offering a refused mode: it needs one
                // even if it does not say which in `mode`.
                verdict = Err(Rejection::Requires {
                    provider: facts.provider.clone(),
                    requirement: "a mode bit ofi-conduit does not offer",
                });
            }
            out.push(Candidate { facts, verdict });
        }
    }
    Ok(out)
}

/// Preference among usable providers (lower first): the recommended
/// high-performance providers, then shm when every rank is on one host,
/// then the rest by how well they are known to work.
pub fn preference(provider: &str, status: Status, single_host: bool) -> u32 {
    match provider {
        "cxi" => 0,
        "psm2" => 1,
        "verbs;ofi_rxm" => 2,
        "efa" => 3,
        "shm" if single_host => 4,
        "tcp;ofi_rxm" => 10,
        "sockets" => 11,
        "udp;ofi_rxd" => 12,
        "shm" => 50,
        _ => match status {
            Status::Recommended => 5,
            Status::Usable => 20,
            Status::NotRecommended => 30,
            Status::Unsupported => 99,
        },
    }
}

/// Choose the provider and domain.
pub fn select(opts: &SelectOptions) -> Result<Selected, SelectError> {
    let cands = candidates(opts.need_multi_recv, opts.allow_untrusted)?;
    let mut pool: Vec<&Candidate> = cands.iter().filter(|c| c.verdict.is_ok()).collect();
    narrow::by_provider(
        &mut pool,
        |c| &c.facts.provider,
        opts.fi_provider.as_deref(),
        &opts.provider_list,
    )?;
    if let Some((var, value)) = &opts.device {
        let before = pool.clone();
        pool.retain(|c| &c.facts.domain == value);
        if pool.is_empty() {
            return Err(SelectError::NoSuchDevice {
                var: var.clone(),
                value: value.clone(),
                available: unique(
                    before
                        .iter()
                        .map(|c| format!("{} ({})", c.facts.domain, c.facts.provider)),
                ),
            });
        }
    }
    if pool.is_empty() {
        return Err(SelectError::NothingUsable {
            need_multi_recv: opts.need_multi_recv,
            skipped: cands
                .iter()
                .filter_map(|c| {
                    c.verdict
                        .as_ref()
                        .err()
                        .map(|r| format!("{} ({}): {r}", c.facts.provider, c.facts.domain))
                })
                .collect(),
        });
    }
    // Stable sort keeps libfabric's order within one preference; on one host
    // the loopback device goes first for IP providers.
    pool.sort_by_key(|c| {
        let caps = c.verdict.as_ref().expect("pool holds usable candidates");
        let lo = opts.single_host && c.facts.domain == "lo";
        (
            preference(&c.facts.provider, caps.status, opts.single_host),
            !lo,
        )
    });
    let chosen = pool[0];
    let mut caps = chosen.verdict.clone().expect("usable");
    // Find the same entry again to keep a copy of its fi_info: with
    // FI_ATOMIC when wanted and offered (the capability must be asked for
    // to be usable), else as selected.
    let same = |e: &crate::ofi::InfoEntry<'_>| {
        e.provider() == chosen.facts.provider
            && e.domain() == chosen.facts.domain
            && e.fabric() == chosen.facts.fabric
    };
    let with_atomic = if opts.atomics {
        let h = hints(false).caps((sys::FI_MSG | sys::FI_RMA | sys::FI_ATOMIC) as u64);
        InfoList::query(Some(&h))
            .ok()
            .filter(|l| l.iter().any(|e| same(&e)))
    } else {
        None
    };
    caps.atomic = with_atomic.is_some();
    let list = match with_atomic {
        Some(l) => l,
        None => InfoList::query(Some(&hints(false)))?,
    };
    let entry = list.iter().find(same).ok_or_else(|| OfiError {
        call: "fi_getinfo",
        code: -(sys::FI_ENODATA as i64),
        text: format!(
            "{} ({}) disappeared between two queries",
            chosen.facts.provider, chosen.facts.domain
        ),
    })?;
    let mut info = InfoList::dup(&entry);
    if opts.threads && !caps.thread_domain_in_par {
        caps.threading = Threading::Safe;
        info.set_threading(Threading::Safe);
    }
    Ok(Selected { info, caps })
}

fn unique(it: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = Vec::new();
    for s in it {
        if !v.contains(&s) {
            v.push(s);
        }
    }
    v
}

/// The one-line warning for a provider that is not recommended (None for a
/// recommended one, and for a host-local one such as shm when every rank
/// of the job is on one host, `single_host`: what its status warns of
/// cannot happen). Printed once per job unless `GASNET_QUIET=1`.
pub fn status_warning(caps: &Capabilities, single_host: bool) -> Option<String> {
    let p = profile::lookup(&caps.provider);
    match caps.status {
        Status::Recommended => None,
        _ if single_host && p.host_local => None,
        _ => Some(format!(
            "WARNING: ofi-conduit is using the {} provider ({}), which is {} for ofi-conduit: {}. \
             Set GASNET_QUIET=1 to silence this warning.",
            caps.provider,
            caps.domain,
            caps.status.as_str(),
            if p.notes.is_empty() {
                "it may deliver suboptimal performance"
            } else {
                &p.notes
            }
        )),
    }
}

/// Remove `FI_PROVIDER` from the process environment (the conduit applies
/// it itself; see [`ProviderFilter`]). Call before libfabric's first use.
pub fn take_fi_provider_from_env() {
    std::env::remove_var("FI_PROVIDER");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_offers_the_expected_providers() {
        let c = candidates(true, false).unwrap();
        let usable: Vec<&str> = c
            .iter()
            .filter(|c| c.verdict.is_ok())
            .map(|c| c.facts.provider.as_str())
            .collect();
        for p in ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"] {
            assert!(usable.contains(&p), "{p} not usable: {c:#?}");
        }
    }

    /// Select on one host with `FI_PROVIDER` set to `fi` (or unset).
    fn select_one_host(fi: Option<&str>) -> Selected {
        select(&SelectOptions {
            fi_provider: fi.map(str::to_string),
            need_multi_recv: true,
            single_host: true,
            threads: false,
            ..Default::default()
        })
        .unwrap()
    }

    #[test]
    fn selection_prefers_shm_on_one_host_and_lo_for_tcp() {
        assert_eq!(select_one_host(None).caps.provider, "shm");
        let s = select_one_host(Some("tcp"));
        // libfabric 2.x has a native tcp RDM provider, which `tcp` names
        // in full; 1.x has only tcp;ofi_rxm.
        let tcp = if crate::ofi::runtime_version().0 >= 2 {
            "tcp"
        } else {
            "tcp;ofi_rxm"
        };
        assert_eq!(
            (s.caps.provider.as_str(), s.caps.domain.as_str()),
            (tcp, "lo")
        );
        assert_eq!(s.info.first().unwrap().domain(), "lo");
        assert_eq!(
            select_one_host(Some("tcp;ofi_rxm")).caps.provider,
            "tcp;ofi_rxm"
        );
    }

    #[test]
    fn unknown_fi_provider_lists_what_is_available() {
        let e = select(&SelectOptions {
            fi_provider: Some("nonexistent".into()),
            need_multi_recv: true,
            ..Default::default()
        })
        .unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with(
                "FI_PROVIDER=\"nonexistent\" matches no usable provider; usable providers here: "
            ),
            "{text}"
        );
        for p in ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"] {
            assert!(text.contains(p), "{text}");
        }
    }

    #[test]
    fn unknown_device_lists_devices() {
        let e = select(&SelectOptions {
            device: Some(("GASNET_OFI_DEVICE".into(), "nonexistent".into())),
            need_multi_recv: true,
            ..Default::default()
        })
        .unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with(
                "GASNET_OFI_DEVICE=\"nonexistent\" names no usable device; available devices: "
            ),
            "{text}"
        );
        assert!(
            text.contains("shm (shm)") && text.contains("lo (tcp;ofi_rxm)"),
            "{text}"
        );
    }

    #[test]
    fn warning_for_not_recommended() {
        let s = select(&SelectOptions {
            fi_provider: Some("tcp".into()),
            need_multi_recv: true,
            ..Default::default()
        })
        .unwrap();
        let w = status_warning(&s.caps, true).unwrap();
        assert!(
            w.contains("tcp;ofi_rxm")
                && w.contains("not recommended")
                && w.contains("GASNET_QUIET=1"),
            "{w}"
        );
        // shm warns that it reaches one host only: not on a one-host job.
        let s = select(&SelectOptions {
            fi_provider: Some("shm".into()),
            need_multi_recv: true,
            single_host: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(status_warning(&s.caps, true), None);
        let w = status_warning(&s.caps, false).unwrap();
        assert!(w.contains("reaches only ranks on the same host"), "{w}");
    }
}
