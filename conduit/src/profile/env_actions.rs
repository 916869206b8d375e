//! The `FI_*` variables the conduit sets for a provider before libfabric
//! starts: the profile's `set_env` table (for example `FI_MR_CACHE_MAX_SIZE=-1`
//! on cxi and verbs, bug 4676) and `FI_UNIVERSE_SIZE` under
//! `GASNET_OFI_SET_UNIVERSE_SIZE`.
//!
//! Rules: a value the user set is never overwritten; a variable the user set
//! to the empty string is removed, which asks libfabric for its own default.

use super::{Profile, Version};
use gex_env::EnvReader;

/// One change (or deliberate non-change) to the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvAction {
    /// Set `name=value` (the user had not set it).
    Set {
        /// Variable.
        name: String,
        /// Value.
        value: String,
    },
    /// The user set it empty: remove it so libfabric uses its default.
    Unset {
        /// Variable.
        name: String,
    },
    /// The user's value stays although the profile wants another.
    KeepUser {
        /// Variable.
        name: String,
        /// The user's value.
        user: String,
        /// The profile's value.
        wanted: String,
    },
}

/// `{largest_am}` in a profile value: the largest Active Message the job can
/// send (from `GASNET_OFI_MAX_MEDIUM`), rounded up to 512 bytes.
pub const LARGEST_AM: &str = "{largest_am}";

/// Decide the actions for `profile` on a job of `nranks` processes whose
/// largest Active Message is `largest_am` bytes.
///
/// `set_universe_size` is `GASNET_OFI_SET_UNIVERSE_SIZE` (None: the default,
/// which is on unless the profile names a newer minimum libfabric, bug 4413).
pub fn env_actions(
    profile: &Profile,
    env: &EnvReader<'_>,
    set_universe_size: Option<bool>,
    libfabric: Version,
    nranks: usize,
    largest_am: usize,
) -> Vec<EnvAction> {
    let am = largest_am.next_multiple_of(512).to_string();
    let mut wanted: Vec<(String, String)> = profile
        .set_env
        .iter()
        .map(|(k, v)| (k.clone(), v.replace(LARGEST_AM, &am)))
        .collect();
    let universe_default = profile
        .universe_size_min_libfabric
        .is_none_or(|min| libfabric >= min);
    if set_universe_size.unwrap_or(universe_default) {
        wanted.push(("FI_UNIVERSE_SIZE".into(), nranks.to_string()));
    }
    let mut actions = Vec::new();
    for (name, value) in wanted {
        match env.source().var(&name) {
            None => {
                env.record(&name, &value, true);
                actions.push(EnvAction::Set { name, value });
            }
            Some(user) if user.is_empty() => {
                env.record(&name, "", false);
                actions.push(EnvAction::Unset { name });
            }
            Some(user) => {
                env.record(&name, &user, false);
                if user != value {
                    actions.push(EnvAction::KeepUser {
                        name,
                        user,
                        wanted: value,
                    });
                }
            }
        }
    }
    actions
}

/// Apply the actions to the process environment. Returns one warning line
/// per kept user value that differs from the profile's (the reference warns
/// about these for cxi, where MPI often set them first).
///
/// Call it before anything else in the process starts threads or libfabric:
/// libfabric reads these variables when it initialises.
pub fn apply_env_actions(actions: &[EnvAction]) -> Vec<String> {
    let mut warnings = Vec::new();
    for a in actions {
        match a {
            EnvAction::Set { name, value } => std::env::set_var(name, value),
            EnvAction::Unset { name } => std::env::remove_var(name),
            EnvAction::KeepUser { name, user, wanted } => warnings.push(format!(
                "keeping {name}={user} from the environment; ofi-conduit would set {wanted} \
                 (if MPI was initialised first it may have set it)"
            )),
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::lookup;
    use gex_env::MapEnv;

    const V117: Version = Version::new(1, 17, 0);

    #[test]
    fn cxi_sets_cache_and_match_mode_and_universe() {
        let env = MapEnv::new();
        let r = EnvReader::quiet(&env);
        let a = env_actions(lookup("cxi"), &r, None, V117, 64, 8256);
        assert!(a.contains(&EnvAction::Set {
            name: "FI_MR_CACHE_MAX_SIZE".into(),
            value: "-1".into()
        }));
        assert!(a.contains(&EnvAction::Set {
            name: "FI_MR_CACHE_MAX_COUNT".into(),
            value: "-1".into()
        }));
        assert!(a.contains(&EnvAction::Set {
            name: "FI_CXI_RX_MATCH_MODE".into(),
            value: "hybrid".into()
        }));
        assert!(a.contains(&EnvAction::Set {
            name: "FI_UNIVERSE_SIZE".into(),
            value: "64".into()
        }));
    }

    #[test]
    fn user_value_is_never_overwritten_and_empty_means_unset() {
        let env = MapEnv::from([
            ("FI_MR_CACHE_MAX_SIZE", "1000"),
            ("FI_MR_CACHE_MAX_COUNT", ""),
        ]);
        let r = EnvReader::quiet(&env);
        let a = env_actions(lookup("verbs;ofi_rxm"), &r, Some(false), V117, 4, 8256);
        assert_eq!(
            a,
            vec![
                EnvAction::Unset {
                    name: "FI_MR_CACHE_MAX_COUNT".into()
                },
                EnvAction::KeepUser {
                    name: "FI_MR_CACHE_MAX_SIZE".into(),
                    user: "1000".into(),
                    wanted: "-1".into()
                },
            ]
        );
        let reads = r.reads();
        assert!(reads
            .iter()
            .any(|x| x.name == "FI_MR_CACHE_MAX_SIZE" && !x.defaulted));
    }

    /// tcp;ofi_rxm: rxm's pools sized for the job (the eager and SAR limits
    /// from the largest AM), and the universe size; a user's value stays.
    #[test]
    fn tcp_rxm_sizes_rxm_pools_and_universe() {
        let env = MapEnv::new();
        let r = EnvReader::quiet(&env);
        let a = env_actions(lookup("tcp;ofi_rxm"), &r, None, V117, 8, 8256);
        let set = |n: &str, v: &str| EnvAction::Set {
            name: n.into(),
            value: v.into(),
        };
        for want in [
            set("FI_OFI_RXM_BUFFER_SIZE", "1024"),
            set("FI_OFI_RXM_EAGER_LIMIT", "8704"),
            set("FI_OFI_RXM_SAR_LIMIT", "8704"),
            set("FI_OFI_RXM_MSG_RX_SIZE", "512"),
            set("FI_OFI_RXM_TX_SIZE", "1024"),
            set("FI_TCP_MAX_RX_SIZE", "256"),
            set("FI_UNIVERSE_SIZE", "8"),
        ] {
            assert!(a.contains(&want), "{want:?} not in {a:?}");
        }
        assert_eq!(a.len(), 7, "{a:?}");
        // The profile's names are the ones the code and the docs know.
        for name in crate::config::libfabric_vars::RXM_POOL_SETTINGS {
            assert!(
                a.iter()
                    .any(|x| matches!(x, EnvAction::Set { name: n, .. } if n == name)),
                "{name}"
            );
        }
        // A larger GASNET_OFI_MAX_MEDIUM raises the limits with it.
        let a = env_actions(lookup("tcp;ofi_rxm"), &r, None, V117, 8, 65600);
        assert!(a.contains(&set("FI_OFI_RXM_EAGER_LIMIT", "66048")), "{a:?}");
        // The user's values stay.
        let env = MapEnv::from([
            ("FI_UNIVERSE_SIZE", "1024"),
            ("FI_OFI_RXM_BUFFER_SIZE", "16384"),
        ]);
        let r = EnvReader::quiet(&env);
        let a = env_actions(lookup("tcp;ofi_rxm"), &r, None, V117, 8, 8256);
        assert!(a.contains(&EnvAction::KeepUser {
            name: "FI_OFI_RXM_BUFFER_SIZE".into(),
            user: "16384".into(),
            wanted: "1024".into()
        }));
        assert!(!a.iter().any(
            |x| matches!(x, EnvAction::Set { name, .. } if name == "FI_UNIVERSE_SIZE" || name == "FI_OFI_RXM_BUFFER_SIZE")
        ));
        let a = env_actions(lookup("tcp;ofi_rxm"), &r, Some(false), V117, 8, 8256);
        assert!(!a.iter().any(
            |x| matches!(x, EnvAction::Set { name, .. } | EnvAction::KeepUser { name, .. } if name == "FI_UNIVERSE_SIZE")
        ));
    }

    #[test]
    fn universe_size_off_by_default_for_old_cxi() {
        let env = MapEnv::new();
        let r = EnvReader::quiet(&env);
        let old = Version::new(1, 15, 0);
        let a = env_actions(lookup("cxi"), &r, None, old, 8, 8256);
        assert!(!a
            .iter()
            .any(|x| matches!(x, EnvAction::Set { name, .. } if name == "FI_UNIVERSE_SIZE")));
        let a = env_actions(lookup("cxi"), &r, Some(true), old, 8, 8256);
        assert!(a
            .iter()
            .any(|x| matches!(x, EnvAction::Set { name, .. } if name == "FI_UNIVERSE_SIZE")));
        let new = Version::new(1, 15, 2);
        let a = env_actions(lookup("generic"), &r, None, new, 8, 8256);
        assert!(a
            .iter()
            .any(|x| matches!(x, EnvAction::Set { name, .. } if name == "FI_UNIVERSE_SIZE")));
    }

    #[test]
    fn apply_reports_conflicts() {
        let w = apply_env_actions(&[EnvAction::KeepUser {
            name: "FI_CXI_RX_MATCH_MODE".into(),
            user: "software".into(),
            wanted: "hybrid".into(),
        }]);
        assert_eq!(w.len(), 1);
        assert!(w[0].starts_with("keeping FI_CXI_RX_MATCH_MODE=software"));
    }
}
