//! Per-provider capability profiles.
//!
//! The profiles are data ([`providers.toml`](providers.toml), compiled into
//! the crate) describing, for each provider GASNet's ofi-conduit knows, its
//! support status, the minimum libfabric version, the threading level for
//! multi-threaded mode, the MR mode and AV type the conduit is specialised
//! for, whether it needs several TX CQs or `fi_recvmsg` retries, and the
//! `FI_*` variables the conduit sets for it. A provider without a profile
//! gets the `generic` one.
//!
//! At start-up the profile is checked against `fi_getinfo`'s answer
//! ([`reconcile`]) into the [`Capabilities`] the rest of the conduit uses.

mod env_actions;
mod reconcile;
mod version;

pub use env_actions::{apply_env_actions, env_actions, EnvAction};
pub use reconcile::{reconcile, Capabilities, ProviderFacts, Rejection};
pub use version::Version;

use serde::Deserialize;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// How GASNet's ofi-conduit rates a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Recommended: validated for correctness and performance.
    Recommended,
    /// Used successfully, but another conduit is usually a better choice.
    Usable,
    /// Did not meet expectations; works, with a warning.
    NotRecommended,
    /// Known not to work; refused.
    Unsupported,
}

impl Status {
    /// The word used in listings.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Recommended => "recommended",
            Status::Usable => "usable",
            Status::NotRecommended => "not recommended",
            Status::Unsupported => "unsupported",
        }
    }
}

/// AV type a profile asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProfileAv {
    /// FI_AV_TABLE.
    Table,
    /// FI_AV_MAP.
    Map,
}

/// One provider's profile (a `[[provider]]` table of `providers.toml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Provider name as libfabric reports it (`tcp;ofi_rxm`), or `generic`.
    pub name: String,
    /// Support status.
    pub status: Status,
    /// Minimum libfabric version.
    pub min_libfabric: Version,
    /// The network it serves, for listings.
    pub network: String,
    /// FI_THREAD_DOMAIN (plus one lock) in multi-threaded mode.
    pub thread_domain: bool,
    /// FI_MR_VIRT_ADDR expected (None: the provider decides).
    pub mr_virt_addr: Option<bool>,
    /// FI_MR_PROV_KEY expected (None: the provider decides).
    pub mr_prov_key: Option<bool>,
    /// FI_MR_ENDPOINT expected (None: the provider decides).
    pub mr_endpoint: Option<bool>,
    /// AV type (None: the provider decides; table preferred).
    pub av_type: Option<ProfileAv>,
    /// Separate TX CQs per endpoint (None: adapt at run time). Recorded: an
    /// endpoint set has one endpoint on its TX queue, so it changes nothing
    /// today.
    pub multi_cq: Option<bool>,
    /// Retry `fi_recvmsg` on -FI_EAGAIN.
    pub retry_recvmsg: Option<bool>,
    /// Variables set before libfabric starts unless the user set them.
    #[serde(default)]
    pub set_env: BTreeMap<String, String>,
    /// FI_UNIVERSE_SIZE is set automatically only from this version on.
    pub universe_size_min_libfabric: Option<Version>,
    /// `false`: send AMs with `fi_send` only, never `fi_inject` (unless
    /// `GASNET_OFI_AM_INJECT_LIMIT` says otherwise), for providers that lose
    /// injected messages.
    pub am_inject: Option<bool>,
    /// AM flow control for providers whose connections can deadlock once a
    /// peer's socket fills: AM sends complete only when delivered
    /// (`FI_DELIVERY_COMPLETE`) and each send pool holds at most this many
    /// buffers, unless the user set `GASNET_OFI_AM_USE_DELIVERY_COMPLETE`
    /// or the pool's variables.
    pub am_send_window: Option<usize>,
    /// `false`: the provider accepts tagged receives past its `rx_attr`
    /// size (posted until it refuses one); `true`/absent: it refuses them
    /// there, so the conduit keeps a reserve for its own receives.
    pub tagged_rx_bounded: Option<bool>,
    /// Most `fi_tsend`s a tagged context keeps in flight: a send past it
    /// first makes progress until one completes. For providers that stall
    /// with many multi-packet messages outstanding (ofi_rxd); absent: no
    /// limit. Safe only where a send completes without a matching receive
    /// (the provider buffers unexpected messages), else sends would wait
    /// on the peer's receives.
    pub tagged_send_window: Option<usize>,
    /// Tagged messages are injected (`fi_tinject`) only from this libfabric
    /// version on; before it every tagged message goes with `fi_tsend`,
    /// inside `tagged_send_window`. For ofi_rxd before 2.4.0, which holds a
    /// transmit entry per injected message until the peer acknowledges it
    /// and, once injects hold all of them, returns success from `fi_tsend`
    /// without sending (`rxd_ep_generic_sendmsg`). Absent: injected wherever
    /// the message fits.
    pub tagged_inject_min_libfabric: Option<Version>,
    /// `true`: the provider completes a truncated tagged receive as a
    /// success of the buffer's length (no FI_ETRUNC), so the conduit sends
    /// each message's length in the high half of the CQ data (when
    /// `cq_data_size` is 8) and detects truncation itself.
    pub tagged_truncation_unreported: Option<bool>,
    /// Largest tagged message known to arrive safely before its receive is
    /// posted (an unexpected message, which the provider buffers packet by
    /// packet); past it the provider can corrupt its own state. Recorded
    /// for programs and tests to read (the profile's `notes`, printed in
    /// the start-up warning, say it too); absent: no limit known. Applies
    /// below `tagged_unexpected_fixed_in` only: read it with
    /// [`Profile::tagged_unexpected_limit`].
    pub tagged_unexpected_max: Option<usize>,
    /// The libfabric version that fixed what `tagged_unexpected_max` works
    /// around (absent: not fixed).
    pub tagged_unexpected_fixed_in: Option<Version>,
    /// `true`: error entries of tagged receives carry the remote CQ data
    /// without `FI_REMOTE_CQ_DATA` in their flags (sockets: for a message
    /// that arrived before its receive, `sock_pe_progress_buffered_rx`
    /// copies the data but takes the flags from the posted receive), so a
    /// truncated receive's source is read from the data all the same.
    pub tagged_err_data_unflagged: Option<bool>,
    /// Why matched probe (`FI_CLAIM`) cannot be used with the provider
    /// (`Comm::improbe` refuses with this text); absent: it can.
    pub tagged_no_claim: Option<String>,
    /// Why the provider's atomics cannot serve an atomic domain (domains
    /// then go by Active Message, and `GASNET_OFI_ATOMICS=native` is
    /// refused with this text); absent: they can where `fi_*atomicvalid`
    /// says so.
    pub no_native_atomics: Option<String>,
    /// `true`: the provider's RMA is performed by the hardware (no target
    /// CPU), so collectives write into remote members' collective caches
    /// by default (`GASNET_OFI_COLL_RMA=auto`); absent: it is emulated in
    /// software, and chunks to remote members travel as Active Messages.
    pub rma_offloaded: Option<bool>,
    /// `false`: AM Longs go put-then-send by default
    /// (`GASNET_OFI_LONG_AM_WRITEDATA=auto`) even though the provider has
    /// remote CQ data; absent: in one message where it has.
    pub long_am_writedata: Option<bool>,
    /// `true`: AM requests leave from the reply endpoint and replies from
    /// the request endpoint, so a request and its reply travel over one
    /// connection of a connection-oriented provider; absent: each AM leaves
    /// from its own side's endpoint.
    pub am_paired_endpoints: Option<bool>,
    /// `true`: RMA and atomics are addressed to the peer's request
    /// endpoint, and a round of progress reads the reply queue only while
    /// a reply or a reply-endpoint completion can arrive (else once in 16
    /// rounds): for a provider that performs a peer's RMA in the target's
    /// progress of the endpoint it is addressed to, with memory registered
    /// for the whole domain (shm); absent: RMA goes to the reply endpoint,
    /// whose queue every round reads.
    pub quiet_reply_queue: Option<bool>,
    /// `true`: the provider copies a read's data within the posting call,
    /// by the initiator (shm's fast RMA with cross-memory attach: the
    /// kernel's `process_vm_readv`), so a non-blocking get through it never
    /// overlaps anything; where that copy is slow at small in-page offsets
    /// (`GASNET_OFI_GET_BOUNCE=auto` probes it at start-up), gets at such
    /// offsets are read into a bounce buffer and copied out by the conduit.
    /// Absent: the provider moves reads in its own time.
    pub reads_in_call: Option<bool>,
    /// Bytes of gets through the provider in flight from one peer at most
    /// (`GASNET_OFI_GET_WINDOW`'s default): a get that would pass it waits
    /// (progressing) until at most a quarter of it is in flight, and a get
    /// larger than a quarter of it travels in pieces of a quarter. For a
    /// provider whose reads a target answers by streaming the data into
    /// one connection (tcp), where a deep queue of replies in the kernel
    /// is slower to copy than a few. Absent: no limit.
    pub get_window: Option<usize>,
    /// `true`: the provider moves RMA data by cross-memory attach, whose
    /// kernel copy pins the segment's pages for every transfer (shm), so
    /// a segment that no supernode peer maps is anonymous memory advised
    /// for transparent huge pages (`GASNET_OFI_SEGMENT_HUGEPAGES=auto`):
    /// pinned a huge page at a time, 1 MiB gets from it ran twice as fast.
    /// Absent: a memory file in ordinary pages.
    pub segment_hugepages: Option<bool>,
    /// With a libfabric older than this version, AMs are received one per
    /// buffer, posted without `FI_MULTI_RECV` (`GASNET_OFI_RECEIVE_BUFF_SIZE`
    /// = `recv`, with that mode's buffer count), unless the user set
    /// `GASNET_OFI_RECEIVE_BUFF_SIZE`; absent: multi-receive buffers.
    pub am_recv_mode_before: Option<Version>,
    /// Known problems and advice.
    #[serde(default)]
    pub notes: String,
    /// Its status reflects only that it reaches the ranks of one host
    /// (shm): on a job whose ranks are all on one host it does what a
    /// recommended provider would, and start-up prints no warning for it.
    #[serde(default)]
    pub host_local: bool,
}

impl Profile {
    /// `tagged_unexpected_max` where it applies to libfabric `loaded`
    /// (below `tagged_unexpected_fixed_in`).
    pub fn tagged_unexpected_limit(&self, loaded: Version) -> Option<usize> {
        self.tagged_unexpected_max.filter(|_| {
            self.tagged_unexpected_fixed_in
                .is_none_or(|fixed| loaded < fixed)
        })
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileFile {
    provider: Vec<Profile>,
}

/// The profile data compiled into the crate.
pub const PROFILES_TOML: &str = include_str!("providers.toml");

/// Parse profile data (the compiled-in table, or a test's).
pub fn parse_profiles(text: &str) -> Result<Vec<Profile>, String> {
    let file: ProfileFile = toml::from_str(text).map_err(|e| e.to_string())?;
    if !file.provider.iter().any(|p| p.name == "generic") {
        return Err("the profile table has no `generic` entry".into());
    }
    Ok(file.provider)
}

/// All compiled-in profiles.
pub fn profiles() -> &'static [Profile] {
    static TABLE: OnceLock<Vec<Profile>> = OnceLock::new();
    TABLE.get_or_init(|| {
        // The table is part of the source tree and checked by a unit test,
        // so a parse failure is a build defect, not a user error.
        parse_profiles(PROFILES_TOML).expect("conduit/src/profile/providers.toml is valid")
    })
}

/// The profile for `provider` (exact libfabric name), or `generic`.
pub fn lookup(provider: &str) -> &'static Profile {
    let all = profiles();
    all.iter()
        .find(|p| p.name == provider)
        .or_else(|| all.iter().find(|p| p.name == "generic"))
        .expect("the table has a generic entry (checked by parse_profiles)")
}

/// The profile a user-supplied name refers to, accepting the spellings the
/// reference's `--with-ofi-provider` accepts: the exact name
/// (`verbs;ofi_rxm`), a colon for the semicolon (`verbs:ofi_rxm`), or the
/// first word when that is unambiguous (`verbs`). `None` when nothing or
/// more than one profile matches.
pub fn lookup_user_name(name: &str) -> Option<&'static Profile> {
    let name = name.trim().replace(':', ";");
    let all = profiles();
    if let Some(p) = all.iter().find(|p| p.name == name) {
        return Some(p);
    }
    let mut by_word = all
        .iter()
        .filter(|p| p.name.split(';').next() == Some(name.as_str()));
    match (by_word.next(), by_word.next()) {
        (Some(p), None) => Some(p),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_parses_and_has_every_named_provider() {
        let names: Vec<&str> = profiles().iter().map(|p| p.name.as_str()).collect();
        for want in [
            "psm2",
            "opx",
            "cxi",
            "verbs;ofi_rxm",
            "tcp;ofi_rxm",
            "tcp",
            "sockets",
            "udp;ofi_rxd",
            "shm",
            "efa",
            "generic",
        ] {
            assert!(names.contains(&want), "missing profile {want}");
        }
    }

    #[test]
    fn minimum_versions_from_the_seed() {
        assert_eq!(lookup("udp;ofi_rxd").min_libfabric, Version::new(1, 7, 0));
        assert_eq!(
            lookup("verbs;ofi_rxm").min_libfabric,
            Version::new(1, 12, 0)
        );
        assert_eq!(lookup("gni").min_libfabric, Version::new(1, 14, 0));
        assert_eq!(lookup("tcp;ofi_rxm").min_libfabric, Version::new(1, 15, 0));
    }

    #[test]
    fn threading_and_cq_defaults() {
        assert!(lookup("psm2").thread_domain);
        assert!(!lookup("cxi").thread_domain);
        assert_eq!(lookup("cxi").multi_cq, Some(true));
        assert_eq!(lookup("cxi").retry_recvmsg, Some(true));
        assert_eq!(lookup("udp;ofi_rxd").retry_recvmsg, Some(true));
        assert_eq!(lookup("tcp;ofi_rxm").retry_recvmsg, Some(false));
        assert_eq!(lookup("verbs;ofi_rxm").mr_virt_addr, Some(true));
        assert_eq!(lookup("psm2").mr_prov_key, Some(false));
    }

    #[test]
    fn udp_flow_control_and_other_workarounds() {
        let udp = lookup("udp;ofi_rxd");
        assert_eq!(udp.am_send_window, Some(64));
        assert_eq!(udp.tagged_send_window, Some(64));
        use crate::config::libfabric_vars::{FI_OFI_RXD_MAX_UNACKED, RXD_MAX_UNACKED_VALUE};
        assert_eq!(
            udp.set_env.get(FI_OFI_RXD_MAX_UNACKED).map(String::as_str),
            Some(RXD_MAX_UNACKED_VALUE)
        );
        assert_eq!(lookup("tcp;ofi_rxm").tagged_send_window, None);
        assert_eq!(udp.tagged_unexpected_max, Some(2 << 20));
        // ofi_rxd's limit is the udp provider's CQ overflow, fixed in 2.4.0.
        for (v, want) in [
            ((1, 17), Some(2 << 20)),
            ((2, 3), Some(2 << 20)),
            ((2, 4), None),
        ] {
            let loaded = Version::new(v.0, v.1, 0);
            assert_eq!(udp.tagged_unexpected_limit(loaded), want, "{v:?}");
        }
        assert_eq!(lookup("tcp;ofi_rxm").tagged_unexpected_max, None);
        let rxm = lookup("tcp;ofi_rxm");
        assert_eq!(rxm.tagged_unexpected_limit(Version::new(1, 17, 0)), None);
        assert_eq!(lookup("sockets").am_inject, Some(false));
        assert_eq!(lookup("tcp;ofi_rxm").am_inject, None);
        assert_eq!(lookup("sockets").am_send_window, Some(2));
        assert_eq!(lookup("tcp;ofi_rxm").am_send_window, None);
    }

    #[test]
    fn unknown_provider_is_generic() {
        assert_eq!(lookup("net;ofi_rxm").name, "generic");
        assert_eq!(lookup("generic").status, Status::NotRecommended);
    }

    #[test]
    fn user_spellings() {
        assert_eq!(
            lookup_user_name("verbs:ofi_rxm").unwrap().name,
            "verbs;ofi_rxm"
        );
        assert_eq!(lookup_user_name("verbs").unwrap().name, "verbs;ofi_rxm");
        assert_eq!(lookup_user_name("udp").unwrap().name, "udp;ofi_rxd");
        // "tcp" is both a provider and the first word of tcp;ofi_rxm: exact wins.
        assert_eq!(lookup_user_name("tcp").unwrap().name, "tcp");
        assert!(lookup_user_name("nonexistent").is_none());
    }

    #[test]
    fn bad_tables_are_rejected() {
        assert!(parse_profiles("[[provider]]\nname = 1\n").is_err());
        let no_generic = r#"
[[provider]]
name = "shm"
status = "usable"
min_libfabric = "1.8"
network = "x"
thread_domain = false
"#;
        assert_eq!(
            parse_profiles(no_generic).unwrap_err(),
            "the profile table has no `generic` entry"
        );
        let bad_status = no_generic.replace("usable", "great");
        assert!(parse_profiles(&bad_status)
            .unwrap_err()
            .contains("unknown variant"));
    }
}
