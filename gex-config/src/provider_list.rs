//! `GASNET_OFI_PROVIDER_INCLUDE` and `GASNET_OFI_PROVIDER_EXCLUDE`: Open MPI's
//! `mtl_ofi_provider_include` and `mtl_ofi_provider_exclude`.
//!
//! Each is a comma-separated list of provider names; at most one of the two
//! may be set (Open MPI refuses both at once too). They narrow provider
//! selection together with `FI_PROVIDER` (see the conduit's `select` module).
//!
//! An entry matches a provider the way Open MPI's `is_in_list` does
//! (`strncasecmp(prov_name, entry, strlen(entry))`): the provider's name
//! begins with the entry, ignoring case. So `tcp` matches `tcp` and the
//! layered `tcp;ofi_rxm`, `verbs` matches `verbs;ofi_rxm`, `psm` matches
//! `psm2` and `psm3`, and `tcp;ofi_rxm` matches only itself. A utility
//! provider alone (`ofi_rxm`) matches nothing, since it is never first in a
//! layered name. Unlike `FI_PROVIDER` there is no `^`: the exclude list is
//! the other variable.

use super::ConfigError;
use gex_env::{EnvError, EnvReader};

/// `GASNET_OFI_PROVIDER_INCLUDE`.
pub const PROVIDER_INCLUDE: &str = "GASNET_OFI_PROVIDER_INCLUDE";
/// `GASNET_OFI_PROVIDER_EXCLUDE`.
pub const PROVIDER_EXCLUDE: &str = "GASNET_OFI_PROVIDER_EXCLUDE";

/// What `GASNET_OFI_PROVIDER_INCLUDE` accepts, for error messages.
pub const INCLUDE_ACCEPTED: &str =
    "a comma-separated list of provider names, such as cxi,verbs;ofi_rxm";
/// What `GASNET_OFI_PROVIDER_EXCLUDE` accepts, for error messages.
pub const EXCLUDE_ACCEPTED: &str = "a comma-separated list of provider names, such as sockets,udp";

/// The provider list in effect.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ProviderList {
    /// Neither variable is set: every provider is considered.
    #[default]
    All,
    /// `GASNET_OFI_PROVIDER_INCLUDE`: only providers an entry matches.
    Include {
        /// The value as set, for messages.
        value: String,
        /// The entries, trimmed, none empty.
        names: Vec<String>,
    },
    /// `GASNET_OFI_PROVIDER_EXCLUDE`: every provider no entry matches.
    Exclude {
        /// The value as set, for messages.
        value: String,
        /// The entries, trimmed, none empty.
        names: Vec<String>,
    },
}

/// Whether list entry `entry` matches `provider`: the provider's name begins
/// with the entry, ignoring ASCII case (Open MPI's `is_in_list`).
pub fn entry_matches(entry: &str, provider: &str) -> bool {
    provider
        .as_bytes()
        .get(..entry.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(entry.as_bytes()))
}

/// Split a list value into its entries; `var` names the variable in the
/// error. Entries are trimmed and empty ones dropped; at least one must
/// remain, and each may hold only letters, digits, `_`, `-`, `.` and `;`.
pub fn parse_names(var: &str, value: &str) -> Result<Vec<String>, EnvError> {
    let include = var == PROVIDER_INCLUDE;
    let accepted = if include {
        INCLUDE_ACCEPTED
    } else {
        EXCLUDE_ACCEPTED
    };
    let names: Vec<String> = value
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if value.trim_start().starts_with('^') {
        let hint = if include {
            format!("{accepted} (no ^: {PROVIDER_EXCLUDE} lists the providers to leave out)")
        } else {
            format!("{accepted} (no ^: every provider listed is left out)")
        };
        return Err(EnvError::new(var, value, hint));
    }
    let name_ok = |n: &String| {
        n.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.' | b';'))
    };
    if names.is_empty() || !names.iter().all(name_ok) {
        return Err(EnvError::new(var, value, accepted));
    }
    Ok(names)
}

impl ProviderList {
    /// Read both variables (each is recorded, set or not). A malformed
    /// value is a [`ConfigError::BadValue`] naming it; both set is a
    /// [`ConfigError::Conflict`] naming `GASNET_OFI_PROVIDER_EXCLUDE` and
    /// quoting the include list.
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        let include = r.opt_string(PROVIDER_INCLUDE);
        let exclude = r.opt_string(PROVIDER_EXCLUDE);
        let include = match include {
            Some(v) => Some((parse_names(PROVIDER_INCLUDE, &v)?, v)),
            None => None,
        };
        let exclude = match exclude {
            Some(v) => Some((parse_names(PROVIDER_EXCLUDE, &v)?, v)),
            None => None,
        };
        match (include, exclude) {
            (Some((_, inc)), Some((_, exc))) => Err(ConfigError::Conflict(EnvError::new(
                PROVIDER_EXCLUDE,
                &exc,
                format!(
                    "no value while {PROVIDER_INCLUDE}={inc:?} is set \
(the two lists are mutually exclusive: set one or the other)"
                ),
            ))),
            (Some((names, value)), None) => Ok(ProviderList::Include { value, names }),
            (None, Some((names, value))) => Ok(ProviderList::Exclude { value, names }),
            (None, None) => Ok(ProviderList::All),
        }
    }

    /// Whether `provider` (a libfabric provider name, layered ones as
    /// `tcp;ofi_rxm`) passes the list.
    pub fn matches(&self, provider: &str) -> bool {
        match self {
            ProviderList::All => true,
            ProviderList::Include { names, .. } => names.iter().any(|n| entry_matches(n, provider)),
            ProviderList::Exclude { names, .. } => {
                !names.iter().any(|n| entry_matches(n, provider))
            }
        }
    }

    /// The variable in effect and its value, `None` for [`ProviderList::All`].
    pub fn setting(&self) -> Option<(&'static str, &str)> {
        match self {
            ProviderList::All => None,
            ProviderList::Include { value, .. } => Some((PROVIDER_INCLUDE, value)),
            ProviderList::Exclude { value, .. } => Some((PROVIDER_EXCLUDE, value)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<ProviderList, ConfigError> {
        ProviderList::from_env(&EnvReader::quiet(env))
    }

    #[test]
    fn unset_and_empty_consider_every_provider() {
        assert_eq!(read(&MapEnv::new()).unwrap(), ProviderList::All);
        let env = MapEnv::from([(PROVIDER_INCLUDE, ""), (PROVIDER_EXCLUDE, "")]);
        assert_eq!(read(&env).unwrap(), ProviderList::All);
        assert!(ProviderList::All.matches("anything"));
        assert_eq!(ProviderList::All.setting(), None);
    }

    #[test]
    fn lists_are_parsed_and_trimmed() {
        let env = MapEnv::from([(PROVIDER_INCLUDE, " shm , tcp;ofi_rxm,,")]);
        let l = read(&env).unwrap();
        assert_eq!(
            l,
            ProviderList::Include {
                value: " shm , tcp;ofi_rxm,,".into(),
                names: vec!["shm".into(), "tcp;ofi_rxm".into()],
            }
        );
        assert_eq!(
            l.setting(),
            Some((PROVIDER_INCLUDE, " shm , tcp;ofi_rxm,,"))
        );
        let env = MapEnv::from([(PROVIDER_EXCLUDE, "sockets,udp")]);
        assert_eq!(
            read(&env).unwrap().setting(),
            Some((PROVIDER_EXCLUDE, "sockets,udp"))
        );
    }

    #[test]
    fn entries_match_like_open_mpi() {
        assert!(entry_matches("tcp", "tcp"));
        assert!(entry_matches("tcp", "tcp;ofi_rxm"));
        assert!(entry_matches("TCP", "tcp;ofi_rxm"));
        assert!(entry_matches("verbs", "verbs;ofi_rxm"));
        assert!(entry_matches("psm", "psm2"));
        assert!(entry_matches("tcp;ofi_rxm", "tcp;ofi_rxm"));
        assert!(!entry_matches("tcp;ofi_rxm", "tcp"));
        assert!(!entry_matches("ofi_rxm", "tcp;ofi_rxm"));
        assert!(!entry_matches("shm", "sockets"));
        assert!(!entry_matches("udp;ofi_rxd", "udp"));
    }

    #[test]
    fn include_keeps_and_exclude_drops() {
        let inc = ProviderList::Include {
            value: "tcp".into(),
            names: vec!["tcp".into()],
        };
        assert!(inc.matches("tcp") && inc.matches("tcp;ofi_rxm") && !inc.matches("shm"));
        let exc = ProviderList::Exclude {
            value: "tcp,shm".into(),
            names: vec!["tcp".into(), "shm".into()],
        };
        assert!(!exc.matches("tcp;ofi_rxm") && !exc.matches("shm") && exc.matches("sockets"));
    }

    #[test]
    fn bad_lists_are_refused_by_name() {
        for (name, value, expected) in [
            (
                PROVIDER_INCLUDE,
                ",",
                "a comma-separated list of provider names, such as cxi,verbs;ofi_rxm",
            ),
            (
                PROVIDER_INCLUDE,
                "tcp ofi_rxm",
                "a comma-separated list of provider names, such as cxi,verbs;ofi_rxm",
            ),
            (
                PROVIDER_INCLUDE,
                "^shm",
                "a comma-separated list of provider names, such as cxi,verbs;ofi_rxm \
(no ^: GASNET_OFI_PROVIDER_EXCLUDE lists the providers to leave out)",
            ),
            (
                PROVIDER_EXCLUDE,
                " , ",
                "a comma-separated list of provider names, such as sockets,udp",
            ),
            (
                PROVIDER_EXCLUDE,
                "shm,t*",
                "a comma-separated list of provider names, such as sockets,udp",
            ),
            (
                PROVIDER_EXCLUDE,
                "^sockets",
                "a comma-separated list of provider names, such as sockets,udp \
(no ^: every provider listed is left out)",
            ),
        ] {
            let env = MapEnv::from([(name, value)]);
            let e = read(&env).unwrap_err();
            assert!(matches!(e, ConfigError::BadValue(_)));
            assert_eq!(
                e.to_string(),
                format!("{name}=\"{value}\" is not accepted: expected {expected}")
            );
        }
    }

    #[test]
    fn both_lists_at_once_are_refused_naming_both() {
        let env = MapEnv::from([(PROVIDER_INCLUDE, "tcp"), (PROVIDER_EXCLUDE, "sockets")]);
        let e = read(&env).unwrap_err();
        assert!(matches!(e, ConfigError::Conflict(_)));
        assert_eq!(e.var(), PROVIDER_EXCLUDE);
        assert_eq!(
            e.to_string(),
            "GASNET_OFI_PROVIDER_EXCLUDE=\"sockets\" is not accepted: expected no value while \
GASNET_OFI_PROVIDER_INCLUDE=\"tcp\" is set (the two lists are mutually exclusive: set one or \
the other)"
        );
        // A malformed value is reported as such first.
        let env = MapEnv::from([(PROVIDER_INCLUDE, "tcp"), (PROVIDER_EXCLUDE, ",")]);
        assert!(matches!(read(&env).unwrap_err(), ConfigError::BadValue(_)));
    }

    #[test]
    fn both_variables_are_recorded() {
        let env = MapEnv::from([(PROVIDER_EXCLUDE, "sockets")]);
        let r = EnvReader::quiet(&env);
        ProviderList::from_env(&r).unwrap();
        let reads = r.reads();
        let names: Vec<&str> = reads.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, [PROVIDER_INCLUDE, PROVIDER_EXCLUDE]);
        assert!(reads[0].defaulted && !reads[1].defaulted);
    }
}
