//! `GASNET_EXITTIMEOUT` and its `_MAX` / `_MIN` / `_FACTOR` companions.
//!
//! The time a job may take to coordinate its exit (and that the launcher
//! waits before tearing a job down after one rank ended) is
//! `GASNET_EXITTIMEOUT` when set, otherwise `min(MAX, MIN + N * FACTOR)`,
//! with the ofi-conduit defaults MAX = 480 s, MIN = 10 s, FACTOR = 0.25 s.

use crate::{EnvError, EnvReader};
use std::time::Duration;

/// Default `GASNET_EXITTIMEOUT_MAX`, seconds.
pub const EXITTIMEOUT_MAX_DEFAULT: f64 = 480.0;
/// Default `GASNET_EXITTIMEOUT_MIN`, seconds.
pub const EXITTIMEOUT_MIN_DEFAULT: f64 = 10.0;
/// Default `GASNET_EXITTIMEOUT_FACTOR`, seconds per process.
pub const EXITTIMEOUT_FACTOR_DEFAULT: f64 = 0.25;

/// The exit-timeout settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExitTimeout {
    /// `GASNET_EXITTIMEOUT`: an explicit timeout in seconds, when set.
    pub explicit: Option<f64>,
    /// `GASNET_EXITTIMEOUT_MAX`, seconds.
    pub max: f64,
    /// `GASNET_EXITTIMEOUT_MIN`, seconds.
    pub min: f64,
    /// `GASNET_EXITTIMEOUT_FACTOR`, seconds per process.
    pub factor: f64,
}

impl Default for ExitTimeout {
    fn default() -> Self {
        ExitTimeout {
            explicit: None,
            max: EXITTIMEOUT_MAX_DEFAULT,
            min: EXITTIMEOUT_MIN_DEFAULT,
            factor: EXITTIMEOUT_FACTOR_DEFAULT,
        }
    }
}

/// Largest accepted value of any of the four variables (one day).
const LIMIT: f64 = 86400.0;

impl ExitTimeout {
    /// Read the four variables. `GASNET_EXITTIMEOUT_MIN` may not exceed
    /// `GASNET_EXITTIMEOUT_MAX`.
    pub fn from_env(env: &EnvReader<'_>) -> Result<Self, EnvError> {
        Self::read(env, None)
    }

    /// As [`from_env`](Self::from_env), for a job of `nranks` processes:
    /// an unset `GASNET_EXITTIMEOUT` is recorded (and shown by
    /// `GASNET_VERBOSEENV`) as the timeout computed for the job.
    pub fn from_env_for_job(env: &EnvReader<'_>, nranks: usize) -> Result<Self, EnvError> {
        Self::read(env, Some(nranks))
    }

    fn read(env: &EnvReader<'_>, nranks: Option<usize>) -> Result<Self, EnvError> {
        let explicit = match env.peek("GASNET_EXITTIMEOUT") {
            Some(_) => Some(env.float("GASNET_EXITTIMEOUT", 0.0, 0.001, LIMIT)?),
            None => {
                // Recorded first, in the variables' order: the job's
                // timeout from the other three, read here by a reader that
                // records nothing (their errors are reported below).
                let shown = nranks
                    .and_then(|n| {
                        let t = Self::read(&EnvReader::quiet(env.source()), None).ok()?;
                        Some(format!("{:.1}", t.for_job(n).as_secs_f64()))
                    })
                    .unwrap_or_default();
                env.record("GASNET_EXITTIMEOUT", &shown, true);
                None
            }
        };
        let max = env.float(
            "GASNET_EXITTIMEOUT_MAX",
            EXITTIMEOUT_MAX_DEFAULT,
            0.001,
            LIMIT,
        )?;
        let min = env.float(
            "GASNET_EXITTIMEOUT_MIN",
            EXITTIMEOUT_MIN_DEFAULT,
            0.0,
            LIMIT,
        )?;
        let factor = env.float(
            "GASNET_EXITTIMEOUT_FACTOR",
            EXITTIMEOUT_FACTOR_DEFAULT,
            0.0,
            LIMIT,
        )?;
        if min > max {
            // Blame the one the user set; when both are set, MIN (and say
            // MAX was set too).
            let set_min = env.peek("GASNET_EXITTIMEOUT_MIN");
            return Err(match (set_min, env.peek("GASNET_EXITTIMEOUT_MAX")) {
                (None, Some(v)) => EnvError::new(
                    "GASNET_EXITTIMEOUT_MAX",
                    &v,
                    format!(
                        "a number of seconds no smaller than GASNET_EXITTIMEOUT_MIN \
                         ({min}, its default; set GASNET_EXITTIMEOUT_MIN lower too)"
                    ),
                ),
                (Some(v), Some(_)) => EnvError::new(
                    "GASNET_EXITTIMEOUT_MIN",
                    &v,
                    format!(
                        "a number of seconds no larger than GASNET_EXITTIMEOUT_MAX \
                         ({max}, as set)"
                    ),
                ),
                (v, None) => EnvError::new(
                    "GASNET_EXITTIMEOUT_MIN",
                    &v.unwrap_or_else(|| min.to_string()),
                    format!(
                        "a number of seconds no larger than GASNET_EXITTIMEOUT_MAX \
                         ({max}, its default)"
                    ),
                ),
            });
        }
        Ok(ExitTimeout {
            explicit,
            max,
            min,
            factor,
        })
    }

    /// The timeout for a job of `nranks` processes.
    pub fn for_job(&self, nranks: usize) -> Duration {
        let secs = match self.explicit {
            Some(s) => s,
            None => self.max.min(self.min + nranks as f64 * self.factor),
        };
        Duration::from_secs_f64(secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MapEnv;

    #[test]
    fn default_rule() {
        let env = MapEnv::new();
        let t = ExitTimeout::from_env(&EnvReader::quiet(&env)).unwrap();
        assert_eq!(t.for_job(4), Duration::from_secs(11));
        assert_eq!(t.for_job(100_000), Duration::from_secs(480));
    }

    #[test]
    fn the_computed_timeout_is_what_verboseenv_shows() {
        let shown = |env: &MapEnv, n: Option<usize>| {
            let r = EnvReader::quiet(env);
            match n {
                Some(n) => ExitTimeout::from_env_for_job(&r, n).unwrap(),
                None => ExitTimeout::from_env(&r).unwrap(),
            };
            let read = r
                .reads()
                .into_iter()
                .find(|x| x.name == "GASNET_EXITTIMEOUT");
            read.map(|x| (x.value, x.defaulted)).unwrap()
        };
        let unset = MapEnv::new();
        assert_eq!(shown(&unset, Some(6)), ("11.5".to_string(), true));
        assert_eq!(shown(&unset, None), (String::new(), true));
        let set = MapEnv::from([("GASNET_EXITTIMEOUT", "2.5")]);
        assert_eq!(shown(&set, Some(6)), ("2.5".to_string(), false));
    }

    #[test]
    fn explicit_wins() {
        let env = MapEnv::from([("GASNET_EXITTIMEOUT", "2.5")]);
        let t = ExitTimeout::from_env(&EnvReader::quiet(&env)).unwrap();
        assert_eq!(t.for_job(100_000), Duration::from_millis(2500));
    }

    #[test]
    fn min_above_max_is_refused() {
        let env = MapEnv::from([("GASNET_EXITTIMEOUT_MIN", "500")]);
        let e = ExitTimeout::from_env(&EnvReader::quiet(&env)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "GASNET_EXITTIMEOUT_MIN=\"500\" is not accepted: expected a number of seconds no larger than GASNET_EXITTIMEOUT_MAX (480, its default)"
        );
    }

    #[test]
    fn max_below_the_default_min_blames_max() {
        let env = MapEnv::from([("GASNET_EXITTIMEOUT_MAX", "1.5")]);
        let e = ExitTimeout::from_env(&EnvReader::quiet(&env)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "GASNET_EXITTIMEOUT_MAX=\"1.5\" is not accepted: expected a number of seconds no smaller than GASNET_EXITTIMEOUT_MIN (10, its default; set GASNET_EXITTIMEOUT_MIN lower too)"
        );
    }

    #[test]
    fn both_set_and_crossed_blames_min() {
        let env = MapEnv::from([
            ("GASNET_EXITTIMEOUT_MAX", "5"),
            ("GASNET_EXITTIMEOUT_MIN", "7"),
        ]);
        let e = ExitTimeout::from_env(&EnvReader::quiet(&env)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "GASNET_EXITTIMEOUT_MIN=\"7\" is not accepted: expected a number of seconds no larger than GASNET_EXITTIMEOUT_MAX (5, as set)"
        );
        let env = MapEnv::from([
            ("GASNET_EXITTIMEOUT_MAX", "5"),
            ("GASNET_EXITTIMEOUT_MIN", "2"),
        ]);
        assert!(ExitTimeout::from_env(&EnvReader::quiet(&env)).is_ok());
    }

    #[test]
    fn bad_number() {
        let env = MapEnv::from([("GASNET_EXITTIMEOUT", "soon")]);
        let e = ExitTimeout::from_env(&EnvReader::quiet(&env)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "GASNET_EXITTIMEOUT=\"soon\" is not accepted: expected a number from 0.001 to 86400"
        );
    }
}
