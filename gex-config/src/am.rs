//! Active Message settings: the Medium size, the receive (multi-recv)
//! buffers, the outbound buffer pools and the inject limit.

use super::inject::resolve_inject_limit;
use super::read::{count_in, opt_size, parse_size_usize, size_in, value_text};
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
/// `GASNET_OFI_LONG_AM_WRITEDATA`.
pub const LONG_AM_WRITEDATA: &str = "GASNET_OFI_LONG_AM_WRITEDATA";

/// How an AM Long above the packing threshold travels
/// (`GASNET_OFI_LONG_AM_WRITEDATA`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LongWritedata {
    /// As the provider's profile says (one message where the provider
    /// has remote CQ data and its profile does not say otherwise).
    #[default]
    Auto,
    /// One message (payload and header in one `fi_writemsg` with remote
    /// CQ data) wherever the provider has remote CQ data.
    On,
    /// Put-then-send: the payload's write, its completion, then the
    /// header.
    Off,
}

impl LongWritedata {
    /// What the variable accepts.
    pub const ACCEPTED: &'static str = "one of auto, on (or yes, 1), off (or no, 0)";

    /// The setting's name.
    pub fn name(self) -> &'static str {
        match self {
            LongWritedata::Auto => "auto",
            LongWritedata::On => "on",
            LongWritedata::Off => "off",
        }
    }

    fn parse(s: &str) -> Option<LongWritedata> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(LongWritedata::Auto),
            "on" | "yes" | "1" => Some(LongWritedata::On),
            "off" | "no" | "0" => Some(LongWritedata::Off),
            _ => None,
        }
    }
}

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
/// Most receive buffers (`GASNET_OFI_NUM_RECEIVE_BUFFS`).
pub const NUM_RECEIVE_BUFFS_MAX: usize = 1 << 16;
/// Default of `GASNET_OFI_MAX_{REQUEST,REPLY}_BUFFS`.
pub const MAX_AM_BUFFS_DEFAULT: usize = 1024;
/// The `GASNET_OFI_NUM_INITIAL_{REQUEST,REPLY}_BUFFS` default is the smaller
/// of this and the pool's maximum.
pub const INITIAL_AM_BUFFS_DEFAULT: usize = 256;
/// Smallest accepted size of an outbound AM buffer pool (initial or maximum).
pub const AM_BUFFS_MIN: usize = 2;
/// Most send buffers per pool (`GASNET_OFI_MAX_{REQUEST,REPLY}_BUFFS`,
/// `GASNET_OFI_NUM_INITIAL_{REQUEST,REPLY}_BUFFS`).
pub const AM_BUFFS_MAX: usize = 1 << 20;

/// The largest `GASNET_OFI_RECEIVE_BUFF_SIZE`: 1 GiB (one buffer; the
/// default is 1 MiB).
pub const RECEIVE_BUFF_SIZE_MAX: usize = 1 << 30;

/// What `GASNET_OFI_RECEIVE_BUFF_SIZE` accepts, for error messages.
pub const RECEIVE_BUFF_SIZE_ACCEPTED: &str =
    "a positive size in bytes up to 1G (a number with an optional K, M, G or T suffix), single or recv";

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
                .filter(|&n| n > 0 && n <= RECEIVE_BUFF_SIZE_MAX)
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
    /// The value of `GASNET_OFI_MAX_MEDIUM` as written, for messages.
    max_medium_text: Option<String>,
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
    /// `GASNET_OFI_LONG_AM_WRITEDATA`: `auto` (default), `on` or `off`.
    pub long_writedata: LongWritedata,
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

        let max_medium_text = r.peek(MAX_MEDIUM);
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
        let num_receive_buffs = count_in(
            r,
            NUM_RECEIVE_BUFFS,
            receive_buff_size.default_num_buffs(),
            NUM_RECEIVE_BUFFS_MIN,
            NUM_RECEIVE_BUFFS_MAX,
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
        let text = r.string(LONG_AM_WRITEDATA, LongWritedata::Auto.name());
        let long_writedata = LongWritedata::parse(&text)
            .ok_or_else(|| EnvError::new(LONG_AM_WRITEDATA, &text, LongWritedata::ACCEPTED))?;

        Ok(AmConfig {
            max_medium,
            receive_buff_size,
            receive_buff_size_text,
            max_medium_text,
            num_receive_buffs,
            max_request_buffs,
            max_reply_buffs,
            num_initial_request_buffs,
            num_initial_reply_buffs,
            inject_limit,
            inject_limit_var,
            long_am_rma_thresh,
            use_delivery_complete,
            long_writedata,
        })
    }

    /// Receive as the provider's profile says where the user did not
    /// choose: `mode` replaces the default receive buffers (the caller
    /// checked that `GASNET_OFI_RECEIVE_BUFF_SIZE` is unset), and the
    /// buffer count becomes `mode`'s default unless
    /// `GASNET_OFI_NUM_RECEIVE_BUFFS` was set (`count_set`).
    pub fn use_profile_receive(&mut self, mode: RecvBuffSize, count_set: bool) {
        debug_assert!(self.receive_buff_size_text.is_none());
        self.receive_buff_size = mode;
        if !count_set {
            self.num_receive_buffs = mode.default_num_buffs();
        }
    }

    /// Check the receive buffer size against the largest possible AM (header,
    /// arguments and a `max_medium` payload, as the AM layer computes it). A
    /// size below it is an error naming `GASNET_OFI_RECEIVE_BUFF_SIZE` and the
    /// minimum, or, when the receive buffer size is its default, naming
    /// `GASNET_OFI_MAX_MEDIUM` and the most that fits; `single` and `recv`
    /// always fit.
    ///
    /// `message_len(m)` is the length of the largest AM with a Medium payload
    /// of `m` bytes (growing with `m`).
    pub fn check_receive_buff(
        &self,
        message_len: impl Fn(usize) -> usize,
    ) -> Result<(), ConfigError> {
        let largest_am = message_len(self.max_medium);
        match self.receive_buff_size {
            RecvBuffSize::Bytes(n) if n < largest_am && self.receive_buff_size_text.is_none() => {
                // The user raised the Medium size, not the buffers: say
                // what fits with the default and what to set for more.
                // The largest Medium that fits (message_len grows with it).
                let (mut lo, mut hi) = (0, self.max_medium);
                while lo < hi {
                    let mid = lo + (hi - lo).div_ceil(2);
                    if message_len(mid) <= n {
                        lo = mid;
                    } else {
                        hi = mid - 1;
                    }
                }
                let text = self
                    .max_medium_text
                    .clone()
                    .unwrap_or_else(|| self.max_medium.to_string());
                Err(ConfigError::Conflict(EnvError::new(
                    MAX_MEDIUM,
                    &text,
                    format!(
                        "at most {} bytes with {RECEIVE_BUFF_SIZE} at its default of {n} \
(set {RECEIVE_BUFF_SIZE} to at least {largest_am}, or to single or recv, for a larger Medium)",
                        lo
                    ),
                )))
            }
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
    /// also the default; with a note when the value set was reduced.
    pub fn resolve_long_am_rma_thresh(&self, max_data_length: usize) -> (usize, Option<String>) {
        match self.long_am_rma_thresh {
            None => (max_data_length, None),
            Some(t) if t <= max_data_length => (t, None),
            Some(t) => (
                max_data_length,
                Some(format!(
                    "{LONG_AM_RMA_THRESH}={t} is above the largest AM data length of \
{max_data_length} bytes (with {MAX_MEDIUM} = {}); using {max_data_length}",
                    self.max_medium
                )),
            ),
        }
    }
}

/// Read one outbound pool's maximum and initial size.
fn read_pool(
    r: &EnvReader<'_>,
    max_name: &str,
    initial_name: &str,
) -> Result<(usize, usize), ConfigError> {
    let max = count_in(
        r,
        max_name,
        MAX_AM_BUFFS_DEFAULT,
        AM_BUFFS_MIN,
        AM_BUFFS_MAX,
    )?;
    let initial = count_in(
        r,
        initial_name,
        INITIAL_AM_BUFFS_DEFAULT.min(max),
        AM_BUFFS_MIN,
        AM_BUFFS_MAX,
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
mod tests;
