//! The conduit's configuration: one typed [`Config`] read from the
//! `GASNET_*` and `FI_*` environment variables through a
//! [`gex_env::EnvReader`].
//!
//! * Every variable goes through the reader, defaulted ones included, so
//!   [`gex_env::EnvReader::reads`] (and `GASNET_VERBOSEENV=1`) lists each one
//!   with its value and whether the default applied.
//! * A bad value yields one [`ConfigError`] whose text is the single line
//!   `NAME="value" is not accepted: expected ...`. Rules between variables
//!   name the variable that must change and quote the other value.
//! * Facts that only the provider knows (inject sizes, the largest AM) are
//!   applied afterwards by pure functions: [`resolve_inject_limit`] and
//!   [`Config::check_receive_buff`].
//!
//! The crate has no libfabric in it (the conduit re-exports it as
//! `conduit::config`), so `gasnetrun-ofi` reads the same [`Config`] from
//! the job's environment before it starts a rank: a bad value is reported
//! once, by the launcher, instead of once by every rank.
//!
//! Spawner and launcher variables (`GASNET_SSH_*`, `GASNET_OFI_SPAWNER`,
//! `MPIRUN_CMD`, ...) are not read here. `docs/environment.md` documents every
//! variable; `conduit/tests/env_doc.rs` keeps it in step with the code.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod am;
pub mod cq;
pub mod device;
mod error;
#[macro_use]
pub mod extended;
pub mod general;
mod inject;
pub mod libfabric_vars;
mod node_list;
pub mod provider_list;
pub mod pshm;
mod read;
pub mod rma;
pub mod segsize;
pub mod tagged;

pub use am::{AmConfig, RecvBuffSize};
pub use cq::CqConfig;
pub use device::{DeviceConfig, DeviceType, HwlocType};
pub use error::ConfigError;
pub use extended::{AtomicsMode, ExtendedConfig};
pub use general::GeneralConfig;
pub use gex_env::ExitTimeout;
pub use inject::resolve_inject_limit;
pub use node_list::NodeList;
pub use provider_list::ProviderList;
pub use pshm::PshmConfig;
pub use read::{host_page_size, host_physical_memory};
pub use rma::RmaConfig;
pub use segsize::MaxSegsize;
pub use tagged::TaggedConfig;

use gex_env::EnvReader;

/// Exit-timeout variables, read by [`gex_env::ExitTimeout`].
pub const EXITTIMEOUT_VARIABLES: [&str; 4] = [
    "GASNET_EXITTIMEOUT",
    "GASNET_EXITTIMEOUT_MAX",
    "GASNET_EXITTIMEOUT_MIN",
    "GASNET_EXITTIMEOUT_FACTOR",
];

/// Everything the conduit takes from the environment.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Quiet/verbose switches, provider trust, universe size, `FI_PROVIDER`.
    pub general: GeneralConfig,
    /// Device selection and listing.
    pub device: DeviceConfig,
    /// Active Messages: Medium size, receive buffers, pools, inject limit.
    pub am: AmConfig,
    /// RMA: inject limit, bounce buffers, poll frequency.
    pub rma: RmaConfig,
    /// Completion queues.
    pub cq: CqConfig,
    /// `GASNET_MAX_SEGSIZE`.
    pub max_segsize: MaxSegsize,
    /// `GASNET_EXITTIMEOUT` and its `_MAX`, `_MIN`, `_FACTOR` companions.
    pub exit_timeout: ExitTimeout,
    /// Tagged messaging: tag mode, progress batch, scalable endpoints.
    pub tagged: TaggedConfig,
    /// `GASNET_OFI_PROVIDER_INCLUDE` or `GASNET_OFI_PROVIDER_EXCLUDE`: the
    /// provider list that narrows selection together with `FI_PROVIDER`.
    pub provider_list: ProviderList,
    /// The shared-memory path between ranks of a host.
    pub pshm: PshmConfig,
    /// Atomics and collectives.
    pub extended: ExtendedConfig,
}

impl Config {
    /// Every variable [`Config::from_env`] reads by a fixed name, in reading
    /// order. `GASNET_OFI_INJECT_LIMIT` is read only while
    /// `GASNET_OFI_AM_INJECT_LIMIT` is unset; the `GASNET_OFI_DEVICE_<ids>`
    /// family is read by prefix and is not listed.
    pub const VARIABLES: &'static [&'static str] = &[
        general::VERBOSEENV,
        general::QUIET,
        libfabric_vars::FI_PROVIDER,
        general::SET_UNIVERSE_SIZE,
        general::ALLOW_UNTRUSTED_PROVIDER,
        general::STATSFILE,
        general::WAIT_MODE,
        general::MALLOC_KEEP,
        general::GLIBC_MALLOC_VARS[0],
        general::GLIBC_MALLOC_VARS[1],
        general::GLIBC_MALLOC_VARS[2],
        general::GLIBC_MALLOC_VARS[3],
        general::GLIBC_MALLOC_VARS[4],
        device::DEVICE,
        device::DEVICE_TYPE,
        device::LIST_DEVICES,
        device::LIST_DEVICES_NODES,
        am::MAX_MEDIUM,
        am::RECEIVE_BUFF_SIZE,
        am::NUM_RECEIVE_BUFFS,
        am::MAX_REQUEST_BUFFS,
        am::NUM_INITIAL_REQUEST_BUFFS,
        am::MAX_REPLY_BUFFS,
        am::NUM_INITIAL_REPLY_BUFFS,
        am::AM_INJECT_LIMIT,
        am::INJECT_LIMIT_ALIAS,
        am::LONG_AM_RMA_THRESH,
        am::AM_USE_DELIVERY_COMPLETE,
        am::LONG_AM_WRITEDATA,
        rma::RMA_INJECT_LIMIT,
        rma::BBUF_SIZE,
        rma::NUM_BBUFS,
        rma::BBUF_THRESHOLD,
        rma::RMA_POLL_FREQ,
        rma::PUT_AGGREGATE_LIMIT,
        rma::GET_BOUNCE,
        rma::GET_WINDOW,
        rma::SEGMENT_HUGEPAGES,
        cq::TX_CQ_SIZE,
        cq::RX_CQ_SIZE,
        cq::NUM_COMPLETIONS,
        segsize::MAX_SEGSIZE,
        EXITTIMEOUT_VARIABLES[0],
        EXITTIMEOUT_VARIABLES[1],
        EXITTIMEOUT_VARIABLES[2],
        EXITTIMEOUT_VARIABLES[3],
        tagged::TAG_MODE,
        tagged::PROGRESS_EVENT_CNT,
        tagged::ENABLE_SEP,
        tagged::THREAD_GROUPING,
        tagged::NUM_CTXTS,
        provider_list::PROVIDER_INCLUDE,
        provider_list::PROVIDER_EXCLUDE,
        pshm::SUPERNODE_MAXSIZE,
        pshm::PSHM_RING_SIZE,
        pshm::PSHM_LANES,
        extended::ATOMICS,
        extended::COLL_FANOUT,
        extended::COLL_CACHE_PAGES,
        extended::COLL_RMA,
    ];

    /// Read the configuration; the `GASNET_OFI_BBUF_SIZE` default is the
    /// host's page size.
    pub fn from_env(reader: &EnvReader<'_>) -> Result<Config, ConfigError> {
        Self::from_env_with_page_size(reader, host_page_size())
    }

    /// Read the configuration with an explicit page size (the
    /// `GASNET_OFI_BBUF_SIZE` default), for reproducible tests.
    pub fn from_env_with_page_size(
        reader: &EnvReader<'_>,
        page_size: usize,
    ) -> Result<Config, ConfigError> {
        Ok(Config {
            general: GeneralConfig::from_env(reader)?,
            device: DeviceConfig::from_env(reader)?,
            am: AmConfig::from_env(reader)?,
            rma: RmaConfig::from_env(reader, page_size)?,
            cq: CqConfig::from_env(reader)?,
            max_segsize: MaxSegsize::from_env(reader)?,
            exit_timeout: ExitTimeout::from_env(reader)?,
            tagged: TaggedConfig::from_env(reader)?,
            provider_list: ProviderList::from_env(reader)?,
            pshm: PshmConfig::from_env(reader)?,
            extended: ExtendedConfig::from_env(reader)?,
        })
    }

    /// Check `GASNET_OFI_RECEIVE_BUFF_SIZE` against the largest possible AM
    /// (computed by the AM layer from `am.max_medium`): a size below it is an
    /// error naming the variable and the minimum. See
    /// [`AmConfig::check_receive_buff`].
    pub fn check_receive_buff(
        &self,
        message_len: impl Fn(usize) -> usize,
    ) -> Result<(), ConfigError> {
        self.am.check_receive_buff(message_len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<Config, ConfigError> {
        Config::from_env_with_page_size(&EnvReader::quiet(env), 4096)
    }

    #[test]
    fn all_defaults() {
        let c = read(&MapEnv::new()).unwrap();
        assert_eq!(c.am.max_medium, 8192);
        assert_eq!(c.am.num_receive_buffs, 8);
        assert_eq!(c.rma.bbuf_threshold, 16384);
        assert_eq!(c.cq.num_completions, 64);
        assert_eq!(c.max_segsize, MaxSegsize::PerHost(0.85));
        assert_eq!(c.exit_timeout, ExitTimeout::default());
        assert_eq!(c.general.set_universe_size, None);
        assert!(c.device.device_type.is_some());
        assert_eq!(c.tagged, TaggedConfig::default());
        assert_eq!(c.provider_list, ProviderList::All);
    }

    #[test]
    fn tagged_settings_through_config() {
        let env = MapEnv::from([
            ("GASNET_OFI_TAG_MODE", "ofi_tag_2"),
            ("GASNET_OFI_PROGRESS_EVENT_CNT", "32"),
            ("GASNET_OFI_PROVIDER_EXCLUDE", "sockets"),
        ]);
        let c = read(&env).unwrap();
        assert_eq!(c.tagged.tag_mode, ::tagged::TagMode::Tag2);
        assert_eq!(c.tagged.progress_event_cnt, 32);
        assert!(!c.provider_list.matches("sockets") && c.provider_list.matches("shm"));
        let env = MapEnv::from([("GASNET_OFI_TAG_MODE", "ofi_tag_9")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_OFI_TAG_MODE=\"ofi_tag_9\" is not accepted: expected auto, ofi_tag_1, \
ofi_tag_2 or ofi_tag_full"
        );
        let env = MapEnv::from([
            ("GASNET_OFI_PROVIDER_INCLUDE", "shm"),
            ("GASNET_OFI_PROVIDER_EXCLUDE", "tcp"),
        ]);
        let e = read(&env).unwrap_err();
        assert!(matches!(e, ConfigError::Conflict(_)), "{e}");
    }

    #[test]
    fn every_variable_is_recorded_even_when_defaulted() {
        let env = MapEnv::new();
        let r = EnvReader::quiet(&env);
        Config::from_env_with_page_size(&r, 4096).unwrap();
        let reads = r.reads();
        let names: Vec<&str> = reads.iter().map(|x| x.name.as_str()).collect();
        assert_eq!(names, Config::VARIABLES);
        assert!(reads.iter().all(|x| x.defaulted));
    }

    #[test]
    fn recorded_values_show_what_was_set() {
        let env = MapEnv::from([
            ("GASNET_OFI_MAX_MEDIUM", "16K"),
            ("GASNET_OFI_NUM_BBUFS", ""),
        ]);
        let r = EnvReader::quiet(&env);
        Config::from_env_with_page_size(&r, 4096).unwrap();
        let reads = r.reads();
        let find = |n: &str| reads.iter().find(|x| x.name == n).unwrap().to_string();
        assert_eq!(
            find("GASNET_OFI_MAX_MEDIUM"),
            "ENV parameter: GASNET_OFI_MAX_MEDIUM = 16K"
        );
        assert_eq!(
            find("GASNET_OFI_NUM_BBUFS"),
            "ENV parameter: GASNET_OFI_NUM_BBUFS = 64   (default)"
        );
        assert_eq!(
            find("GASNET_OFI_BBUF_SIZE"),
            "ENV parameter: GASNET_OFI_BBUF_SIZE = 4096   (default)"
        );
    }

    #[test]
    fn first_bad_value_is_reported_as_one_line() {
        let env = MapEnv::from([("GASNET_OFI_RMA_POLL_FREQ", "often")]);
        let e = read(&env).unwrap_err();
        assert!(matches!(e, ConfigError::BadValue(_)));
        assert_eq!(e.var(), "GASNET_OFI_RMA_POLL_FREQ");
        assert_eq!(
            e.to_string(),
            "GASNET_OFI_RMA_POLL_FREQ=\"often\" is not accepted: expected a whole number of at least 1"
        );
        assert!(!e.to_string().contains('\n'));
    }

    #[test]
    fn cross_variable_rules_are_conflicts() {
        let env = MapEnv::from([("GASNET_OFI_NUM_BBUFS", "2")]);
        let e = read(&env).unwrap_err();
        assert!(matches!(e, ConfigError::Conflict(_)));
        assert_eq!(
            e.to_string(),
            "GASNET_OFI_NUM_BBUFS=\"2\" is not accepted: expected a whole number of at least 4 \
(GASNET_OFI_BBUF_THRESHOLD / GASNET_OFI_BBUF_SIZE = 16384 / 4096)"
        );
    }

    #[test]
    fn exit_timeout_errors_pass_through() {
        let env = MapEnv::from([("GASNET_EXITTIMEOUT_FACTOR", "x")]);
        assert_eq!(
            read(&env).unwrap_err().to_string(),
            "GASNET_EXITTIMEOUT_FACTOR=\"x\" is not accepted: expected a number from 0 to 86400"
        );
        let env = MapEnv::from([("GASNET_EXITTIMEOUT", "30")]);
        assert_eq!(read(&env).unwrap().exit_timeout.explicit, Some(30.0));
    }

    #[test]
    fn max_segsize_through_config() {
        let env = MapEnv::from([("GASNET_MAX_SEGSIZE", "0.5/P")]);
        assert_eq!(read(&env).unwrap().max_segsize, MaxSegsize::PerProcess(0.5));
        let env = MapEnv::from([("GASNET_MAX_SEGSIZE", "2/H")]);
        assert_eq!(read(&env).unwrap_err().var(), "GASNET_MAX_SEGSIZE");
    }

    #[test]
    fn check_receive_buff_through_config() {
        let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", "4096")]);
        let c = read(&env).unwrap();
        assert_eq!(
            c.check_receive_buff(|m| m + 64).unwrap_err().to_string(),
            "GASNET_OFI_RECEIVE_BUFF_SIZE=\"4096\" is not accepted: expected a size of at least \
8256 bytes (the largest Active Message with GASNET_OFI_MAX_MEDIUM = 8192), single or recv"
        );
        assert!(read(&MapEnv::new())
            .unwrap()
            .check_receive_buff(|m| m + 64)
            .is_ok());
    }

    #[test]
    fn host_page_size_is_the_bbuf_default() {
        let c = Config::from_env(&EnvReader::quiet(&MapEnv::new())).unwrap();
        assert_eq!(c.rma.bbuf_size, host_page_size());
    }
}
