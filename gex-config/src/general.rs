//! General switches: `GASNET_QUIET`, `GASNET_VERBOSEENV`, provider trust,
//! `FI_UNIVERSE_SIZE` control and the recorded `FI_PROVIDER`.

use super::libfabric_vars::FI_PROVIDER;
use super::read::{explained, opt_bool, size_in};
use super::ConfigError;
use gex_env::{EnvError, EnvReader};

/// `GASNET_QUIET`.
pub const QUIET: &str = "GASNET_QUIET";
/// `GASNET_VERBOSEENV`.
pub const VERBOSEENV: &str = "GASNET_VERBOSEENV";
/// `GASNET_OFI_SET_UNIVERSE_SIZE`.
pub const SET_UNIVERSE_SIZE: &str = "GASNET_OFI_SET_UNIVERSE_SIZE";
/// `GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER`.
pub const ALLOW_UNTRUSTED_PROVIDER: &str = "GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER";

/// `GASNET_STATSFILE`.
pub const STATSFILE: &str = "GASNET_STATSFILE";
/// `GASNET_OFI_MALLOC_KEEP`.
pub const MALLOC_KEEP: &str = "GASNET_OFI_MALLOC_KEEP";
/// What `GASNET_OFI_MALLOC_KEEP` is when unset: 64 MiB.
pub const MALLOC_KEEP_DEFAULT: u64 = 64 << 20;
/// The smallest non-zero `GASNET_OFI_MALLOC_KEEP`: glibc's own default
/// thresholds (128 KiB); less would make glibc give memory back sooner.
pub const MALLOC_KEEP_MIN: u64 = 128 << 10;
/// The largest `GASNET_OFI_MALLOC_KEEP` (glibc's `mallopt` takes an `int`).
pub const MALLOC_KEEP_MAX: u64 = i32::MAX as u64;
/// What `GASNET_OFI_MALLOC_KEEP` accepts, in words.
const MALLOC_KEEP_RULE: &str = "0 (leave glibc alone) or a size from 128K to 2147483647 bytes \
(a number with an optional K, M, G or T suffix; glibc's own thresholds are 128K: less would \
return memory sooner)";
/// glibc's own allocator variables: when one is set and
/// `GASNET_OFI_MALLOC_KEEP` is not, the user tuned glibc, and the conduit
/// leaves it alone (`GLIBC_TUNABLES` counts when it names a
/// `glibc.malloc.` tunable).
pub const GLIBC_MALLOC_VARS: [&str; 5] = [
    "MALLOC_TRIM_THRESHOLD_",
    "MALLOC_MMAP_THRESHOLD_",
    "MALLOC_TOP_PAD_",
    "MALLOC_MMAP_MAX_",
    "GLIBC_TUNABLES",
];

/// `GASNET_WAIT_MODE`.
pub const WAIT_MODE: &str = "GASNET_WAIT_MODE";

/// `GASNET_WAIT_MODE`: how wait loops behave when polling finds nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaitModeSetting {
    /// Yield when this host runs more ranks than the process may use CPUs
    /// (the default), spin otherwise.
    #[default]
    Auto,
    /// Always spin (lowest latency on dedicated cores).
    Spin,
    /// Yield the CPU after a few empty polls (oversubscribed hosts).
    Yield,
}

impl WaitModeSetting {
    fn parse(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        let v = r.string(WAIT_MODE, "auto");
        match v.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(WaitModeSetting::Auto),
            "spin" => Ok(WaitModeSetting::Spin),
            "yield" => Ok(WaitModeSetting::Yield),
            _ => Err(EnvError::new(WAIT_MODE, &v, "spin, yield or auto").into()),
        }
    }
}

/// General settings.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GeneralConfig {
    /// `GASNET_QUIET`: silence the "provider not validated for performance"
    /// and similar startup warnings.
    pub quiet: bool,
    /// `GASNET_VERBOSEENV`: print every variable read. A malformed value
    /// counts as on, so the user sees what was read.
    pub verbose_env: bool,
    /// `FI_PROVIDER`: libfabric's provider filter, only recorded here.
    pub fi_provider: Option<String>,
    /// `GASNET_OFI_SET_UNIVERSE_SIZE`: whether the conduit may set
    /// `FI_UNIVERSE_SIZE` to the job size (never replacing a user's value).
    /// `None` when unset: the provider profile decides (on, except cxi with
    /// an old libfabric, bug 4413).
    pub set_universe_size: Option<bool>,
    /// `GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER`: turn the "provider below its
    /// minimum libfabric version" error into a warning.
    pub allow_untrusted_provider: bool,
    /// `GASNET_STATSFILE`: write the statistics counters to this file at
    /// exit; a `%` in the name becomes the rank.
    pub stats_file: Option<String>,
    /// `GASNET_WAIT_MODE`: spin or yield in wait loops (default auto).
    pub wait_mode: WaitModeSetting,
    /// `GASNET_OFI_MALLOC_KEEP`: bytes of freed memory at the top of the C
    /// heap that glibc keeps rather than returns to the system (`None`:
    /// unset; 0: glibc's settings are left alone).
    pub malloc_keep: Option<u64>,
    /// One of [`GLIBC_MALLOC_VARS`] is set: the user tuned glibc.
    pub glibc_tuned: bool,
}

impl GeneralConfig {
    /// Read the general variables.
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        let verbose_env = r.bool(VERBOSEENV, false).unwrap_or(true);
        let quiet = r.bool(QUIET, false)?;
        let fi_provider = r.opt_string(FI_PROVIDER);
        let set_universe_size = opt_bool(r, SET_UNIVERSE_SIZE)?;
        let allow_untrusted_provider = r.bool(ALLOW_UNTRUSTED_PROVIDER, false)?;
        let stats_file = r.opt_string(STATSFILE);
        let wait_mode = WaitModeSetting::parse(r)?;
        let explicit = r.peek(MALLOC_KEEP).is_some();
        let keep = explained(
            size_in(
                r,
                MALLOC_KEEP,
                MALLOC_KEEP_DEFAULT as usize,
                0,
                MALLOC_KEEP_MAX as usize,
            ),
            MALLOC_KEEP_RULE,
        )? as u64;
        if keep > 0 && keep < MALLOC_KEEP_MIN {
            let v = r.peek(MALLOC_KEEP).unwrap_or_default();
            return Err(EnvError::new(MALLOC_KEEP, &v, MALLOC_KEEP_RULE).into());
        }
        // Every one is read (and so shown by GASNET_VERBOSEENV), set or not.
        let glibc_tuned = GLIBC_MALLOC_VARS.iter().fold(false, |tuned, &v| {
            let set = r
                .opt_string(v)
                .is_some_and(|x| v != "GLIBC_TUNABLES" || x.contains("glibc.malloc."));
            tuned | set
        });
        Ok(GeneralConfig {
            malloc_keep: explicit.then_some(keep),
            glibc_tuned,
            wait_mode,
            stats_file,
            quiet,
            verbose_env,
            fi_provider,
            set_universe_size,
            allow_untrusted_provider,
        })
    }

    /// The heap memory glibc is to keep (see [`GeneralConfig::malloc_keep`]):
    /// the variable's value; unset, 64 MiB, or 0 (nothing to set) when the
    /// user tuned glibc through its own variables.
    pub fn malloc_keep_bytes(&self) -> u64 {
        match (self.malloc_keep, self.glibc_tuned) {
            (Some(v), _) => v,
            (None, true) => 0,
            (None, false) => MALLOC_KEEP_DEFAULT,
        }
    }

    /// Whether to set `FI_UNIVERSE_SIZE`, given the provider profile's
    /// default for an unset `GASNET_OFI_SET_UNIVERSE_SIZE`.
    pub fn set_universe_size_or(&self, profile_default: bool) -> bool {
        self.set_universe_size.unwrap_or(profile_default)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<GeneralConfig, ConfigError> {
        GeneralConfig::from_env(&EnvReader::quiet(env))
    }

    #[test]
    fn defaults() {
        assert_eq!(read(&MapEnv::new()).unwrap(), GeneralConfig::default());
    }

    #[test]
    fn good_values() {
        let env = MapEnv::from([
            ("GASNET_QUIET", "1"),
            ("GASNET_VERBOSEENV", "yes"),
            ("FI_PROVIDER", "cxi"),
            ("GASNET_OFI_SET_UNIVERSE_SIZE", "0"),
            ("GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER", "true"),
        ]);
        let g = read(&env).unwrap();
        assert!(g.quiet && g.verbose_env && g.allow_untrusted_provider);
        assert_eq!(g.fi_provider.as_deref(), Some("cxi"));
        assert_eq!(g.set_universe_size, Some(false));
        assert!(!g.set_universe_size_or(true));
    }

    #[test]
    fn universe_size_unset_lets_the_profile_decide() {
        let g = read(&MapEnv::new()).unwrap();
        assert_eq!(g.set_universe_size, None);
        assert!(g.set_universe_size_or(true));
        assert!(!g.set_universe_size_or(false));
        let env = MapEnv::from([("GASNET_OFI_SET_UNIVERSE_SIZE", "on")]);
        assert!(read(&env).unwrap().set_universe_size_or(false));
    }

    #[test]
    fn bad_booleans() {
        for name in [
            "GASNET_QUIET",
            "GASNET_OFI_SET_UNIVERSE_SIZE",
            "GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER",
        ] {
            let env = MapEnv::from([(name, "2")]);
            assert_eq!(
                read(&env).unwrap_err().to_string(),
                format!(
                    "{name}=\"2\" is not accepted: expected a boolean: 1/0, yes/no, y/n, \
true/false or on/off"
                )
            );
        }
    }

    #[test]
    fn wait_mode() {
        assert_eq!(
            read(&MapEnv::new()).unwrap().wait_mode,
            WaitModeSetting::Auto
        );
        for (v, want) in [
            ("spin", WaitModeSetting::Spin),
            ("YIELD", WaitModeSetting::Yield),
            (" spin ", WaitModeSetting::Spin),
            ("auto", WaitModeSetting::Auto),
        ] {
            let env = MapEnv::from([("GASNET_WAIT_MODE", v)]);
            assert_eq!(read(&env).unwrap().wait_mode, want);
        }
        let env = MapEnv::from([("GASNET_WAIT_MODE", "block")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_WAIT_MODE=\"block\" is not accepted: expected spin, yield or auto"
        );
    }

    #[test]
    fn malloc_keep() {
        let g = read(&MapEnv::new()).unwrap();
        assert_eq!(g.malloc_keep, None);
        assert_eq!(g.malloc_keep_bytes(), 64 << 20);
        for (v, want) in [
            ("0", 0),
            ("128K", 128 << 10),
            ("16M", 16 << 20),
            ("2047M", 2047 << 20),
        ] {
            let env = MapEnv::from([("GASNET_OFI_MALLOC_KEEP", v)]);
            assert_eq!(read(&env).unwrap().malloc_keep_bytes(), want, "{v}");
        }
        // The user's own glibc settings win over the default, not over
        // an explicit value.
        for (var, val, want) in [
            ("MALLOC_TRIM_THRESHOLD_", "1000000", 0),
            ("MALLOC_MMAP_MAX_", "0", 0),
            ("GLIBC_TUNABLES", "glibc.malloc.top_pad=0", 0),
            ("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 64 << 20),
        ] {
            let env = MapEnv::from([(var, val)]);
            assert_eq!(read(&env).unwrap().malloc_keep_bytes(), want, "{var}");
            let env = MapEnv::from([(var, val), ("GASNET_OFI_MALLOC_KEEP", "1M")]);
            assert_eq!(read(&env).unwrap().malloc_keep_bytes(), 1 << 20, "{var}");
        }
        let env = MapEnv::from([("GASNET_OFI_MALLOC_KEEP", "2G")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_MALLOC_KEEP=\"2G\" is not accepted: expected 0 (leave glibc alone) or a \
size from 128K to 2147483647 bytes (a number with an optional K, M, G or T suffix; glibc's own \
thresholds are 128K: less would return memory sooner)"
        );
        let env = MapEnv::from([("GASNET_OFI_MALLOC_KEEP", "16K")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_MALLOC_KEEP=\"16K\" is not accepted: expected 0 (leave glibc alone) \
or a size from 128K to 2147483647 bytes (a number with an optional K, M, G or T suffix; glibc's \
own thresholds are 128K: less would return memory sooner)"
        );
        let env = MapEnv::from([("GASNET_OFI_MALLOC_KEEP", "lots")]);
        let e = read(&env).unwrap_err().to_string();
        assert!(
            e.starts_with("GASNET_OFI_MALLOC_KEEP=\"lots\" is not accepted: expected 0 (leave"),
            "{e}"
        );
    }

    #[test]
    fn malformed_verboseenv_counts_as_on() {
        let env = MapEnv::from([("GASNET_VERBOSEENV", "loud")]);
        assert!(read(&env).unwrap().verbose_env);
    }
}
