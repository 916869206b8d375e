//! The shared-memory path between ranks of one host (GASNet's PSHM):
//! `GASNET_SUPERNODE_MAXSIZE`, `GASNET_OFI_PSHM_RING_SIZE` and
//! `GASNET_OFI_PSHM_LANES`.

use super::read::{count_in, explained};
use super::ConfigError;
use gex_env::{EnvError, EnvReader};

/// `GASNET_SUPERNODE_MAXSIZE`.
pub const SUPERNODE_MAXSIZE: &str = "GASNET_SUPERNODE_MAXSIZE";
/// `GASNET_OFI_PSHM_RING_SIZE`.
pub const PSHM_RING_SIZE: &str = "GASNET_OFI_PSHM_RING_SIZE";

/// `GASNET_OFI_PSHM_LANES`.
pub const PSHM_LANES: &str = "GASNET_OFI_PSHM_LANES";

/// Default data bytes of one AM ring (per sender, receiver and side).
pub const RING_SIZE_DEFAULT: usize = 64 * 1024;
/// Largest accepted ring size.
pub const RING_SIZE_MAX: usize = 1 << 30;

/// Shared-memory settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PshmConfig {
    /// `GASNET_SUPERNODE_MAXSIZE`: most ranks joined into one supernode
    /// (ranks of a host that map each other's segments and exchange AMs
    /// through shared memory). 0 (the default): all ranks of a host; 1: the
    /// shared-memory path is off; N: a host's ranks form groups of N in
    /// rank order.
    pub supernode_maxsize: usize,
    /// `GASNET_OFI_PSHM_RING_SIZE`: data bytes of each AM ring (one per
    /// sending rank, receiving rank and request/reply side). `None`: 64 KiB,
    /// or twice the largest message when that is more. Rounded up to a
    /// power of two.
    pub ring_size: Option<usize>,
    /// `GASNET_OFI_PSHM_RING_SIZE` as written, for messages.
    ring_size_text: Option<String>,
    /// `GASNET_OFI_PSHM_LANES`: whether a client's Short requests to a
    /// supernode peer may go through the pair's lane (one request at a
    /// time, answered in place) instead of the rings. On by default; used
    /// in single-threaded mode only, and only where every member of the
    /// supernode has it on.
    pub lanes: bool,
}

impl Default for PshmConfig {
    fn default() -> Self {
        PshmConfig {
            supernode_maxsize: 0,
            ring_size: None,
            ring_size_text: None,
            lanes: true,
        }
    }
}

impl PshmConfig {
    /// Read the variables.
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        let supernode_maxsize = count_in(r, SUPERNODE_MAXSIZE, 0, 0, u32::MAX as usize)?;
        // The minimum (twice the largest Active Message) is checked once
        // the AM sizes are known; a refusal here states both bounds.
        let rule = "a size from twice the largest Active Message to 1G (a number with an \
                    optional K, M, G or T suffix)";
        let ring_size = match explained(r.opt_size(PSHM_RING_SIZE, 1), rule)? {
            None => None,
            Some(n) if n > RING_SIZE_MAX as u64 => {
                let v = r.peek(PSHM_RING_SIZE).unwrap_or_default();
                return Err(EnvError::new(PSHM_RING_SIZE, &v, rule).into());
            }
            Some(n) => Some(n as usize),
        };
        Ok(PshmConfig {
            supernode_maxsize,
            ring_size,
            ring_size_text: r.peek(PSHM_RING_SIZE),
            lanes: r.bool(PSHM_LANES, true)?,
        })
    }

    /// Whether the shared-memory path may be used at all.
    pub fn enabled(&self) -> bool {
        self.supernode_maxsize != 1
    }

    /// The ring data size for messages of at most `largest` bytes, of
    /// which a ring must hold at least `min` bytes (two of the largest
    /// records with their length words and a terminator): the setting
    /// rounded up to a power of two, refused when below `min`.
    pub fn ring_bytes(&self, largest: usize, min: usize) -> Result<usize, ConfigError> {
        match self.ring_size {
            None => Ok(RING_SIZE_DEFAULT.max(min).next_power_of_two()),
            Some(n) if n < min => Err(EnvError::new(
                PSHM_RING_SIZE,
                self.ring_size_text.as_deref().unwrap_or(&n.to_string()),
                format!(
                    "a size of at least {min} bytes (twice the largest Active Message, \
{largest} bytes, with length words)"
                ),
            )
            .into()),
            Some(n) => Ok(n.next_power_of_two()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<PshmConfig, ConfigError> {
        PshmConfig::from_env(&EnvReader::quiet(env))
    }

    #[test]
    fn defaults_and_values() {
        let c = read(&MapEnv::new()).unwrap();
        assert_eq!(c, PshmConfig::default());
        assert!(c.enabled());
        assert_eq!(c.ring_bytes(8256, 16536).unwrap(), 65536);
        assert_eq!(c.ring_bytes(40000, 80024).unwrap(), 131072);
        let env = MapEnv::from([
            ("GASNET_SUPERNODE_MAXSIZE", "1"),
            ("GASNET_OFI_PSHM_RING_SIZE", "100K"),
        ]);
        let c = read(&env).unwrap();
        assert!(!c.enabled());
        assert!(c.lanes);
        assert_eq!(c.ring_bytes(8256, 16536).unwrap(), 131072);
        let c = read(&MapEnv::from([("GASNET_OFI_PSHM_LANES", "0")])).unwrap();
        assert!(!c.lanes);
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let env = MapEnv::from([("GASNET_SUPERNODE_MAXSIZE", "-1")]);
        assert_eq!(read(&env).unwrap_err().var(), "GASNET_SUPERNODE_MAXSIZE");
        let env = MapEnv::from([("GASNET_OFI_PSHM_LANES", "sometimes")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_PSHM_LANES=\"sometimes\" is not accepted: expected a boolean: 1/0, yes/no, \
y/n, true/false or on/off"
        );
        let env = MapEnv::from([("GASNET_OFI_PSHM_RING_SIZE", "2G")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_PSHM_RING_SIZE=\"2G\" is not accepted: expected a size from twice the \
largest Active Message to 1G (a number with an optional K, M, G or T suffix)"
        );
        let env = MapEnv::from([("GASNET_OFI_PSHM_RING_SIZE", "4K")]);
        assert_eq!(
            read(&env)
                .unwrap()
                .ring_bytes(8256, 16536)
                .unwrap_err()
                .to_string(),
            "GASNET_OFI_PSHM_RING_SIZE=\"4K\" is not accepted: expected a size of at least \
16536 bytes (twice the largest Active Message, 8256 bytes, with length words)"
        );
    }
}
