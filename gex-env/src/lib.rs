//! Typed reading of the job's environment variables.
//!
//! Every `GASNET_*` and `FI_*` variable the conduit, the spawner and the
//! launcher read goes through an [`EnvReader`]. The reader
//! * treats an empty value as unset (the GASNet convention),
//! * parses sizes (`64K`, `1M`, `2G`, `1.5M`), booleans (`1/0`, `yes/no`,
//!   `true/false`, `on/off`, `y/n`), integers and fractions,
//! * returns one [`EnvError`] whose text names the variable, the value and
//!   what is accepted, and
//! * records every variable read, its value and whether the default was used,
//!   which is what `GASNET_VERBOSEENV=1` prints.
//!
//! The source of the variables is a trait ([`EnvSource`]) so that tests can
//! read from a map instead of the process environment.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

mod exit_timeout;
pub mod line;
mod size;
pub use exit_timeout::{
    ExitTimeout, EXITTIMEOUT_FACTOR_DEFAULT, EXITTIMEOUT_MAX_DEFAULT, EXITTIMEOUT_MIN_DEFAULT,
};
pub use size::{format_size, parse_size};

/// Where variables come from.
pub trait EnvSource: Send + Sync {
    /// The raw value of `name`, `None` when unset.
    fn var(&self, name: &str) -> Option<String>;
    /// Every variable whose name starts with `prefix`, sorted by name.
    fn vars_with_prefix(&self, prefix: &str) -> Vec<(String, String)>;
}

/// The process environment.
#[derive(Debug, Default, Clone, Copy)]
pub struct ProcessEnv;

impl EnvSource for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }
    fn vars_with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = std::env::vars_os()
            .filter_map(|(k, val)| {
                let k = k.to_string_lossy().into_owned();
                k.starts_with(prefix)
                    .then(|| (k, val.to_string_lossy().into_owned()))
            })
            .collect();
        v.sort();
        v
    }
}

/// A fixed set of variables (for tests and for environments received from a
/// launcher).
#[derive(Debug, Default, Clone)]
pub struct MapEnv(pub BTreeMap<String, String>);

impl MapEnv {
    /// An empty environment.
    pub fn new() -> Self {
        Self::default()
    }
    /// Builder: add one variable.
    pub fn with(mut self, name: &str, value: &str) -> Self {
        self.0.insert(name.to_string(), value.to_string());
        self
    }
}

impl<const N: usize> From<[(&str, &str); N]> for MapEnv {
    fn from(pairs: [(&str, &str); N]) -> Self {
        MapEnv(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }
}

impl EnvSource for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
    fn vars_with_prefix(&self, prefix: &str) -> Vec<(String, String)> {
        self.0
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

/// A bad value in one variable. Its `Display` is the one line a user sees:
/// `GASNET_OFI_MAX_MEDIUM="100" is not accepted: expected a size from 512 bytes to 1G`,
/// followed by ` [reason]` when the value could not be parsed at all
/// (`expected a size ... ["2Q" is not a number]`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}={value:?} is not accepted: expected {expected}{}", Bracketed(reason.as_deref()))]
pub struct EnvError {
    /// The variable's name.
    pub var: String,
    /// The value as found in the environment.
    pub value: String,
    /// What is accepted, in words.
    pub expected: String,
    /// Why the value could not be parsed, when a parser said so; kept apart
    /// from `expected` so that a caller stating a wider rule
    /// (`conduit`'s `explained`) replaces one and keeps the other.
    pub reason: Option<String>,
}

impl EnvError {
    /// Build an error for `var` holding `value`.
    pub fn new(var: &str, value: &str, expected: impl Into<String>) -> Self {
        EnvError {
            var: var.to_string(),
            value: value.to_string(),
            expected: expected.into(),
            reason: None,
        }
    }

    /// The same error with the parser's `reason` attached.
    pub fn because(mut self, reason: impl Into<String>) -> Self {
        self.reason = Some(reason.into());
        self
    }
}

/// ` [reason]` when there is one, nothing otherwise.
struct Bracketed<'a>(Option<&'a str>);

impl std::fmt::Display for Bracketed<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some(r) => write!(f, " [{r}]"),
            None => Ok(()),
        }
    }
}

/// One variable that was read, for `GASNET_VERBOSEENV`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvRead {
    /// Variable name.
    pub name: String,
    /// The value in effect (the default's text when defaulted).
    pub value: String,
    /// True when the variable was unset (or empty) and the default applied.
    pub defaulted: bool,
}

impl fmt::Display for EnvRead {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ENV parameter: {} = {}{}",
            self.name,
            if self.value.is_empty() {
                "*empty*"
            } else {
                &self.value
            },
            if self.defaulted { "   (default)" } else { "" }
        )
    }
}

/// Reads typed values and records each read.
pub struct EnvReader<'a> {
    src: &'a dyn EnvSource,
    reads: Mutex<Vec<EnvRead>>,
    echo: bool,
}

impl fmt::Debug for EnvReader<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnvReader")
            .field("echo", &self.echo)
            .finish()
    }
}

/// Accepted spellings of a boolean, for error messages.
pub const BOOL_ACCEPTED: &str = "a boolean: 1/0, yes/no, y/n, true/false or on/off";

impl<'a> EnvReader<'a> {
    /// A reader over `src`. It reads `GASNET_VERBOSEENV` itself; when that is
    /// true every later read is also printed to stderr as it happens.
    pub fn new(src: &'a dyn EnvSource) -> Self {
        let mut r = EnvReader {
            src,
            reads: Mutex::new(Vec::new()),
            echo: false,
        };
        // A malformed GASNET_VERBOSEENV must not stop anything: treat it as on,
        // which shows the user what was read.
        r.echo = r.bool("GASNET_VERBOSEENV", false).unwrap_or(true);
        r
    }

    /// A reader over `src` that never prints (the record is still kept).
    pub fn quiet(src: &'a dyn EnvSource) -> Self {
        EnvReader {
            src,
            reads: Mutex::new(Vec::new()),
            echo: false,
        }
    }

    /// Whether `GASNET_VERBOSEENV` asked for every read to be printed.
    pub fn verbose(&self) -> bool {
        self.echo
    }

    /// The underlying source.
    pub fn source(&self) -> &'a dyn EnvSource {
        self.src
    }

    /// Every read so far, in order, each variable once (the first read).
    pub fn reads(&self) -> Vec<EnvRead> {
        self.reads.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Note a read in the record (and print it when verbose).
    pub fn record(&self, name: &str, value: &str, defaulted: bool) {
        let read = EnvRead {
            name: name.to_string(),
            value: value.to_string(),
            defaulted,
        };
        if let Ok(mut reads) = self.reads.lock() {
            if reads.iter().any(|r| r.name == name) {
                return;
            }
            if self.echo {
                crate::eprintln_whole!("{read}");
            }
            reads.push(read);
        }
    }

    /// The raw value, `None` when unset or empty. Not recorded: use it for
    /// variables that are only looked at, not interpreted, and record them
    /// with [`EnvReader::record`] yourself.
    pub fn peek(&self, name: &str) -> Option<String> {
        self.src.var(name).filter(|v| !v.is_empty())
    }

    /// True when the variable is present, even with an empty value.
    pub fn is_present(&self, name: &str) -> bool {
        self.src.var(name).is_some()
    }

    /// An optional string (empty counts as unset).
    pub fn opt_string(&self, name: &str) -> Option<String> {
        match self.peek(name) {
            Some(v) => {
                self.record(name, &v, false);
                Some(v)
            }
            None => {
                self.record(name, "", true);
                None
            }
        }
    }

    /// A string with a default.
    pub fn string(&self, name: &str, default: &str) -> String {
        match self.peek(name) {
            Some(v) => {
                self.record(name, &v, false);
                v
            }
            None => {
                self.record(name, default, true);
                default.to_string()
            }
        }
    }

    /// A boolean with a default.
    pub fn bool(&self, name: &str, default: bool) -> Result<bool, EnvError> {
        match self.peek(name) {
            None => {
                self.record(name, if default { "1" } else { "0" }, true);
                Ok(default)
            }
            Some(v) => {
                self.record(name, &v, false);
                parse_bool(&v).ok_or_else(|| EnvError::new(name, &v, BOOL_ACCEPTED))
            }
        }
    }

    /// An unsigned integer in `min..=max` with a default. Only plain decimal
    /// digits are accepted.
    pub fn uint(&self, name: &str, default: u64, min: u64, max: u64) -> Result<u64, EnvError> {
        let expected = || {
            if max == u64::MAX {
                format!("a whole number of at least {min}")
            } else {
                format!("a whole number from {min} to {max}")
            }
        };
        match self.peek(name) {
            None => {
                self.record(name, &default.to_string(), true);
                Ok(default)
            }
            Some(v) => {
                self.record(name, &v, false);
                let n: u64 = v
                    .trim()
                    .parse()
                    .map_err(|_| EnvError::new(name, &v, expected()))?;
                if n < min || n > max {
                    return Err(EnvError::new(name, &v, expected()));
                }
                Ok(n)
            }
        }
    }

    /// An optional size in bytes (`4096`, `64K`, `1M`, `1.5G`), at least `min`.
    pub fn opt_size(&self, name: &str, min: u64) -> Result<Option<u64>, EnvError> {
        match self.peek(name) {
            None => {
                self.record(name, "", true);
                Ok(None)
            }
            Some(v) => {
                self.record(name, &v, false);
                let n = parse_size(&v)
                    .map_err(|why| EnvError::new(name, &v, size_expected(min)).because(why))?;
                if n < min {
                    return Err(EnvError::new(name, &v, size_expected(min)));
                }
                Ok(Some(n))
            }
        }
    }

    /// A size in bytes with a default, at least `min`.
    pub fn size(&self, name: &str, default: u64, min: u64) -> Result<u64, EnvError> {
        if self.peek(name).is_none() {
            self.record(name, &default.to_string(), true);
            return Ok(default);
        }
        Ok(self.opt_size(name, min)?.unwrap_or(default))
    }

    /// A non-negative decimal number (seconds, fractions) with a default.
    pub fn float(&self, name: &str, default: f64, min: f64, max: f64) -> Result<f64, EnvError> {
        match self.peek(name) {
            None => {
                self.record(name, &default.to_string(), true);
                Ok(default)
            }
            Some(v) => {
                self.record(name, &v, false);
                let n: f64 = v.trim().parse().map_err(|_| {
                    EnvError::new(name, &v, format!("a number from {min} to {max}"))
                })?;
                if !n.is_finite() || n < min || n > max {
                    return Err(EnvError::new(
                        name,
                        &v,
                        format!("a number from {min} to {max}"),
                    ));
                }
                Ok(n)
            }
        }
    }
}

fn size_expected(min: u64) -> String {
    if min > 0 {
        let unit = if min == 1 { "byte" } else { "bytes" };
        format!("a size of at least {min} {unit} (a number with an optional K, M, G or T suffix)")
    } else {
        "a size in bytes (a number with an optional K, M, G or T suffix)".to_string()
    }
}

/// Parse a boolean in any of the accepted spellings (case-insensitive).
pub fn parse_bool(s: &str) -> Option<bool> {
    match s.trim().to_ascii_lowercase().as_str() {
        "1" | "y" | "yes" | "true" | "on" => Some(true),
        "0" | "n" | "no" | "false" | "off" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_counts_as_unset() {
        let env = MapEnv::from([("EMPTY_VAR", "")]);
        let r = EnvReader::quiet(&env);
        assert_eq!(r.size("EMPTY_VAR", 7, 0).unwrap(), 7);
        assert!(r.reads()[0].defaulted);
        assert!(r.is_present("EMPTY_VAR"));
    }

    #[test]
    fn booleans() {
        let env = MapEnv::from([("A", "Yes"), ("B", "off"), ("C", "maybe")]);
        let r = EnvReader::quiet(&env);
        assert!(r.bool("A", false).unwrap());
        assert!(!r.bool("B", true).unwrap());
        assert_eq!(
            r.bool("C", true).unwrap_err().to_string(),
            "C=\"maybe\" is not accepted: expected a boolean: 1/0, yes/no, y/n, true/false or on/off"
        );
        assert!(r.bool("D", true).unwrap());
    }

    #[test]
    fn uint_range_errors_name_the_range() {
        let env = MapEnv::from([("N", "1"), ("M", "abc"), ("K", "5")]);
        let r = EnvReader::quiet(&env);
        assert_eq!(
            r.uint("N", 8, 2, u64::MAX).unwrap_err().to_string(),
            "N=\"1\" is not accepted: expected a whole number of at least 2"
        );
        assert_eq!(
            r.uint("M", 8, 0, 10).unwrap_err().to_string(),
            "M=\"abc\" is not accepted: expected a whole number from 0 to 10"
        );
        assert_eq!(r.uint("K", 8, 0, 10).unwrap(), 5);
    }

    #[test]
    fn sizes_with_minimum() {
        let env = MapEnv::from([("S", "16k"), ("T", "100"), ("U", "12Q")]);
        let r = EnvReader::quiet(&env);
        assert_eq!(r.size("S", 0, 512).unwrap(), 16384);
        assert_eq!(
            r.size("T", 0, 512).unwrap_err().to_string(),
            "T=\"100\" is not accepted: expected a size of at least 512 bytes (a number with an optional K, M, G or T suffix)"
        );
        assert!(r
            .size("U", 0, 0)
            .unwrap_err()
            .to_string()
            .starts_with("U=\"12Q\" is not accepted: expected a size in bytes"));
    }

    #[test]
    fn record_keeps_first_read_and_default_flag() {
        let env = MapEnv::from([("A", "3")]);
        let r = EnvReader::quiet(&env);
        r.uint("A", 1, 0, 9).unwrap();
        r.uint("A", 1, 0, 9).unwrap();
        r.string("B", "dflt");
        let reads = r.reads();
        assert_eq!(reads.len(), 2);
        assert_eq!(reads[0].to_string(), "ENV parameter: A = 3");
        assert_eq!(reads[1].to_string(), "ENV parameter: B = dflt   (default)");
    }

    #[test]
    fn floats() {
        let env = MapEnv::from([("F", "0.5"), ("G", "-1"), ("H", "nan")]);
        let r = EnvReader::quiet(&env);
        assert_eq!(r.float("F", 1.0, 0.0, 10.0).unwrap(), 0.5);
        assert!(r.float("G", 1.0, 0.0, 10.0).is_err());
        assert!(r.float("H", 1.0, 0.0, 10.0).is_err());
    }
}
