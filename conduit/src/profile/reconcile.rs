//! Check a profile against what `fi_getinfo` reports.
//!
//! The provider's answer wins for what it decides at run time (MR mode bits,
//! inject sizes, the AV type it prefers); the profile's expectation is then
//! only noted when it differs. What the conduit cannot work with (a required
//! FI_MR_LOCAL, FI_CONTEXT, FI_CONTEXT2, FI_MSG_PREFIX or FI_RESTRICTED_COMP,
//! a threading level other than domain or safe, an unsupported provider, a
//! libfabric older than the provider's minimum) is a [`Rejection`].

use super::{Profile, ProfileAv, Status, Version};
use crate::ofi::{AvType, InfoEntry, MrMode, Threading};
use ofi_sys as sys;

/// What one `fi_getinfo` entry says, as plain data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFacts {
    /// Provider name.
    pub provider: String,
    /// Domain (device) name.
    pub domain: String,
    /// Fabric name.
    pub fabric: String,
    /// Provider version `(major, minor)` as reported.
    pub prov_version: (u32, u32),
    /// Capabilities.
    pub caps: u64,
    /// Modes the provider requires.
    pub mode: u64,
    /// MR mode bits the provider requires.
    pub mr_mode: MrMode,
    /// AV type it reports.
    pub av_type: AvType,
    /// Threading level it reports.
    pub threading: Threading,
    /// Inject size (message and RMA).
    pub inject_size: usize,
    /// Largest transfer.
    pub max_msg_size: usize,
    /// Remote CQ data bytes.
    pub cq_data_size: usize,
    /// Message prefix size.
    pub msg_prefix_size: usize,
}

impl ProviderFacts {
    /// Read the facts from an info entry.
    pub fn from_entry(e: &InfoEntry<'_>) -> Self {
        ProviderFacts {
            provider: e.provider(),
            domain: e.domain(),
            fabric: e.fabric(),
            prov_version: e.provider_version(),
            caps: e.caps(),
            mode: e.mode(),
            mr_mode: e.mr_mode(),
            av_type: e.av_type(),
            threading: e.threading(),
            inject_size: e.inject_size(),
            max_msg_size: e.max_msg_size(),
            cq_data_size: e.cq_data_size(),
            msg_prefix_size: e.msg_prefix_size(),
        }
    }
}

/// Why a provider/domain pair cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejection {
    /// A mode or MR-mode requirement the conduit does not support.
    #[error("{provider} requires {requirement}, which ofi-conduit does not support")]
    Requires {
        /// Provider.
        provider: String,
        /// The requirement, e.g. `FI_MR_LOCAL`.
        requirement: &'static str,
    },
    /// The profile says the conduit does not work with this provider.
    #[error("{provider} is not supported by ofi-conduit: {why}")]
    Unsupported {
        /// Provider.
        provider: String,
        /// The profile's notes.
        why: String,
    },
    /// libfabric is older than the provider's minimum.
    #[error(
        "{provider} needs libfabric {min} or newer because of known correctness defects in \
         older versions (found {found}); set GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER=1 to use it anyway"
    )]
    TooOld {
        /// Provider.
        provider: String,
        /// Minimum version.
        min: Version,
        /// Version in use.
        found: Version,
    },
    /// A threading level the conduit cannot use.
    #[error(
        "{provider} offers threading {level}; ofi-conduit needs FI_THREAD_DOMAIN or FI_THREAD_SAFE"
    )]
    Threading {
        /// Provider.
        provider: String,
        /// The level reported.
        level: String,
    },
    /// A capability the configuration needs is missing.
    #[error("{provider} lacks {capability}{hint}")]
    Missing {
        /// Provider.
        provider: String,
        /// The capability.
        capability: &'static str,
        /// Advice.
        hint: String,
    },
}

/// What the conduit will use: the profile checked against the provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Capabilities {
    /// Provider name.
    pub provider: String,
    /// Domain (device) name.
    pub domain: String,
    /// Fabric name.
    pub fabric: String,
    /// The profile applied (`generic` when none matched).
    pub profile: String,
    /// Support status.
    pub status: Status,
    /// libfabric version in use.
    pub libfabric: Version,
    /// Remote addresses are virtual addresses (else offsets from the base).
    pub mr_virt_addr: bool,
    /// Keys are chosen by the provider and must be exchanged.
    pub mr_prov_key: bool,
    /// MRs must be bound to the endpoint and enabled.
    pub mr_endpoint: bool,
    /// Only allocated memory can be registered.
    pub mr_allocated: bool,
    /// AV type to open.
    pub av_type: AvType,
    /// Threading level to request.
    pub threading: Threading,
    /// Use FI_THREAD_DOMAIN plus one lock in multi-threaded mode.
    pub thread_domain_in_par: bool,
    /// Separate TX CQs per endpoint.
    pub multi_cq: bool,
    /// Retry `fi_recvmsg` on -FI_EAGAIN.
    pub retry_recvmsg: bool,
    /// Provider inject size.
    pub inject_size: usize,
    /// Largest transfer.
    pub max_msg_size: usize,
    /// Remote CQ data bytes (4 or more lets Long carry its length there).
    pub cq_data_size: usize,
    /// FI_MULTI_RECV is offered.
    pub multi_recv: bool,
    /// Endpoints are opened with FI_ATOMIC (set by selection when the
    /// provider offers it and atomics may be native).
    pub atomic: bool,
    /// Where the profile and the provider differed, and what was used.
    pub notes: Vec<String>,
}

/// Check `profile` against `facts`.
///
/// `libfabric` is the library version; `allow_untrusted` is
/// `GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER`; `need_multi_recv` is false only
/// for `GASNET_OFI_RECEIVE_BUFF_SIZE=recv`.
pub fn reconcile(
    profile: &Profile,
    facts: &ProviderFacts,
    libfabric: Version,
    allow_untrusted: bool,
    need_multi_recv: bool,
) -> Result<Capabilities, Rejection> {
    let provider = facts.provider.clone();
    let requires = |requirement| Rejection::Requires {
        provider: provider.clone(),
        requirement,
    };
    if facts.mr_mode.has(MrMode::LOCAL) {
        return Err(requires("FI_MR_LOCAL"));
    }
    if facts.mode & sys::FI_CONTEXT2 != 0 {
        return Err(requires("FI_CONTEXT2"));
    }
    if facts.mode & sys::FI_MSG_PREFIX != 0 || facts.msg_prefix_size > 0 {
        return Err(requires("FI_MSG_PREFIX"));
    }
    // libfabric 2.x defines the bit as 0 (no provider can ask for it).
    #[allow(clippy::bad_bit_mask)]
    if facts.mode & sys::RESTRICTED_COMP != 0 {
        return Err(requires("FI_RESTRICTED_COMP"));
    }
    if facts.mode & sys::FI_CONTEXT != 0 {
        return Err(requires("FI_CONTEXT (for RMA endpoints)"));
    }
    if profile.status == Status::Unsupported {
        return Err(Rejection::Unsupported {
            provider,
            why: profile.notes.clone(),
        });
    }
    let mut notes = Vec::new();
    if libfabric < profile.min_libfabric {
        let err = Rejection::TooOld {
            provider: provider.clone(),
            min: profile.min_libfabric,
            found: libfabric,
        };
        if !allow_untrusted {
            return Err(err);
        }
        notes.push(format!(
            "GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER=1: using {provider} on libfabric {libfabric}, \
             below its minimum {}",
            profile.min_libfabric
        ));
    }
    let threading = match facts.threading {
        Threading::Safe | Threading::Domain => Threading::Domain,
        Threading::Other(_) => {
            return Err(Rejection::Threading {
                provider,
                level: facts.threading.name(),
            })
        }
    };
    let multi_recv = facts.caps & sys::FI_MULTI_RECV as u64 != 0;
    if need_multi_recv && !multi_recv {
        return Err(Rejection::Missing {
            provider,
            capability: "FI_MULTI_RECV",
            hint: "; set GASNET_OFI_RECEIVE_BUFF_SIZE=recv to run without it".into(),
        });
    }
    for (cap, name) in [(sys::FI_MSG, "FI_MSG"), (sys::FI_RMA, "FI_RMA")] {
        if facts.caps & cap as u64 == 0 {
            return Err(Rejection::Missing {
                provider,
                capability: name,
                hint: String::new(),
            });
        }
    }

    // The provider's answer wins for the MR mode: note where the profile
    // expected otherwise.
    let mut mr_bit = |expect: Option<bool>, bit: u32, name: &str| {
        let actual = facts.mr_mode.has(bit);
        if let Some(e) = expect {
            if e != actual {
                notes.push(format!(
                    "profile {} expects {name} {}, but {provider} reports it {}; using the provider's mode",
                    profile.name,
                    if e { "on" } else { "off" },
                    if actual { "required" } else { "not required" },
                ));
            }
        }
        actual
    };
    let mr_virt_addr = mr_bit(profile.mr_virt_addr, MrMode::VIRT_ADDR, "FI_MR_VIRT_ADDR");
    let mr_prov_key = mr_bit(profile.mr_prov_key, MrMode::PROV_KEY, "FI_MR_PROV_KEY");
    let mr_endpoint = mr_bit(profile.mr_endpoint, MrMode::ENDPOINT, "FI_MR_ENDPOINT");
    let mr_allocated = facts.mr_mode.has(MrMode::ALLOCATED);

    let av_type = match (profile.av_type, facts.av_type) {
        (Some(ProfileAv::Map), _) => AvType::Map,
        (Some(ProfileAv::Table), _) => AvType::Table,
        (None, AvType::Map) => AvType::Map,
        (None, _) => AvType::Table,
    };

    Ok(Capabilities {
        provider: facts.provider.clone(),
        domain: facts.domain.clone(),
        fabric: facts.fabric.clone(),
        profile: profile.name.clone(),
        status: profile.status,
        libfabric,
        mr_virt_addr,
        mr_prov_key,
        mr_endpoint,
        mr_allocated,
        av_type,
        threading,
        thread_domain_in_par: profile.thread_domain,
        multi_cq: profile.multi_cq.unwrap_or(false),
        retry_recvmsg: profile.retry_recvmsg.unwrap_or(true),
        inject_size: facts.inject_size,
        max_msg_size: facts.max_msg_size,
        cq_data_size: facts.cq_data_size,
        multi_recv,
        atomic: false,
        notes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::lookup;

    fn facts(provider: &str) -> ProviderFacts {
        ProviderFacts {
            provider: provider.into(),
            domain: "lo".into(),
            fabric: "127.0.0.0/8".into(),
            prov_version: (117, 0),
            caps: (sys::FI_MSG | sys::FI_RMA | sys::FI_MULTI_RECV) as u64,
            mode: 0,
            mr_mode: MrMode(MrMode::VIRT_ADDR | MrMode::PROV_KEY | MrMode::ALLOCATED),
            av_type: AvType::Unspec,
            threading: Threading::Safe,
            inject_size: 64,
            max_msg_size: 1 << 30,
            cq_data_size: 8,
            msg_prefix_size: 0,
        }
    }
    const V117: Version = Version::new(1, 17, 0);

    #[test]
    fn tcp_rxm_matches_its_profile() {
        let c = reconcile(
            lookup("tcp;ofi_rxm"),
            &facts("tcp;ofi_rxm"),
            V117,
            false,
            true,
        )
        .unwrap();
        assert!(c.mr_virt_addr && c.mr_prov_key && !c.mr_endpoint);
        assert_eq!(c.av_type, AvType::Table);
        assert_eq!(c.threading, Threading::Domain);
        assert!(!c.retry_recvmsg);
        assert!(c.notes.is_empty(), "{:?}", c.notes);
    }

    #[test]
    fn provider_wins_for_mr_mode_with_a_note() {
        let mut f = facts("tcp;ofi_rxm");
        f.mr_mode = MrMode(MrMode::VIRT_ADDR);
        let c = reconcile(lookup("tcp;ofi_rxm"), &f, V117, false, true).unwrap();
        assert!(!c.mr_prov_key);
        assert_eq!(
            c.notes,
            vec!["profile tcp;ofi_rxm expects FI_MR_PROV_KEY on, but tcp;ofi_rxm reports it not required; using the provider's mode"]
        );
    }

    #[test]
    fn required_modes_are_rejections() {
        let mut f = facts("x");
        f.mr_mode = MrMode(MrMode::LOCAL);
        assert_eq!(
            reconcile(lookup("x"), &f, V117, false, true)
                .unwrap_err()
                .to_string(),
            "x requires FI_MR_LOCAL, which ofi-conduit does not support"
        );
        for (bit, name) in [
            (sys::FI_CONTEXT2, "FI_CONTEXT2"),
            (sys::FI_MSG_PREFIX, "FI_MSG_PREFIX"),
            (sys::RESTRICTED_COMP, "FI_RESTRICTED_COMP"),
        ]
        .into_iter()
        // libfabric 2.x has no FI_RESTRICTED_COMP (it is 0 there).
        .filter(|&(bit, _)| bit != 0)
        {
            let mut f = facts("x");
            f.mode = bit;
            let e = reconcile(lookup("x"), &f, V117, false, true).unwrap_err();
            assert_eq!(
                e,
                Rejection::Requires {
                    provider: "x".into(),
                    requirement: name
                }
            );
        }
    }

    #[test]
    fn old_libfabric_is_refused_unless_allowed() {
        let old = Version::new(1, 14, 0);
        let e = reconcile(
            lookup("tcp;ofi_rxm"),
            &facts("tcp;ofi_rxm"),
            old,
            false,
            true,
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "tcp;ofi_rxm needs libfabric 1.15 or newer because of known correctness defects in \
             older versions (found 1.14); set GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER=1 to use it anyway"
        );
        let c = reconcile(
            lookup("tcp;ofi_rxm"),
            &facts("tcp;ofi_rxm"),
            old,
            true,
            true,
        )
        .unwrap();
        assert!(c.notes[0].starts_with("GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER=1"));
    }

    #[test]
    fn unsupported_and_threading_and_multi_recv() {
        let e = reconcile(lookup("opx"), &facts("opx"), V117, false, true).unwrap_err();
        assert!(e
            .to_string()
            .starts_with("opx is not supported by ofi-conduit"));
        let mut f = facts("shm");
        f.threading = Threading::Other(sys::fi_threading_FI_THREAD_ENDPOINT);
        assert_eq!(
            reconcile(lookup("shm"), &f, V117, false, true).unwrap_err().to_string(),
            "shm offers threading FI_THREAD_ENDPOINT; ofi-conduit needs FI_THREAD_DOMAIN or FI_THREAD_SAFE"
        );
        let mut f = facts("shm");
        f.caps &= !(sys::FI_MULTI_RECV as u64);
        assert_eq!(
            reconcile(lookup("shm"), &f, V117, false, true)
                .unwrap_err()
                .to_string(),
            "shm lacks FI_MULTI_RECV; set GASNET_OFI_RECEIVE_BUFF_SIZE=recv to run without it"
        );
        assert!(reconcile(lookup("shm"), &f, V117, false, false).is_ok());
    }

    #[test]
    fn generic_takes_everything_from_the_provider() {
        let mut f = facts("net;ofi_rxm");
        f.mr_mode = MrMode(MrMode::ENDPOINT);
        f.av_type = AvType::Map;
        let c = reconcile(lookup("net;ofi_rxm"), &f, V117, false, true).unwrap();
        assert_eq!(c.profile, "generic");
        assert!(c.mr_endpoint && !c.mr_virt_addr);
        assert_eq!(c.av_type, AvType::Map);
        assert!(c.retry_recvmsg);
        assert!(c.notes.is_empty());
    }
}
