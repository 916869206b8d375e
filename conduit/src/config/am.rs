//! Active Message settings: the Medium size, the receive (multi-recv)
//! buffers, the outbound buffer pools and the inject limit.

use super::inject::resolve_inject_limit;
use super::read::{count, opt_size, parse_size_usize, size_in, value_text};
use super::ConfigError;
use gex_env::{format_size, EnvError, EnvReader};
use std::fmt;

/// `GASNET_OFI_MAX_MEDIUM`.
pub const MAX_MEDIUM: &str = "GASNET_OFI_MAX_MEDIUM";
/// `GASNET_OFI_RECEIVE_BUFF_SIZE`.
pub const RECEIVE_BUFF_SIZE: &str = "GASNET_OFI_RECEIVE_BUFF_SIZE";
/// `GASNET_OFI_NUM_RECEIVE_BUFFS`.
pub const NUM_RECEIVE_BUFFS: &str = "GASNET_OFI_NUM_RECEIVE_BUFFS";
/// `GASNET_OFI_MAX_REQUEST_BUFFS`.
pub const MAX_REQUEST_BUFFS: &str = "GASNET_OFI_MAX_REQUEST_BUFFS";
/// `GASNET_OFI_MAX_REPLY_BUFFS`.
pub const MAX_REPLY_BUFFS: &str = "GASNET_OFI_MAX_REPLY_BUFFS";
/// `GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS`.
pub const NUM_INITIAL_REQUEST_BUFFS: &str = "GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS";
/// `GASNET_OFI_NUM_INITIAL_REPLY_BUFFS`.
pub const NUM_INITIAL_REPLY_BUFFS: &str = "GASNET_OFI_NUM_INITIAL_REPLY_BUFFS";
/// `GASNET_OFI_AM_INJECT_LIMIT`.
pub const AM_INJECT_LIMIT: &str = "GASNET_OFI_AM_INJECT_LIMIT";
/// `GASNET_OFI_INJECT_LIMIT`, the older name of `GASNET_OFI_AM_INJECT_LIMIT`,
/// consulted only when that one is unset.
pub const INJECT_LIMIT_ALIAS: &str = "GASNET_OFI_INJECT_LIMIT";
/// `GASNET_OFI_LONG_AM_RMA_THRESH`.
pub const LONG_AM_RMA_THRESH: &str = "GASNET_OFI_LONG_AM_RMA_THRESH";
/// `GASNET_OFI_AM_USE_DELIVERY_COMPLETE`.
pub const AM_USE_DELIVERY_COMPLETE: &str = "GASNET_OFI_AM_USE_DELIVERY_COMPLETE";

/// Default of `GASNET_OFI_MAX_MEDIUM` (configure `--with-ofi-max-medium`).
pub const MAX_MEDIUM_DEFAULT: usize = 8192;
/// Smallest accepted `GASNET_OFI_MAX_MEDIUM`.
pub const MAX_MEDIUM_MIN: usize = 512;
/// Largest accepted `GASNET_OFI_MAX_MEDIUM` (a limit of this implementation,
/// which keeps buffer-size arithmetic far from overflow).
pub const MAX_MEDIUM_LIMIT: usize = 1 << 30;
/// Default of `GASNET_OFI_RECEIVE_BUFF_SIZE`: 1 MiB.
pub const RECEIVE_BUFF_SIZE_DEFAULT: usize = 1 << 20;
/// Default of `GASNET_OFI_NUM_RECEIVE_BUFFS` with multi-recv buffers.
pub const NUM_RECEIVE_BUFFS_DEFAULT: usize = 8;
/// Default of `GASNET_OFI_NUM_RECEIVE_BUFFS` with `single` or `recv` buffers
/// (one AM per buffer).
pub const NUM_RECEIVE_BUFFS_SINGLE_DEFAULT: usize = 450;
/// Smallest accepted `GASNET_OFI_NUM_RECEIVE_BUFFS` (one per AM endpoint).
pub const NUM_RECEIVE_BUFFS_MIN: usize = 2;
/// Default of `GASNET_OFI_MAX_{REQUEST,REPLY}_BUFFS`.
pub const MAX_AM_BUFFS_DEFAULT: usize = 1024;
/// The `GASNET_OFI_NUM_INITIAL_{REQUEST,REPLY}_BUFFS` default is the smaller
/// of this and the pool's maximum.
pub const INITIAL_AM_BUFFS_DEFAULT: usize = 256;
/// Smallest accepted size of an outbound AM buffer pool (initial or maximum).
pub const AM_BUFFS_MIN: usize = 2;

/// What `GASNET_OFI_RECEIVE_BUFF_SIZE` accepts, for error messages.
pub const RECEIVE_BUFF_SIZE_ACCEPTED: &str =
    "a positive size in bytes (a number with an optional K, M or G suffix), single or recv";

/// `GASNET_OFI_RECEIVE_BUFF_SIZE`: how inbound AMs are received.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvBuffSize {
    /// Multi-recv buffers of this many bytes, each holding many AMs.
    Bytes(usize),
    /// `single`: multi-recv buffers that hold exactly one AM of the largest
    /// size.
    Single,
    /// `recv`: one-AM buffers posted without `FI_MULTI_RECV` (the workaround
    /// for bugs 4461 and 4517).
    Recv,
}

impl RecvBuffSize {
    /// Parse a value: `single` and `recv` in any case, or a size above zero.
    pub fn parse(text: &str) -> Option<RecvBuffSize> {
        let t = text.trim();
        if t.eq_ignore_ascii_case("single") {
            Some(RecvBuffSize::Single)
        } else if t.eq_ignore_ascii_case("recv") {
            Some(RecvBuffSize::Recv)
        } else {
            parse_size_usize(t)
                .filter(|&n| n > 0)
                .map(RecvBuffSize::Bytes)
        }
    }

    /// True for `single` and `recv`: one AM per buffer.
    pub fn is_one_am_per_buffer(self) -> bool {
        !matches!(self, RecvBuffSize::Bytes(_))
    }

    /// Whether the buffers are posted with `FI_MULTI_RECV` (all but `recv`).
    pub fn uses_multi_recv(self) -> bool {
        !matches!(self, RecvBuffSize::Recv)
    }

    /// The size of one receive buffer given the largest possible AM.
    pub fn buffer_bytes(self, largest_am: usize) -> usize {
        match self {
            RecvBuffSize::Bytes(n) => n,
            RecvBuffSize::Single | RecvBuffSize::Recv => largest_am,
        }
    }

    /// The default of `GASNET_OFI_NUM_RECEIVE_BUFFS` for this choice.
    pub fn default_num_buffs(self) -> usize {
        if self.is_one_am_per_buffer() {
            NUM_RECEIVE_BUFFS_SINGLE_DEFAULT
        } else {
            NUM_RECEIVE_BUFFS_DEFAULT
        }
    }
}

impl fmt::Display for RecvBuffSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvBuffSize::Bytes(n) => f.write_str(&format_size(*n as u64)),
            RecvBuffSize::Single => f.write_str("single"),
            RecvBuffSize::Recv => f.write_str("recv"),
        }
    }
}

/// Active Message settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AmConfig {
    /// `GASNET_OFI_MAX_MEDIUM`: the largest AM Medium payload, what
    /// `gex_AM_LUB{Request,Reply}Medium` return. 512 to 1G.
    pub max_medium: usize,
    /// `GASNET_OFI_RECEIVE_BUFF_SIZE`.
    pub receive_buff_size: RecvBuffSize,
    /// The value of `GASNET_OFI_RECEIVE_BUFF_SIZE` as written, for messages.
    receive_buff_size_text: Option<String>,
    /// `GASNET_OFI_NUM_RECEIVE_BUFFS`: receive buffers, alternating between
    /// the request and the reply endpoint. At least 2.
    pub num_receive_buffs: usize,
    /// `GASNET_OFI_MAX_REQUEST_BUFFS`: most outbound Request buffers.
    pub max_request_buffs: usize,
    /// `GASNET_OFI_MAX_REPLY_BUFFS`: most outbound Reply buffers.
    pub max_reply_buffs: usize,
    /// `GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS`: Request buffers allocated at
    /// startup; at most `max_request_buffs`.
    pub num_initial_request_buffs: usize,
    /// `GASNET_OFI_NUM_INITIAL_REPLY_BUFFS`: Reply buffers allocated at
    /// startup; at most `max_reply_buffs`.
    pub num_initial_reply_buffs: usize,
    /// `GASNET_OFI_AM_INJECT_LIMIT` (or its alias): AMs up to this size use
    /// `fi_inject`. `None` means the provider's maximum; see
    /// [`AmConfig::resolve_inject_limit`].
    pub inject_limit: Option<usize>,
    /// The variable `inject_limit` came from: [`AM_INJECT_LIMIT`], or
    /// [`INJECT_LIMIT_ALIAS`] when only the alias was set.
    pub inject_limit_var: &'static str,
    /// `GASNET_OFI_LONG_AM_RMA_THRESH`: an AM Long whose arguments and payload
    /// fit below this is sent packed in the message. `None` means the
    /// largest AM data length; see [`AmConfig::resolve_long_am_rma_thresh`].
    pub long_am_rma_thresh: Option<usize>,
    /// `GASNET_OFI_AM_USE_DELIVERY_COMPLETE`: use `FI_DELIVERY_COMPLETE`
    /// instead of `FI_INJECT_COMPLETE` on the AM endpoints.
    pub use_delivery_complete: bool,
}

impl AmConfig {
    /// Read the AM variables.
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        let max_medium = size_in(
            r,
            MAX_MEDIUM,
            MAX_MEDIUM_DEFAULT,
            MAX_MEDIUM_MIN,
            MAX_MEDIUM_LIMIT,
        )?;

        let receive_buff_size_text = r.peek(RECEIVE_BUFF_SIZE);
        let receive_buff_size = match &receive_buff_size_text {
            None => {
                r.record(
                    RECEIVE_BUFF_SIZE,
                    &RECEIVE_BUFF_SIZE_DEFAULT.to_string(),
                    true,
                );
                RecvBuffSize::Bytes(RECEIVE_BUFF_SIZE_DEFAULT)
            }
            Some(v) => {
                r.record(RECEIVE_BUFF_SIZE, v, false);
                RecvBuffSize::parse(v).ok_or_else(|| {
                    EnvError::new(RECEIVE_BUFF_SIZE, v, RECEIVE_BUFF_SIZE_ACCEPTED)
                })?
            }
        };
        let num_receive_buffs = count(
            r,
            NUM_RECEIVE_BUFFS,
            receive_buff_size.default_num_buffs(),
            NUM_RECEIVE_BUFFS_MIN,
        )?;

        let (max_request_buffs, num_initial_request_buffs) =
            read_pool(r, MAX_REQUEST_BUFFS, NUM_INITIAL_REQUEST_BUFFS)?;
        let (max_reply_buffs, num_initial_reply_buffs) =
            read_pool(r, MAX_REPLY_BUFFS, NUM_INITIAL_REPLY_BUFFS)?;

        let (inject_limit, inject_limit_var) = if r.peek(AM_INJECT_LIMIT).is_some() {
            (opt_size(r, AM_INJECT_LIMIT)?, AM_INJECT_LIMIT)
        } else {
            r.record(AM_INJECT_LIMIT, "", true);
            match opt_size(r, INJECT_LIMIT_ALIAS)? {
                Some(n) => (Some(n), INJECT_LIMIT_ALIAS),
                None => (None, AM_INJECT_LIMIT),
            }
        };
        let long_am_rma_thresh = opt_size(r, LONG_AM_RMA_THRESH)?;
        let use_delivery_complete = r.bool(AM_USE_DELIVERY_COMPLETE, false)?;

        Ok(AmConfig {
            max_medium,
            receive_buff_size,
            receive_buff_size_text,
            num_receive_buffs,
            max_request_buffs,
            max_reply_buffs,
            num_initial_request_buffs,
            num_initial_reply_buffs,
            inject_limit,
            inject_limit_var,
            long_am_rma_thresh,
            use_delivery_complete,
        })
    }

    /// Check the receive buffer size against the largest possible AM (header,
    /// arguments and a `max_medium` payload, as the AM layer computes it). A
    /// size below it is an error naming `GASNET_OFI_RECEIVE_BUFF_SIZE` and the
    /// minimum; `single` and `recv` always fit.
    pub fn check_receive_buff(&self, largest_am: usize) -> Result<(), ConfigError> {
        match self.receive_buff_size {
            RecvBuffSize::Bytes(n) if n < largest_am => {
                let text = match &self.receive_buff_size_text {
                    Some(t) if parse_size_usize(t) == Some(n) => t.clone(),
                    _ => n.to_string(),
                };
                Err(ConfigError::Conflict(EnvError::new(
                    RECEIVE_BUFF_SIZE,
                    &text,
                    format!(
                        "a size of at least {largest_am} bytes (the largest Active Message \
with {MAX_MEDIUM} = {}), single or recv",
                        self.max_medium
                    ),
                )))
            }
            _ => Ok(()),
        }
    }

    /// The AM inject limit for a provider whose MSG endpoints inject at most
    /// `provider_max` bytes, with a note when the request was reduced (see
    /// [`resolve_inject_limit`]).
    pub fn resolve_inject_limit(&self, provider_max: usize) -> (usize, Option<String>) {
        resolve_inject_limit(self.inject_limit, provider_max, self.inject_limit_var)
    }

    /// The AM Long packing threshold: `GASNET_OFI_LONG_AM_RMA_THRESH` when set,
    /// never above `max_data_length` (the largest AM data length), which is
    /// also the default.
    pub fn resolve_long_am_rma_thresh(&self, max_data_length: usize) -> usize {
        self.long_am_rma_thresh
            .map_or(max_data_length, |t| t.min(max_data_length))
    }
}

/// Read one outbound pool's maximum and initial size.
fn read_pool(
    r: &EnvReader<'_>,
    max_name: &str,
    initial_name: &str,
) -> Result<(usize, usize), ConfigError> {
    let max = count(r, max_name, MAX_AM_BUFFS_DEFAULT, AM_BUFFS_MIN)?;
    let initial = count(
        r,
        initial_name,
        INITIAL_AM_BUFFS_DEFAULT.min(max),
        AM_BUFFS_MIN,
    )?;
    if initial > max {
        return Err(ConfigError::Conflict(EnvError::new(
            initial_name,
            &value_text(r, initial_name, initial),
            format!("a whole number from {AM_BUFFS_MIN} to {max} ({max_name} = {max})"),
        )));
    }
    Ok((max, initial))
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<AmConfig, ConfigError> {
        AmConfig::from_env(&EnvReader::quiet(env))
    }

    fn err(pairs: &[(&str, &str)]) -> String {
        let env = MapEnv(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        read(&env).unwrap_err().to_string()
    }

    #[test]
    fn defaults() {
        let a = read(&MapEnv::new()).unwrap();
        assert_eq!(a.max_medium, 8192);
        assert_eq!(a.receive_buff_size, RecvBuffSize::Bytes(1 << 20));
        assert_eq!(a.num_receive_buffs, 8);
        assert_eq!((a.max_request_buffs, a.max_reply_buffs), (1024, 1024));
        assert_eq!(
            (a.num_initial_request_buffs, a.num_initial_reply_buffs),
            (256, 256)
        );
        assert_eq!(a.inject_limit, None);
        assert_eq!(a.inject_limit_var, "GASNET_OFI_AM_INJECT_LIMIT");
        assert_eq!(a.long_am_rma_thresh, None);
        assert!(!a.use_delivery_complete);
    }

    #[test]
    fn max_medium_good_and_bad() {
        let env = MapEnv::from([("GASNET_OFI_MAX_MEDIUM", "16K")]);
        assert_eq!(read(&env).unwrap().max_medium, 16384);
        let env = MapEnv::from([("GASNET_OFI_MAX_MEDIUM", "512")]);
        assert_eq!(read(&env).unwrap().max_medium, 512);
        assert_eq!(
            err(&[("GASNET_OFI_MAX_MEDIUM", "511")]),
            "GASNET_OFI_MAX_MEDIUM=\"511\" is not accepted: expected a size of at least 512 bytes \
(a number with an optional K, M or G suffix)"
        );
        assert_eq!(
            err(&[("GASNET_OFI_MAX_MEDIUM", "2G")]),
            "GASNET_OFI_MAX_MEDIUM=\"2G\" is not accepted: expected a size from 512 bytes to 1G \
(a number with an optional K, M or G suffix)"
        );
        assert_eq!(err(&[("GASNET_OFI_MAX_MEDIUM", "lots")]), "GASNET_OFI_MAX_MEDIUM=\"lots\" is not accepted: expected a size of at least 512 bytes (a number with an optional K, M or G suffix) [\"lots\" is not a number with a K/M/G/T suffix]");
    }

    #[test]
    fn receive_buff_size_forms() {
        for (text, want) in [
            ("64K", RecvBuffSize::Bytes(65536)),
            ("2M", RecvBuffSize::Bytes(2 << 20)),
            ("1G", RecvBuffSize::Bytes(1 << 30)),
            ("100000", RecvBuffSize::Bytes(100_000)),
            ("single", RecvBuffSize::Single),
            ("RECV", RecvBuffSize::Recv),
        ] {
            let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", text)]);
            assert_eq!(read(&env).unwrap().receive_buff_size, want, "{text}");
        }
        for bad in ["0", "many", "-1", "single-ish"] {
            assert_eq!(
                err(&[("GASNET_OFI_RECEIVE_BUFF_SIZE", bad)]),
                format!(
                    "GASNET_OFI_RECEIVE_BUFF_SIZE=\"{bad}\" is not accepted: expected a positive \
size in bytes (a number with an optional K, M or G suffix), single or recv"
                )
            );
        }
    }

    #[test]
    fn single_and_recv_change_the_num_receive_buffs_default() {
        for text in ["single", "recv", "Single"] {
            let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", text)]);
            assert_eq!(read(&env).unwrap().num_receive_buffs, 450, "{text}");
        }
        let env = MapEnv::from([
            ("GASNET_OFI_RECEIVE_BUFF_SIZE", "recv"),
            ("GASNET_OFI_NUM_RECEIVE_BUFFS", "100"),
        ]);
        assert_eq!(read(&env).unwrap().num_receive_buffs, 100);
        let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", "512K")]);
        assert_eq!(read(&env).unwrap().num_receive_buffs, 8);
    }

    #[test]
    fn recv_mode_properties() {
        assert!(RecvBuffSize::Single.uses_multi_recv());
        assert!(!RecvBuffSize::Recv.uses_multi_recv());
        assert!(RecvBuffSize::Bytes(10).uses_multi_recv());
        assert_eq!(RecvBuffSize::Recv.buffer_bytes(8256), 8256);
        assert_eq!(RecvBuffSize::Bytes(4096).buffer_bytes(8256), 4096);
        assert_eq!(RecvBuffSize::Bytes(1 << 20).to_string(), "1M");
    }

    #[test]
    fn num_receive_buffs_good_and_bad() {
        let env = MapEnv::from([("GASNET_OFI_NUM_RECEIVE_BUFFS", "2")]);
        assert_eq!(read(&env).unwrap().num_receive_buffs, 2);
        assert_eq!(
            err(&[("GASNET_OFI_NUM_RECEIVE_BUFFS", "1")]),
            "GASNET_OFI_NUM_RECEIVE_BUFFS=\"1\" is not accepted: expected a whole number of at least 2"
        );
    }

    #[test]
    fn pools_good_and_bad() {
        let env = MapEnv::from([
            ("GASNET_OFI_MAX_REQUEST_BUFFS", "100"),
            ("GASNET_OFI_MAX_REPLY_BUFFS", "4000"),
            ("GASNET_OFI_NUM_INITIAL_REPLY_BUFFS", "4000"),
        ]);
        let a = read(&env).unwrap();
        // The initial default is min(256, MAX).
        assert_eq!(
            (a.max_request_buffs, a.num_initial_request_buffs),
            (100, 100)
        );
        assert_eq!((a.max_reply_buffs, a.num_initial_reply_buffs), (4000, 4000));
        assert_eq!(
            err(&[("GASNET_OFI_MAX_REQUEST_BUFFS", "1")]),
            "GASNET_OFI_MAX_REQUEST_BUFFS=\"1\" is not accepted: expected a whole number of at least 2"
        );
        assert_eq!(
            err(&[("GASNET_OFI_MAX_REPLY_BUFFS", "lots")]),
            "GASNET_OFI_MAX_REPLY_BUFFS=\"lots\" is not accepted: expected a whole number of at least 2"
        );
        assert_eq!(
            err(&[("GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS", "1")]),
            "GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS=\"1\" is not accepted: expected a whole number of at least 2"
        );
        assert_eq!(
            err(&[("GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS", "2000")]),
            "GASNET_OFI_NUM_INITIAL_REQUEST_BUFFS=\"2000\" is not accepted: expected a whole number \
from 2 to 1024 (GASNET_OFI_MAX_REQUEST_BUFFS = 1024)"
        );
        assert_eq!(
            err(&[
                ("GASNET_OFI_MAX_REPLY_BUFFS", "16"),
                ("GASNET_OFI_NUM_INITIAL_REPLY_BUFFS", "17")
            ]),
            "GASNET_OFI_NUM_INITIAL_REPLY_BUFFS=\"17\" is not accepted: expected a whole number \
from 2 to 16 (GASNET_OFI_MAX_REPLY_BUFFS = 16)"
        );
    }

    #[test]
    fn inject_limit_and_alias() {
        let env = MapEnv::from([("GASNET_OFI_AM_INJECT_LIMIT", "1K")]);
        let a = read(&env).unwrap();
        assert_eq!(
            (a.inject_limit, a.inject_limit_var),
            (Some(1024), "GASNET_OFI_AM_INJECT_LIMIT")
        );
        // The alias applies when the main variable is unset ...
        let env = MapEnv::from([("GASNET_OFI_INJECT_LIMIT", "256")]);
        let r = EnvReader::quiet(&env);
        let a = AmConfig::from_env(&r).unwrap();
        assert_eq!(
            (a.inject_limit, a.inject_limit_var),
            (Some(256), "GASNET_OFI_INJECT_LIMIT")
        );
        assert!(r
            .reads()
            .iter()
            .any(|x| x.name == "GASNET_OFI_INJECT_LIMIT"));
        // ... or empty, and is ignored (not even read) when it is set.
        let env = MapEnv::from([
            ("GASNET_OFI_AM_INJECT_LIMIT", ""),
            ("GASNET_OFI_INJECT_LIMIT", "128"),
        ]);
        assert_eq!(read(&env).unwrap().inject_limit, Some(128));
        let env = MapEnv::from([
            ("GASNET_OFI_AM_INJECT_LIMIT", "64"),
            ("GASNET_OFI_INJECT_LIMIT", "junk"),
        ]);
        assert_eq!(read(&env).unwrap().inject_limit, Some(64));
        assert_eq!(err(&[("GASNET_OFI_AM_INJECT_LIMIT", "big")]), "GASNET_OFI_AM_INJECT_LIMIT=\"big\" is not accepted: expected a size in bytes (a number with an optional K, M or G suffix) [\"big\" is not a number with a K/M/G/T suffix]");
        assert_eq!(err(&[("GASNET_OFI_INJECT_LIMIT", "big")]), "GASNET_OFI_INJECT_LIMIT=\"big\" is not accepted: expected a size in bytes (a number with an optional K, M or G suffix) [\"big\" is not a number with a K/M/G/T suffix]");
    }

    #[test]
    fn inject_limit_clamp_names_the_variable_used() {
        let env = MapEnv::from([("GASNET_OFI_INJECT_LIMIT", "4K")]);
        let a = read(&env).unwrap();
        let (n, note) = a.resolve_inject_limit(64);
        assert_eq!(n, 64);
        assert_eq!(
            note.unwrap(),
            "GASNET_OFI_INJECT_LIMIT=4096 is above the provider's maximum inject size of 64 bytes; using 64"
        );
        assert_eq!(
            read(&MapEnv::new()).unwrap().resolve_inject_limit(64),
            (64, None)
        );
    }

    #[test]
    fn long_am_rma_thresh() {
        let env = MapEnv::from([("GASNET_OFI_LONG_AM_RMA_THRESH", "2K")]);
        let a = read(&env).unwrap();
        assert_eq!(a.long_am_rma_thresh, Some(2048));
        assert_eq!(a.resolve_long_am_rma_thresh(8256), 2048);
        assert_eq!(a.resolve_long_am_rma_thresh(1000), 1000);
        assert_eq!(
            read(&MapEnv::new())
                .unwrap()
                .resolve_long_am_rma_thresh(8256),
            8256
        );
        assert_eq!(err(&[("GASNET_OFI_LONG_AM_RMA_THRESH", "2Q")]), 
            "GASNET_OFI_LONG_AM_RMA_THRESH=\"2Q\" is not accepted: expected a size in bytes (a number with an optional K, M or G suffix) [\"2Q\" is not a number with a K/M/G/T suffix]"
        );
    }

    #[test]
    fn delivery_complete_good_and_bad() {
        let env = MapEnv::from([("GASNET_OFI_AM_USE_DELIVERY_COMPLETE", "yes")]);
        assert!(read(&env).unwrap().use_delivery_complete);
        assert_eq!(
            err(&[("GASNET_OFI_AM_USE_DELIVERY_COMPLETE", "2")]),
            "GASNET_OFI_AM_USE_DELIVERY_COMPLETE=\"2\" is not accepted: expected a boolean: 1/0, \
yes/no, y/n, true/false or on/off"
        );
    }

    #[test]
    fn receive_buff_must_hold_the_largest_am() {
        let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", "8K")]);
        let a = read(&env).unwrap();
        assert_eq!(a.check_receive_buff(8192), Ok(()));
        assert_eq!(
            a.check_receive_buff(8256).unwrap_err().to_string(),
            "GASNET_OFI_RECEIVE_BUFF_SIZE=\"8K\" is not accepted: expected a size of at least 8256 \
bytes (the largest Active Message with GASNET_OFI_MAX_MEDIUM = 8192), single or recv"
        );
        // The default 1M is too small for a 1M Medium.
        let env = MapEnv::from([("GASNET_OFI_MAX_MEDIUM", "1M")]);
        let a = read(&env).unwrap();
        assert_eq!(
            a.check_receive_buff((1 << 20) + 64).unwrap_err().to_string(),
            "GASNET_OFI_RECEIVE_BUFF_SIZE=\"1048576\" is not accepted: expected a size of at least \
1048640 bytes (the largest Active Message with GASNET_OFI_MAX_MEDIUM = 1048576), single or recv"
        );
        for text in ["single", "recv"] {
            let env = MapEnv::from([("GASNET_OFI_RECEIVE_BUFF_SIZE", text)]);
            assert_eq!(read(&env).unwrap().check_receive_buff(1 << 30), Ok(()));
        }
    }
}
