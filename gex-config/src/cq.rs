//! Completion-queue settings.

use super::read::count_in;
use super::ConfigError;
use gex_env::EnvReader;

/// `GASNET_OFI_TX_CQ_SIZE`.
pub const TX_CQ_SIZE: &str = "GASNET_OFI_TX_CQ_SIZE";
/// `GASNET_OFI_RX_CQ_SIZE`.
pub const RX_CQ_SIZE: &str = "GASNET_OFI_RX_CQ_SIZE";
/// `GASNET_OFI_NUM_COMPLETIONS`.
pub const NUM_COMPLETIONS: &str = "GASNET_OFI_NUM_COMPLETIONS";

/// Default of `GASNET_OFI_NUM_COMPLETIONS` (configure
/// `--with-ofi-num-completions`).
pub const NUM_COMPLETIONS_DEFAULT: usize = 64;

/// Deepest `GASNET_OFI_TX_CQ_SIZE` / `GASNET_OFI_RX_CQ_SIZE`: 4M entries
/// (about 200 MB of queue at libfabric's largest entry format); deeper
/// queues only fail later in `fi_cq_open` with "Cannot allocate memory".
pub const CQ_SIZE_MAX: usize = 1 << 22;

/// Most completions read per poll (`GASNET_OFI_NUM_COMPLETIONS`): the
/// batch the conduit reads into on the stack.
pub const NUM_COMPLETIONS_MAX: usize = 64;

/// Completion-queue settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CqConfig {
    /// `GASNET_OFI_TX_CQ_SIZE`: transmit CQ depth; 0 lets the provider choose.
    pub tx_cq_size: usize,
    /// `GASNET_OFI_RX_CQ_SIZE`: receive CQ depth; 0 lets the provider choose.
    pub rx_cq_size: usize,
    /// `GASNET_OFI_NUM_COMPLETIONS`: most completions read per poll of a
    /// queue. From 1 to 64.
    pub num_completions: usize,
}

impl CqConfig {
    /// Read the CQ variables.
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        Ok(CqConfig {
            tx_cq_size: count_in(r, TX_CQ_SIZE, 0, 0, CQ_SIZE_MAX)?,
            rx_cq_size: count_in(r, RX_CQ_SIZE, 0, 0, CQ_SIZE_MAX)?,
            num_completions: count_in(
                r,
                NUM_COMPLETIONS,
                NUM_COMPLETIONS_DEFAULT,
                1,
                NUM_COMPLETIONS_MAX,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<CqConfig, ConfigError> {
        CqConfig::from_env(&EnvReader::quiet(env))
    }

    #[test]
    fn defaults() {
        assert_eq!(
            read(&MapEnv::new()).unwrap(),
            CqConfig {
                tx_cq_size: 0,
                rx_cq_size: 0,
                num_completions: 64
            }
        );
    }

    #[test]
    fn good_values() {
        let env = MapEnv::from([
            ("GASNET_OFI_TX_CQ_SIZE", "4096"),
            ("GASNET_OFI_RX_CQ_SIZE", "2048"),
            ("GASNET_OFI_NUM_COMPLETIONS", "1"),
        ]);
        let c = read(&env).unwrap();
        assert_eq!(
            (c.tx_cq_size, c.rx_cq_size, c.num_completions),
            (4096, 2048, 1)
        );
    }

    #[test]
    fn bad_values() {
        for (name, value, expected) in [
            (
                "GASNET_OFI_TX_CQ_SIZE",
                "-1",
                "a whole number from 0 to 4194304",
            ),
            (
                "GASNET_OFI_RX_CQ_SIZE",
                "1K",
                "a whole number from 0 to 4194304",
            ),
            (
                "GASNET_OFI_RX_CQ_SIZE",
                "99999999999",
                "a whole number from 0 to 4194304",
            ),
            (
                "GASNET_OFI_NUM_COMPLETIONS",
                "0",
                "a whole number from 1 to 64",
            ),
            (
                "GASNET_OFI_NUM_COMPLETIONS",
                "65",
                "a whole number from 1 to 64",
            ),
        ] {
            let env = MapEnv::from([(name, value)]);
            assert_eq!(
                read(&env).unwrap_err().to_string(),
                format!("{name}=\"{value}\" is not accepted: expected {expected}")
            );
        }
    }
}
