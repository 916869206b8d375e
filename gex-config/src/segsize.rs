//! `GASNET_MAX_SEGSIZE`: the upper bound on a segment, absolute or as a
//! fraction of physical memory.

use super::ConfigError;
use gex_env::{format_size, parse_size, EnvError, EnvReader};
use std::fmt;

/// `GASNET_MAX_SEGSIZE`.
pub const MAX_SEGSIZE: &str = "GASNET_MAX_SEGSIZE";
/// Default of `GASNET_MAX_SEGSIZE`.
pub const MAX_SEGSIZE_DEFAULT: MaxSegsize = MaxSegsize::PerHost(0.85);
/// What `GASNET_MAX_SEGSIZE` accepts, for error messages.
pub const MAX_SEGSIZE_ACCEPTED: &str = "an absolute size (a number with an optional K, M, G or T \
suffix) or a fraction of physical memory above 0 and at most 1, per process (such as 0.5/P) \
or per host (such as 0.85/H)";

/// A segment size limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum MaxSegsize {
    /// An absolute number of bytes (`2G`).
    Bytes(u64),
    /// This fraction of the host's physical memory for each process (`0.5/P`).
    PerProcess(f64),
    /// This fraction of the host's physical memory, shared evenly by the
    /// processes on the host (`0.85/H`).
    PerHost(f64),
}

impl MaxSegsize {
    /// Parse `2G`, `0.5/P` or `0.85/H` (the `P`/`H` in any case). Fractions
    /// must be above 0 and at most 1; sizes above 0.
    pub fn parse(text: &str) -> Option<MaxSegsize> {
        let t = text.trim();
        if let Some((num, unit)) = t.rsplit_once('/') {
            let frac: f64 = num.trim().parse().ok()?;
            if !frac.is_finite() || frac <= 0.0 || frac > 1.0 {
                return None;
            }
            return match unit.trim() {
                "P" | "p" => Some(MaxSegsize::PerProcess(frac)),
                "H" | "h" => Some(MaxSegsize::PerHost(frac)),
                _ => None,
            };
        }
        match parse_size(t) {
            Ok(n) if n > 0 => Some(MaxSegsize::Bytes(n)),
            _ => None,
        }
    }

    /// The limit in bytes on a host with `phys_mem` bytes of physical memory
    /// running `procs_on_host` processes of the job (0 is taken as 1).
    pub fn limit_bytes(&self, phys_mem: u64, procs_on_host: usize) -> u64 {
        match *self {
            MaxSegsize::Bytes(n) => n,
            MaxSegsize::PerProcess(f) => (phys_mem as f64 * f) as u64,
            MaxSegsize::PerHost(f) => (phys_mem as f64 * f / procs_on_host.max(1) as f64) as u64,
        }
    }

    /// Read `GASNET_MAX_SEGSIZE` (default `0.85/H`).
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        match r.peek(MAX_SEGSIZE) {
            None => {
                r.record(MAX_SEGSIZE, &MAX_SEGSIZE_DEFAULT.to_string(), true);
                Ok(MAX_SEGSIZE_DEFAULT)
            }
            Some(v) => {
                r.record(MAX_SEGSIZE, &v, false);
                MaxSegsize::parse(&v).ok_or_else(|| {
                    let e = EnvError::new(MAX_SEGSIZE, &v, MAX_SEGSIZE_ACCEPTED);
                    // An absolute size that does not fit says why.
                    match parse_size(&v) {
                        Err(why) if !v.contains('/') && why.contains("too large") => {
                            e.because(why).into()
                        }
                        _ => e.into(),
                    }
                })
            }
        }
    }
}

impl Default for MaxSegsize {
    fn default() -> Self {
        MAX_SEGSIZE_DEFAULT
    }
}

impl fmt::Display for MaxSegsize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MaxSegsize::Bytes(n) => f.write_str(&format_size(*n)),
            MaxSegsize::PerProcess(x) => write!(f, "{x}/P"),
            MaxSegsize::PerHost(x) => write!(f, "{x}/H"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    const GIB: u64 = 1 << 30;

    fn read(value: &str) -> Result<MaxSegsize, ConfigError> {
        let env = MapEnv::from([("GASNET_MAX_SEGSIZE", value)]);
        MaxSegsize::from_env(&EnvReader::quiet(&env))
    }

    #[test]
    fn default_is_085_per_host() {
        let env = MapEnv::new();
        let r = EnvReader::quiet(&env);
        let m = MaxSegsize::from_env(&r).unwrap();
        assert_eq!(m, MaxSegsize::PerHost(0.85));
        assert_eq!(
            r.reads()[0].to_string(),
            "ENV parameter: GASNET_MAX_SEGSIZE = 0.85/H   (default)"
        );
        // 100 GiB shared by 4 processes.
        assert_eq!(
            m.limit_bytes(100 * GIB, 4),
            (100.0 * 0.85 / 4.0 * GIB as f64) as u64
        );
    }

    #[test]
    fn absolute_sizes() {
        assert_eq!(read("2G").unwrap(), MaxSegsize::Bytes(2 * GIB));
        assert_eq!(read("512M").unwrap(), MaxSegsize::Bytes(512 << 20));
        assert_eq!(read("64k").unwrap(), MaxSegsize::Bytes(65536));
        assert_eq!(read("4096").unwrap().limit_bytes(GIB, 8), 4096);
    }

    #[test]
    fn per_process_fraction() {
        let m = read("0.5/P").unwrap();
        assert_eq!(m, MaxSegsize::PerProcess(0.5));
        assert_eq!(m.limit_bytes(64 * GIB, 16), 32 * GIB);
        assert_eq!(read("1/p").unwrap(), MaxSegsize::PerProcess(1.0));
    }

    #[test]
    fn per_host_fraction() {
        let m = read("0.5/H").unwrap();
        assert_eq!(m.limit_bytes(64 * GIB, 16), 2 * GIB);
        assert_eq!(m.limit_bytes(64 * GIB, 0), 32 * GIB);
        assert_eq!(m.to_string(), "0.5/H");
    }

    #[test]
    fn bad_forms() {
        for bad in [
            "0/P", "-0.5/H", "1.5/H", "0.5/X", "0.5", "half/H", "/H", "0", "2Q", "nan/P",
        ] {
            assert_eq!(
                read(bad).unwrap_err().to_string(),
                format!(
                    "GASNET_MAX_SEGSIZE=\"{bad}\" is not accepted: expected an absolute size (a \
number with an optional K, M, G or T suffix) or a fraction of physical memory above 0 and at most 1, \
per process (such as 0.5/P) or per host (such as 0.85/H)"
                ),
                "{bad}"
            );
        }
    }

    #[test]
    fn too_large_says_so() {
        assert_eq!(
            read("99999999999G").unwrap_err().to_string(),
            "GASNET_MAX_SEGSIZE=\"99999999999G\" is not accepted: expected an absolute size (a \
number with an optional K, M, G or T suffix) or a fraction of physical memory above 0 and at most 1, \
per process (such as 0.5/P) or per host (such as 0.85/H) [99999999999G is too large]"
        );
    }
}
