//! Start-up: from the environment to a chosen, checked provider.
//!
//! In order (each step before libfabric's first use where it matters):
//! 1. the `FI_*` variables of the profile the user named with `FI_PROVIDER`
//!    (or of the generic profile) are set, never over a user's value;
//! 2. `FI_PROVIDER` is taken out of the environment and applied by the
//!    conduit itself ([`crate::select::ProviderFilter`]), together with
//!    `GASNET_OFI_PROVIDER_INCLUDE` / `_EXCLUDE`
//!    ([`crate::config::ProviderList`]);
//! 3. `GASNET_OFI_LIST_DEVICES` prints the usable provider/device pairs;
//! 4. the provider and device are selected and checked against their
//!    profile;
//! 5. a provider that is not recommended gets one warning, as does each
//!    tagged setting without effect ([`crate::config::TaggedConfig::notes`])
//!    (rank 0, unless `GASNET_QUIET=1`), as do a profile whose `FI_*`
//!    variables came too late (no `FI_PROVIDER`) and an inject limit
//!    reduced to the provider's; `GASNET_VERBOSEENV=1` prints every
//!    variable read and every note (profile defaults, reductions) (rank 0).

use crate::config::{Config, ConfigError};
use crate::ofi::OfiError;
use crate::profile::{self, apply_env_actions, env_actions, Capabilities, Version};
use crate::select::{self, topology, SelectError, SelectOptions, Selected};
use gex_env::EnvReader;

/// Where this process sits in the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobShape {
    /// This process's rank.
    pub rank: usize,
    /// Number of ranks.
    pub size: usize,
    /// All ranks run on one host.
    pub single_host: bool,
    /// The client is multi-threaded (FI_THREAD_SAFE domain).
    pub threads: bool,
}

impl JobShape {
    /// A single-process job (a program started without a launcher).
    pub fn single() -> Self {
        JobShape {
            rank: 0,
            size: 1,
            single_host: true,
            threads: false,
        }
    }
}

/// Why start-up stopped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StartupError {
    /// A bad configuration value.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// No acceptable provider or device.
    #[error(transparent)]
    Select(#[from] SelectError),
    /// A libfabric call failed.
    #[error(transparent)]
    Ofi(#[from] OfiError),
}

/// AM flow control from a provider's profile (`am_send_window`): each part
/// applies only where the user set none of its variables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmWindow {
    /// AM sends complete only once delivered (`FI_DELIVERY_COMPLETE`).
    pub delivery_complete: bool,
    /// Most Request send buffers (and at most as many at start-up).
    pub request_buffs: Option<usize>,
    /// Most Reply send buffers (and at most as many at start-up).
    pub reply_buffs: Option<usize>,
}

impl AmWindow {
    /// Apply to an AM configuration.
    pub fn apply(&self, am: &mut crate::config::AmConfig) {
        if self.delivery_complete {
            am.use_delivery_complete = true;
        }
        if let Some(n) = self.request_buffs {
            am.max_request_buffs = n;
            am.num_initial_request_buffs = am.num_initial_request_buffs.min(n);
        }
        if let Some(n) = self.reply_buffs {
            am.max_reply_buffs = n;
            am.num_initial_reply_buffs = am.num_initial_reply_buffs.min(n);
        }
    }
}

/// The outcome of start-up.
#[derive(Debug)]
pub struct Prepared {
    /// The chosen provider and domain.
    pub selected: Selected,
    /// AM inject limit in effect (`GASNET_OFI_AM_INJECT_LIMIT`, capped).
    pub am_inject_limit: usize,
    /// RMA inject limit in effect (`GASNET_OFI_RMA_INJECT_LIMIT`, capped).
    pub rma_inject_limit: usize,
    /// The AM flow control the provider's profile imposes where the user
    /// did not choose (`am_send_window`).
    pub am_window: Option<AmWindow>,
    /// The provider's profile receives AMs one per buffer, posted without
    /// `FI_MULTI_RECV` (`am_recv_mode_before`), and the user did not set
    /// `GASNET_OFI_RECEIVE_BUFF_SIZE`.
    pub am_recv_mode: bool,
    /// Notes worth a log line (profile differences, clamps, env actions).
    pub notes: Vec<String>,
    /// Lines printed to stdout (device listing) and stderr (warnings), kept
    /// for tests.
    pub printed: Vec<String>,
}

impl Prepared {
    /// Shorthand for the capabilities.
    pub fn caps(&self) -> &Capabilities {
        &self.selected.caps
    }
}

/// The profile the user asked for by `FI_PROVIDER` (a single, non-negated
/// name), used to set provider variables before libfabric starts.
fn requested_profile(fi_provider: Option<&str>, libfabric: Version) -> &'static profile::Profile {
    match fi_provider {
        Some(v) if !v.trim_start().starts_with('^') && !v.contains(',') => {
            match profile::lookup_user_name(v) {
                // `tcp` before libfabric 1.18 (no native tcp RDM endpoint)
                // is tcp;ofi_rxm: the utility provider's profile applies.
                Some(p) if p.min_libfabric > libfabric && !p.name.contains(';') => {
                    let layered = format!("{};", p.name);
                    profile::profiles()
                        .iter()
                        .find(|q| q.name.starts_with(&layered) && q.min_libfabric <= libfabric)
                        .unwrap_or(p)
                }
                Some(p) => p,
                None => profile::lookup("generic"),
            }
        }
        _ => profile::lookup("generic"),
    }
}

/// Run start-up for `job` with configuration `cfg` read through `env`.
pub fn prepare(
    cfg: &Config,
    env: &EnvReader<'_>,
    job: &JobShape,
) -> Result<Prepared, StartupError> {
    let mut notes = Vec::new();
    let mut printed = Vec::new();
    let lead = job.rank == 0;

    // 1. Provider variables, before libfabric reads them.
    let libfabric = Version::libfabric(None);
    let early = requested_profile(cfg.general.fi_provider.as_deref(), libfabric);
    let largest_am =
        am::wire::message_len(am::wire::Kind::LongInline, am::MAX_ARGS, cfg.am.max_medium);
    let actions = env_actions(
        early,
        env,
        cfg.general.set_universe_size,
        libfabric,
        job.size,
        largest_am,
    );
    for w in apply_env_actions(&actions) {
        if lead && !cfg.general.quiet {
            gex_env::eprintln_whole!("WARNING: {w}");
            printed.push(format!("WARNING: {w}"));
        }
        notes.push(w);
    }
    // 2. The conduit applies FI_PROVIDER itself.
    select::take_fi_provider_from_env();

    // 3. Device listing.
    if cfg.device.lists_devices_on(job.rank) {
        let cands = select::candidates(
            cfg.am.receive_buff_size.uses_multi_recv(),
            cfg.general.allow_untrusted_provider,
        )?;
        for line in select::listing::device_lines(&cands) {
            let line = format!("[{}] {line}", job.rank);
            println!("{line}");
            printed.push(line);
        }
    }

    // 4. Selection.
    let ids = cfg
        .device
        .device_type
        .as_ref()
        .map(|t| topology::binding_ids(t.kind))
        .unwrap_or_default();
    let opts = SelectOptions {
        fi_provider: cfg.general.fi_provider.clone(),
        provider_list: cfg.provider_list.clone(),
        device: cfg.device.requested(&ids),
        need_multi_recv: cfg.am.receive_buff_size.uses_multi_recv(),
        allow_untrusted: cfg.general.allow_untrusted_provider,
        single_host: job.single_host,
        threads: job.threads,
        atomics: cfg.extended.atomics != crate::config::AtomicsMode::Am,
    };
    let selected = select::select(&opts)?;
    let caps = &selected.caps;
    let chosen = profile::lookup(&caps.provider);
    // What the user should act on is a warning (rank 0, unless
    // GASNET_QUIET=1); the rest is a note, printed by GASNET_VERBOSEENV=1.
    let mut warnings: Vec<String> = Vec::new();
    if chosen.name != early.name && !chosen.set_env.is_empty() {
        warnings.push(format!(
            "the {} profile sets {} before libfabric starts only when FI_PROVIDER names it; \
             set FI_PROVIDER='{}' to have them applied",
            chosen.name,
            chosen
                .set_env
                .keys()
                .cloned()
                .collect::<Vec<_>>()
                .join(", "),
            chosen.name
        ));
    }
    notes.extend(caps.notes.iter().cloned());

    // 5. Warnings and the variable record.
    if lead && !cfg.general.quiet {
        if let Some(w) = select::status_warning(caps, job.single_host) {
            gex_env::eprintln_whole!("{w}");
            printed.push(w);
        }
    }
    // Tagged settings accepted but without effect (GASNET_OFI_NUM_CTXTS
    // without thread grouping).
    for n in cfg.tagged.notes() {
        if lead && !cfg.general.quiet {
            gex_env::eprintln_whole!("WARNING: {n}");
            printed.push(format!("WARNING: {n}"));
        }
        notes.push(n);
    }
    let (mut am_inject_limit, n) = cfg.am.resolve_inject_limit(caps.inject_size);
    warnings.extend(n);
    if chosen.am_inject == Some(false) && env.peek("GASNET_OFI_AM_INJECT_LIMIT").is_none() {
        am_inject_limit = 0;
        notes.push(format!(
            "{}: AMs are sent with fi_send, not injected (profile default; set GASNET_OFI_AM_INJECT_LIMIT to override)",
            caps.provider
        ));
    }
    let am_window = chosen.am_send_window.map(|w| {
        let unset = |vars: &[&str]| vars.iter().all(|v| env.peek(v).is_none());
        use crate::config::am as v;
        let win = AmWindow {
            delivery_complete: unset(&[v::AM_USE_DELIVERY_COMPLETE]),
            request_buffs: unset(&[v::MAX_REQUEST_BUFFS, v::NUM_INITIAL_REQUEST_BUFFS]).then_some(w),
            reply_buffs: unset(&[v::MAX_REPLY_BUFFS, v::NUM_INITIAL_REPLY_BUFFS]).then_some(w),
        };
        notes.push(format!(
            "{}: AM sends wait for delivery, at most {w} per send pool (profile default: {}; set GASNET_OFI_AM_USE_DELIVERY_COMPLETE and GASNET_OFI_MAX_{{REQUEST,REPLY}}_BUFFS to override)",
            caps.provider, chosen.notes
        ));
        win
    });
    let am_recv_mode = match chosen.am_recv_mode_before {
        Some(v) if libfabric < v && env.peek(crate::config::am::RECEIVE_BUFF_SIZE).is_none() => {
            notes.push(format!(
                "{}: AMs are received one per buffer, posted without FI_MULTI_RECV (profile default before libfabric {v}; set GASNET_OFI_RECEIVE_BUFF_SIZE to override)",
                caps.provider
            ));
            true
        }
        _ => false,
    };
    let (rma_inject_limit, n) = cfg.rma.resolve_inject_limit(caps.inject_size);
    warnings.extend(n);
    let largest_am =
        am::wire::message_len(am::wire::Kind::LongInline, am::MAX_ARGS, cfg.am.max_medium);
    warnings.extend(cfg.am.resolve_long_am_rma_thresh(largest_am).1);
    for w in &warnings {
        if lead && !cfg.general.quiet {
            gex_env::eprintln_whole!("WARNING: {w}");
            printed.push(format!("WARNING: {w}"));
        }
    }
    notes.extend(warnings);
    for n in &notes {
        tracing::info!("{n}");
    }
    if lead && cfg.general.verbose_env {
        let computed = computed_defaults(cfg, job.size, am_inject_limit, rma_inject_limit, caps);
        // Variables whose recorded default the profile replaced.
        let replaced = if am_recv_mode {
            recv_mode_defaults(&caps.provider, env)
        } else {
            Vec::new()
        };
        for r in env.reads() {
            let shown = computed
                .iter()
                .find(|c| c.0 == r.name && r.defaulted && r.value.is_empty())
                .or_else(|| replaced.iter().find(|c| c.0 == r.name && r.defaulted));
            let line = match shown {
                Some((name, value, how)) => {
                    format!("ENV parameter: {name} = {value}   (default: {how})")
                }
                None => r.to_string(),
            };
            gex_env::eprintln_whole!("{line}");
            printed.push(line);
        }
        for n in &notes {
            gex_env::eprintln_whole!("NOTE: {n}");
            printed.push(format!("NOTE: {n}"));
        }
    }
    Ok(Prepared {
        selected,
        am_inject_limit,
        rma_inject_limit,
        am_window,
        am_recv_mode,
        notes,
        printed,
    })
}

/// What `GASNET_VERBOSEENV` shows for the receive variables the profile's
/// `recv` mode replaced (those the user left unset).
fn recv_mode_defaults(provider: &str, env: &EnvReader<'_>) -> Vec<(&'static str, String, String)> {
    use crate::config::am::{RecvBuffSize, NUM_RECEIVE_BUFFS, RECEIVE_BUFF_SIZE};
    let mut out = vec![(
        RECEIVE_BUFF_SIZE,
        RecvBuffSize::Recv.to_string(),
        format!("{provider}'s profile receives one AM per buffer with this libfabric"),
    )];
    if env.peek(NUM_RECEIVE_BUFFS).is_none() {
        out.push((
            NUM_RECEIVE_BUFFS,
            RecvBuffSize::Recv.default_num_buffs().to_string(),
            "one-AM buffers".to_string(),
        ));
    }
    out
}

/// The values the conduit chose for variables whose default is computed
/// (from the job or the provider), as `GASNET_VERBOSEENV` shows them in
/// place of `*empty*`: (variable, value, how it was chosen).
fn computed_defaults(
    cfg: &Config,
    size: usize,
    am_inject_limit: usize,
    rma_inject_limit: usize,
    caps: &Capabilities,
) -> Vec<(&'static str, String, String)> {
    let t = &cfg.exit_timeout;
    let provider_inject = |what: &str| {
        format!(
            "{what}, from {}'s inject_size {}",
            caps.provider, caps.inject_size
        )
    };
    vec![
        (
            "GASNET_EXITTIMEOUT",
            format!("{:.1}", t.for_job(size).as_secs_f64()),
            format!(
                "min(GASNET_EXITTIMEOUT_MAX {}, GASNET_EXITTIMEOUT_MIN {} + {size} ranks x GASNET_EXITTIMEOUT_FACTOR {})",
                t.max, t.min, t.factor
            ),
        ),
        (
            "GASNET_OFI_AM_INJECT_LIMIT",
            am_inject_limit.to_string(),
            if am_inject_limit == 0 {
                format!("{}'s profile sends AMs with fi_send", caps.provider)
            } else {
                provider_inject("AM payloads injected up to this size")
            },
        ),
        (
            "GASNET_OFI_RMA_INJECT_LIMIT",
            rma_inject_limit.to_string(),
            provider_inject("puts injected up to this size"),
        ),
        (
            "GASNET_OFI_DEVICE",
            caps.domain.clone(),
            format!("the domain selected ({}, fabric {})", caps.provider, caps.fabric),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_am_window_caps_the_pools_it_owns() {
        use crate::config::AmConfig;
        use gex_env::MapEnv;
        let env = MapEnv::from([("GASNET_OFI_MAX_REPLY_BUFFS", "8")]);
        let mut am = AmConfig::from_env(&EnvReader::quiet(&env)).unwrap();
        let w = AmWindow {
            delivery_complete: true,
            request_buffs: Some(2),
            reply_buffs: None,
        };
        w.apply(&mut am);
        assert!(am.use_delivery_complete);
        assert_eq!((am.max_request_buffs, am.num_initial_request_buffs), (2, 2));
        assert_eq!((am.max_reply_buffs, am.num_initial_reply_buffs), (8, 8));
        assert_eq!(profile::lookup("sockets").am_send_window, Some(2));
    }

    #[test]
    fn shm_receives_one_am_per_buffer_before_libfabric_2() {
        let v = profile::lookup("shm").am_recv_mode_before;
        assert_eq!(v, Some(Version::parse("2.0").unwrap()));
        assert_eq!(profile::lookup("tcp;ofi_rxm").am_recv_mode_before, None);
    }

    #[test]
    fn requested_profile_from_fi_provider() {
        let v = Version::new(1, 17, 0);
        assert_eq!(requested_profile(Some("cxi"), v).name, "cxi");
        assert_eq!(requested_profile(Some("verbs"), v).name, "verbs;ofi_rxm");
        assert_eq!(requested_profile(Some("^cxi"), v).name, "generic");
        assert_eq!(requested_profile(Some("shm,tcp"), v).name, "generic");
        assert_eq!(requested_profile(None, v).name, "generic");
        // `tcp` is tcp;ofi_rxm before 1.18, the native provider after.
        assert_eq!(requested_profile(Some("tcp"), v).name, "tcp;ofi_rxm");
        let v2 = Version::new(2, 1, 0);
        assert_eq!(requested_profile(Some("tcp"), v2).name, "tcp");
        assert_eq!(
            requested_profile(Some("tcp;ofi_rxm"), v2).name,
            "tcp;ofi_rxm"
        );
    }
}
