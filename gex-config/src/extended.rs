//! The extended API's settings: `GASNET_OFI_ATOMICS` (how atomic domains
//! perform their operations), `GASNET_OFI_COLL_FANOUT` (the broadcast
//! tree of collectives) and `GASNET_OFI_COLL_CACHE_PAGES` (the registered
//! collective cache).

use super::read::count_in;
use super::ConfigError;
use gex_env::{EnvError, EnvReader};

/// `GASNET_OFI_ATOMICS`.
pub const ATOMICS: &str = "GASNET_OFI_ATOMICS";
/// `GASNET_OFI_COLL_FANOUT` (Open MPI coll/ofi's broadcast fan-out).
pub const COLL_FANOUT: &str = "GASNET_OFI_COLL_FANOUT";

/// `GASNET_OFI_COLL_CACHE_PAGES` (Open MPI coll/ofi's
/// `coll_ofi_cache_pages`).
pub const COLL_CACHE_PAGES: &str = "GASNET_OFI_COLL_CACHE_PAGES";
/// `GASNET_OFI_COLL_RMA`.
pub const COLL_RMA: &str = "GASNET_OFI_COLL_RMA";

/// Default data-cache pages per team.
pub const COLL_CACHE_PAGES_DEFAULT: usize = 32;
/// Largest accepted data cache (1 GiB of 4 KiB pages).
pub const COLL_CACHE_PAGES_MAX: usize = 262_144;

/// Default broadcast fan-out.
pub const COLL_FANOUT_DEFAULT: usize = 2;
/// Largest accepted fan-out.
pub const COLL_FANOUT_MAX: usize = 1024;

/// A setting read as one of a few words: the enum (its first variant the
/// default), what the variable accepts, the name each value prints as and
/// the spellings each is read from (case and surrounding blanks ignored).
macro_rules! word_setting {
    (
        $(#[$meta:meta])*
        $name:ident, accepts $accepted:literal {
            $( $(#[$vmeta:meta])* $variant:ident = $word:literal $(| $alias:literal)* ,)+
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
        pub enum $name {
            $( $(#[$vmeta])* $variant, )+
        }

        impl $name {
            /// What the variable accepts.
            pub const ACCEPTED: &'static str = $accepted;

            /// The setting's name.
            pub fn name(self) -> &'static str {
                match self {
                    $( $name::$variant => $word, )+
                }
            }
        }

        impl std::str::FromStr for $name {
            type Err = ();
            fn from_str(s: &str) -> Result<Self, ()> {
                match s.trim().to_ascii_lowercase().as_str() {
                    $( $word $(| $alias)* => Ok($name::$variant), )+
                    _ => Err(()),
                }
            }
        }
    };
}

word_setting! {
    /// How atomic domains perform their operations (`GASNET_OFI_ATOMICS`).
    AtomicsMode, accepts "one of auto, native, am" {
        /// The provider's atomics (`fi_atomic`) when it performs every
        /// (type, operation) of the domain, else Active Messages at the
        /// target.
        #[default]
        Auto = "auto",
        /// The provider's atomics; a domain they cannot serve is refused.
        Native = "native",
        /// Active Messages at the target (CPU atomics), always.
        Am = "am",
    }
}

word_setting! {
    /// How collective chunks reach team members outside this rank's
    /// supernode when the team has a collective cache
    /// (`GASNET_OFI_COLL_RMA`).
    CollRma, accepts "one of auto, on (or yes, 1), off (or no, 0)" {
        /// RMA writes into their caches where the provider's profile says
        /// its RMA is done by the hardware, else Active Messages.
        #[default]
        Auto = "auto",
        /// RMA writes into their caches.
        On = "on" | "yes" | "1",
        /// Active Messages.
        Off = "off" | "no" | "0",
    }
}

/// Atomics and collectives settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtendedConfig {
    /// `GASNET_OFI_ATOMICS`: `auto` (default), `native` or `am`.
    pub atomics: AtomicsMode,
    /// `GASNET_OFI_COLL_FANOUT`: children per node of the broadcast tree,
    /// 1 (a chain) to 1024, default 2.
    pub coll_fanout: usize,
    /// `GASNET_OFI_COLL_CACHE_PAGES`: pages of each team's data cache, 0
    /// (no cache: collectives travel as Active Messages) to 262144,
    /// default 32.
    pub coll_cache_pages: usize,
    /// `GASNET_OFI_COLL_RMA`: how chunks reach members outside the
    /// supernode.
    pub coll_rma: CollRma,
}

impl Default for ExtendedConfig {
    fn default() -> Self {
        ExtendedConfig {
            atomics: AtomicsMode::Auto,
            coll_fanout: COLL_FANOUT_DEFAULT,
            coll_cache_pages: COLL_CACHE_PAGES_DEFAULT,
            coll_rma: CollRma::Auto,
        }
    }
}

impl ExtendedConfig {
    /// Read the variables.
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        let text = r.string(ATOMICS, AtomicsMode::Auto.name());
        let atomics = text
            .parse::<AtomicsMode>()
            .map_err(|_| EnvError::new(ATOMICS, &text, AtomicsMode::ACCEPTED))?;
        let coll_fanout = count_in(r, COLL_FANOUT, COLL_FANOUT_DEFAULT, 1, COLL_FANOUT_MAX)?;
        let coll_cache_pages = count_in(
            r,
            COLL_CACHE_PAGES,
            COLL_CACHE_PAGES_DEFAULT,
            0,
            COLL_CACHE_PAGES_MAX,
        )?;
        let text = r.string(COLL_RMA, CollRma::Auto.name());
        let coll_rma = text
            .parse::<CollRma>()
            .map_err(|_| EnvError::new(COLL_RMA, &text, CollRma::ACCEPTED))?;
        Ok(ExtendedConfig {
            atomics,
            coll_fanout,
            coll_cache_pages,
            coll_rma,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<ExtendedConfig, ConfigError> {
        ExtendedConfig::from_env(&EnvReader::quiet(env))
    }

    #[test]
    fn defaults_and_values() {
        assert_eq!(read(&MapEnv::new()).unwrap(), ExtendedConfig::default());
        let env = MapEnv::from([
            ("GASNET_OFI_ATOMICS", "AM"),
            ("GASNET_OFI_COLL_FANOUT", "7"),
            ("GASNET_OFI_COLL_CACHE_PAGES", "0"),
            ("GASNET_OFI_COLL_RMA", "On"),
        ]);
        let c = read(&env).unwrap();
        assert_eq!(c.atomics, AtomicsMode::Am);
        assert_eq!(c.coll_fanout, 7);
        assert_eq!(c.coll_cache_pages, 0);
        assert_eq!(c.coll_rma, CollRma::On);
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let env = MapEnv::from([("GASNET_OFI_ATOMICS", "nic")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_ATOMICS=\"nic\" is not accepted: expected one of auto, native, am"
        );
        let env = MapEnv::from([("GASNET_OFI_COLL_FANOUT", "0")]);
        assert_eq!(read(&env).unwrap_err().var(), "GASNET_OFI_COLL_FANOUT");
        let env = MapEnv::from([("GASNET_OFI_COLL_RMA", "sometimes")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_COLL_RMA=\"sometimes\" is not accepted: expected one of auto, on (or yes, 1), off (or no, 0)"
        );
        let env = MapEnv::from([("GASNET_OFI_COLL_CACHE_PAGES", "262145")]);
        let e = read(&env).unwrap_err();
        assert_eq!(e.var(), "GASNET_OFI_COLL_CACHE_PAGES");
        assert!(e.to_string().contains("262145"), "{e}");
    }
}
