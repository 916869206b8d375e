//! RMA settings: the inject limit, the bounce buffers used by non-bulk puts
//! (`GASNET_OFI_BBUF_*`, `GASNET_OFI_NUM_BBUFS`) and the RMA poll frequency.

use super::inject::resolve_inject_limit;
use super::read::{count, explained, opt_size, size_in, value_text};
use super::ConfigError;
use gex_env::{EnvError, EnvReader};

/// `GASNET_OFI_RMA_INJECT_LIMIT`.
pub const RMA_INJECT_LIMIT: &str = "GASNET_OFI_RMA_INJECT_LIMIT";
/// `GASNET_OFI_BBUF_SIZE`.
pub const BBUF_SIZE: &str = "GASNET_OFI_BBUF_SIZE";
/// `GASNET_OFI_NUM_BBUFS`.
pub const NUM_BBUFS: &str = "GASNET_OFI_NUM_BBUFS";
/// `GASNET_OFI_BBUF_THRESHOLD`.
pub const BBUF_THRESHOLD: &str = "GASNET_OFI_BBUF_THRESHOLD";
/// `GASNET_OFI_RMA_POLL_FREQ`.
pub const RMA_POLL_FREQ: &str = "GASNET_OFI_RMA_POLL_FREQ";
/// `GASNET_OFI_PUT_AGGREGATE_LIMIT`.
pub const PUT_AGGREGATE_LIMIT: &str = "GASNET_OFI_PUT_AGGREGATE_LIMIT";
/// `GASNET_OFI_GET_BOUNCE`.
pub const GET_BOUNCE: &str = "GASNET_OFI_GET_BOUNCE";
/// `GASNET_OFI_SEGMENT_HUGEPAGES`.
pub const SEGMENT_HUGEPAGES: &str = "GASNET_OFI_SEGMENT_HUGEPAGES";
/// `GASNET_OFI_GET_WINDOW`.
pub const GET_WINDOW: &str = "GASNET_OFI_GET_WINDOW";
/// The smallest `GASNET_OFI_GET_WINDOW` other than 0 (off): a get larger
/// than a quarter of the window travels in pieces of a quarter of it.
pub const GET_WINDOW_MIN: usize = 64 << 10;

word_setting! {
    /// Whether gets through the provider whose destination starts 1 to 63
    /// bytes after the source within a page are read into a bounce buffer
    /// at a safe offset and copied out by the conduit
    /// (`GASNET_OFI_GET_BOUNCE`).
    GetBounce, accepts "one of auto, on (or yes, 1), off (or no, 0)" {
        /// Where the provider's profile says it copies a read within the
        /// posting call (`reads_in_call`: shm's cross-memory attach), it
        /// addresses memory by virtual address, the ranks may read each
        /// other by cross-memory attach (`FI_SHM_DISABLE_CMA` not true,
        /// Yama's `ptrace_scope` 0, or 1-2 with `CAP_SYS_PTRACE`), and a
        /// start-up probe finds the kernel's copy at least twice as slow at
        /// such an offset as at offset 0.
        #[default]
        Auto = "auto",
        /// Always (any provider).
        On = "on" | "yes" | "1",
        /// Never.
        Off = "off" | "no" | "0",
    }
}

word_setting! {
    /// Whether a segment that no other rank maps (no supernode peer) is
    /// anonymous memory advised for transparent huge pages instead of a
    /// memory file in ordinary pages (`GASNET_OFI_SEGMENT_HUGEPAGES`).
    SegmentHugepages, accepts "one of auto, on (or yes, 1), off (or no, 0)" {
        /// Where the provider's profile says it moves RMA data by
        /// cross-memory attach (`segment_hugepages`: shm), whose kernel
        /// copy pins the segment's pages, and the kernel's transparent huge
        /// page mode is `always` or `madvise`.
        #[default]
        Auto = "auto",
        /// On every provider (a no-op where the kernel's mode is `never`).
        On = "on" | "yes" | "1",
        /// Never: the segment is a memory file, as where supernode peers
        /// map it.
        Off = "off" | "no" | "0",
    }
}

/// Largest `GASNET_OFI_PUT_AGGREGATE_LIMIT`: one such put, with its piece
/// encoding, fits the smallest AM Medium (`GASNET_OFI_MAX_MEDIUM`'s
/// minimum).
pub const PUT_AGGREGATE_LIMIT_MAX: usize = 256;
/// `GASNET_OFI_PUT_AGGREGATE_LIMIT` on providers whose RMA is emulated in
/// software (the profile's `rma_offloaded` absent); 0 where the hardware
/// performs it.
pub const PUT_AGGREGATE_LIMIT_DEFAULT: usize = 256;

/// Default of `GASNET_OFI_NUM_BBUFS`.
pub const NUM_BBUFS_DEFAULT: usize = 64;
/// Most bounce buffers (`GASNET_OFI_NUM_BBUFS`): the pool's queue is
/// allocated whole at start-up.
pub const NUM_BBUFS_MAX: usize = 1 << 20;
/// The `GASNET_OFI_BBUF_THRESHOLD` default is this many bounce buffers.
pub const BBUF_THRESHOLD_DEFAULT_BBUFS: usize = 4;
/// The most bounce buffers one put may use: `GASNET_OFI_BBUF_THRESHOLD` may
/// be at most this many times `GASNET_OFI_BBUF_SIZE`.
pub const MAX_BBUFS_PER_PUT: usize = 32;
/// Default of `GASNET_OFI_RMA_POLL_FREQ`.
pub const RMA_POLL_FREQ_DEFAULT: usize = 32;

/// RMA settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RmaConfig {
    /// `GASNET_OFI_RMA_INJECT_LIMIT`: puts up to this size use `FI_INJECT`.
    /// `None` means the provider's maximum; see
    /// [`RmaConfig::resolve_inject_limit`].
    pub inject_limit: Option<usize>,
    /// `GASNET_OFI_BBUF_SIZE`: bytes per bounce buffer (default: the page
    /// size).
    pub bbuf_size: usize,
    /// `GASNET_OFI_NUM_BBUFS`: bounce buffers allocated at startup. At least
    /// `bbuf_threshold / bbuf_size`, rounded up.
    pub num_bbufs: usize,
    /// `GASNET_OFI_BBUF_THRESHOLD`: non-bulk puts above this block for remote
    /// completion instead of using bounce buffers. Default
    /// `4 * bbuf_size`, at most `32 * bbuf_size`.
    pub bbuf_threshold: usize,
    /// `GASNET_OFI_RMA_POLL_FREQ`: poll the transmit CQ once every this many
    /// RMA injections. At least 1.
    pub rma_poll_freq: usize,
    /// `GASNET_OFI_PUT_AGGREGATE_LIMIT`: implicit (NBI) puts of at most
    /// this many bytes to ranks outside the supernode are gathered into
    /// one AM per target (0: none). `None`: the provider profile's default
    /// (see [`RmaConfig::resolve_put_aggregate`]).
    pub put_aggregate: Option<usize>,
    /// `GASNET_OFI_GET_BOUNCE`: `auto` (default), `on` or `off`.
    pub get_bounce: GetBounce,
    /// `GASNET_OFI_GET_WINDOW`: bytes of gets through the provider in
    /// flight from one peer at most (0: no limit). `None`: the provider
    /// profile's `get_window` (see [`RmaConfig::resolve_get_window`]).
    pub get_window: Option<usize>,
    /// `GASNET_OFI_SEGMENT_HUGEPAGES`: `auto` (default), `on` or `off`.
    pub segment_hugepages: SegmentHugepages,
}

impl RmaConfig {
    /// Read the RMA variables; `page_size` is the `GASNET_OFI_BBUF_SIZE`
    /// default.
    pub fn from_env(r: &EnvReader<'_>, page_size: usize) -> Result<Self, ConfigError> {
        let inject_limit = opt_size(r, RMA_INJECT_LIMIT)?;
        let page = page_size.max(1);
        let size_rule = format!(
            "a positive multiple of the page size ({page} bytes; a number with an optional K, M, \
             G or T suffix)"
        );
        let bbuf_size = explained(size_in(r, BBUF_SIZE, page, 1, usize::MAX), &size_rule)?;
        if bbuf_size % page != 0 {
            return Err(
                EnvError::new(BBUF_SIZE, &value_text(r, BBUF_SIZE, bbuf_size), size_rule).into(),
            );
        }
        let num_bbufs = count(r, NUM_BBUFS, NUM_BBUFS_DEFAULT, 0);
        let bbuf_threshold = size_in(
            r,
            BBUF_THRESHOLD,
            bbuf_size.saturating_mul(BBUF_THRESHOLD_DEFAULT_BBUFS),
            0,
            usize::MAX,
        )?;
        let bbufs_per_put = bbuf_threshold.div_ceil(bbuf_size);
        if bbufs_per_put > MAX_BBUFS_PER_PUT {
            return Err(ConfigError::Conflict(EnvError::new(
                BBUF_THRESHOLD,
                &value_text(r, BBUF_THRESHOLD, bbuf_threshold),
                format!(
                    "a size of at most {} bytes ({MAX_BBUFS_PER_PUT} x {BBUF_SIZE} = \
{MAX_BBUFS_PER_PUT} x {bbuf_size})",
                    MAX_BBUFS_PER_PUT * bbuf_size
                ),
            )));
        }
        let count_rule = format!(
            "a whole number of at least {bbufs_per_put} ({BBUF_THRESHOLD} / {BBUF_SIZE} = \
{bbuf_threshold} / {bbuf_size})"
        );
        let num_bbufs = explained(num_bbufs, &count_rule)?;
        if num_bbufs > NUM_BBUFS_MAX {
            return Err(EnvError::new(
                NUM_BBUFS,
                &value_text(r, NUM_BBUFS, num_bbufs),
                format!("a whole number from {bbufs_per_put} to {NUM_BBUFS_MAX}"),
            )
            .into());
        }
        if num_bbufs < bbufs_per_put {
            return Err(ConfigError::Conflict(EnvError::new(
                NUM_BBUFS,
                &value_text(r, NUM_BBUFS, num_bbufs),
                count_rule,
            )));
        }
        let rma_poll_freq = count(r, RMA_POLL_FREQ, RMA_POLL_FREQ_DEFAULT, 1)?;
        let put_aggregate = match opt_size(r, PUT_AGGREGATE_LIMIT)? {
            Some(n) if n > PUT_AGGREGATE_LIMIT_MAX => {
                return Err(EnvError::new(
                    PUT_AGGREGATE_LIMIT,
                    &value_text(r, PUT_AGGREGATE_LIMIT, n),
                    format!(
                        "a size from 0 (off) to {PUT_AGGREGATE_LIMIT_MAX} bytes \
(unset: {PUT_AGGREGATE_LIMIT_DEFAULT} on providers that emulate RMA in software, 0 on others)"
                    ),
                )
                .into())
            }
            n => n,
        };
        let text = r.string(GET_BOUNCE, GetBounce::Auto.name());
        let get_bounce = text
            .parse::<GetBounce>()
            .map_err(|_| EnvError::new(GET_BOUNCE, &text, GetBounce::ACCEPTED))?;
        let get_window = match opt_size(r, GET_WINDOW)? {
            Some(n) if n != 0 && n < GET_WINDOW_MIN => {
                return Err(EnvError::new(
                    GET_WINDOW,
                    &value_text(r, GET_WINDOW, n),
                    format!(
                        "0 (no limit) or a size of at least {} (unset: the provider \
profile's window; a number with an optional K, M, G or T suffix)",
                        gex_env::format_size(GET_WINDOW_MIN as u64)
                    ),
                )
                .into())
            }
            n => n,
        };
        let text = r.string(SEGMENT_HUGEPAGES, SegmentHugepages::Auto.name());
        let segment_hugepages = text
            .parse::<SegmentHugepages>()
            .map_err(|_| EnvError::new(SEGMENT_HUGEPAGES, &text, SegmentHugepages::ACCEPTED))?;
        Ok(RmaConfig {
            get_bounce,
            segment_hugepages,
            get_window,
            inject_limit,
            bbuf_size,
            num_bbufs,
            bbuf_threshold,
            rma_poll_freq,
            put_aggregate,
        })
    }

    /// The RMA inject limit for a provider whose RMA endpoint injects at most
    /// `provider_max` bytes, with a note when the request was reduced (see
    /// [`resolve_inject_limit`]).
    pub fn resolve_inject_limit(&self, provider_max: usize) -> (usize, Option<String>) {
        resolve_inject_limit(self.inject_limit, provider_max, RMA_INJECT_LIMIT)
    }

    /// The aggregation limit in effect: the variable's value, else the
    /// default for a provider whose RMA is (`rma_offloaded`) or is not
    /// performed by the hardware.
    pub fn resolve_put_aggregate(&self, rma_offloaded: bool) -> usize {
        self.put_aggregate.unwrap_or(if rma_offloaded {
            0
        } else {
            PUT_AGGREGATE_LIMIT_DEFAULT
        })
    }

    /// The get window in effect: the variable's value, else the provider
    /// profile's (`profile`), else 0 (no limit).
    pub fn resolve_get_window(&self, profile: Option<usize>) -> usize {
        self.get_window.or(profile).unwrap_or(0)
    }

    /// Bounce buffers one put of `bbuf_threshold` bytes needs.
    pub fn bbufs_per_put(&self) -> usize {
        self.bbuf_threshold.div_ceil(self.bbuf_size.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    const PAGE: usize = 4096;

    fn read(env: &MapEnv) -> Result<RmaConfig, ConfigError> {
        RmaConfig::from_env(&EnvReader::quiet(env), PAGE)
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
    fn defaults_follow_the_page_size() {
        let c = read(&MapEnv::new()).unwrap();
        assert_eq!(c.inject_limit, None);
        assert_eq!(c.bbuf_size, 4096);
        assert_eq!(c.num_bbufs, 64);
        assert_eq!(c.bbuf_threshold, 16384);
        assert_eq!(c.rma_poll_freq, 32);
        assert_eq!(c.bbufs_per_put(), 4);
        let c = RmaConfig::from_env(&EnvReader::quiet(&MapEnv::new()), 65536).unwrap();
        assert_eq!((c.bbuf_size, c.bbuf_threshold), (65536, 262144));
    }

    #[test]
    fn get_window() {
        let c = read(&MapEnv::new()).unwrap();
        assert_eq!(c.get_window, None);
        assert_eq!(c.resolve_get_window(None), 0);
        assert_eq!(c.resolve_get_window(Some(4 << 20)), 4 << 20);
        for (v, want) in [("0", 0), ("64K", 65536), ("2m", 2 << 20)] {
            let c = read(&MapEnv::from([("GASNET_OFI_GET_WINDOW", v)])).unwrap();
            assert_eq!(c.get_window, Some(want));
            assert_eq!(
                c.resolve_get_window(Some(4 << 20)),
                want,
                "the user's value wins"
            );
        }
        assert_eq!(
            err(&[("GASNET_OFI_GET_WINDOW", "4096")]),
            "GASNET_OFI_GET_WINDOW=\"4096\" is not accepted: expected 0 (no limit) or a size of \
at least 64K (unset: the provider profile's window; a number with an optional K, M, G or T suffix)"
        );
        let e = err(&[("GASNET_OFI_GET_WINDOW", "wide")]);
        assert!(e.contains("GASNET_OFI_GET_WINDOW"), "{e}");
    }

    #[test]
    fn put_aggregate_limit() {
        let c = read(&MapEnv::new()).unwrap();
        assert_eq!(c.put_aggregate, None);
        assert_eq!(c.resolve_put_aggregate(false), 256);
        assert_eq!(c.resolve_put_aggregate(true), 0);
        for (v, want) in [("0", 0), ("8", 8), ("256", 256)] {
            let c = read(&MapEnv::from([("GASNET_OFI_PUT_AGGREGATE_LIMIT", v)])).unwrap();
            assert_eq!(c.put_aggregate, Some(want));
            assert_eq!(c.resolve_put_aggregate(true), want);
        }
        assert_eq!(
            err(&[("GASNET_OFI_PUT_AGGREGATE_LIMIT", "1K")]),
            "GASNET_OFI_PUT_AGGREGATE_LIMIT=\"1K\" is not accepted: expected a size from 0 (off) \
to 256 bytes (unset: 256 on providers that emulate RMA in software, 0 on others)"
        );
        let e = err(&[("GASNET_OFI_PUT_AGGREGATE_LIMIT", "lots")]);
        assert!(e.contains("GASNET_OFI_PUT_AGGREGATE_LIMIT"), "{e}");
    }

    #[test]
    fn bbuf_size_good_and_bad() {
        let env = MapEnv::from([("GASNET_OFI_BBUF_SIZE", "8K")]);
        let c = read(&env).unwrap();
        assert_eq!((c.bbuf_size, c.bbuf_threshold), (8192, 32768));
        assert_eq!(
            err(&[("GASNET_OFI_BBUF_SIZE", "0")]),
            "GASNET_OFI_BBUF_SIZE=\"0\" is not accepted: expected a positive multiple of the page \
size (4096 bytes; a number with an optional K, M, G or T suffix)"
        );
    }

    #[test]
    fn threshold_good_and_bad() {
        let env = MapEnv::from([("GASNET_OFI_BBUF_THRESHOLD", "128K")]);
        let c = read(&env).unwrap();
        assert_eq!((c.bbuf_threshold, c.bbufs_per_put()), (131072, 32));
        let env = MapEnv::from([("GASNET_OFI_BBUF_THRESHOLD", "0")]);
        assert_eq!(read(&env).unwrap().bbuf_threshold, 0);
        assert_eq!(
            err(&[("GASNET_OFI_BBUF_THRESHOLD", "131073")]),
            "GASNET_OFI_BBUF_THRESHOLD=\"131073\" is not accepted: expected a size of at most \
131072 bytes (32 x GASNET_OFI_BBUF_SIZE = 32 x 4096)"
        );
        assert_eq!(err(&[("GASNET_OFI_BBUF_THRESHOLD", "1.2K")]), "GASNET_OFI_BBUF_THRESHOLD=\"1.2K\" is not accepted: expected a size in bytes (a number with an optional K, M, G or T suffix) [1.2K is not a whole number of bytes]");
    }

    #[test]
    fn too_many_bounce_buffers_are_refused() {
        let env = MapEnv::from([("GASNET_OFI_NUM_BBUFS", "4000000000")]);
        let e = RmaConfig::from_env(&EnvReader::new(&env), 4096).unwrap_err();
        assert_eq!(
            e.to_string(),
            "GASNET_OFI_NUM_BBUFS=\"4000000000\" is not accepted: expected a whole number from 4 to 1048576"
        );
        let env = MapEnv::from([("GASNET_OFI_NUM_BBUFS", "1048576")]);
        assert!(RmaConfig::from_env(&EnvReader::new(&env), 4096).is_ok());
    }

    #[test]
    fn num_bbufs_rule() {
        let env = MapEnv::from([("GASNET_OFI_NUM_BBUFS", "4")]);
        assert_eq!(read(&env).unwrap().num_bbufs, 4);
        assert_eq!(
            err(&[("GASNET_OFI_NUM_BBUFS", "2")]),
            "GASNET_OFI_NUM_BBUFS=\"2\" is not accepted: expected a whole number of at least 4 \
(GASNET_OFI_BBUF_THRESHOLD / GASNET_OFI_BBUF_SIZE = 16384 / 4096)"
        );
        // Rounded up: 10000 bytes need 3 buffers of 4096.
        let env = MapEnv::from([
            ("GASNET_OFI_NUM_BBUFS", "3"),
            ("GASNET_OFI_BBUF_THRESHOLD", "10000"),
        ]);
        assert_eq!(read(&env).unwrap().bbufs_per_put(), 3);
        assert_eq!(
            err(&[
                ("GASNET_OFI_NUM_BBUFS", "2"),
                ("GASNET_OFI_BBUF_THRESHOLD", "10000")
            ]),
            "GASNET_OFI_NUM_BBUFS=\"2\" is not accepted: expected a whole number of at least 3 \
(GASNET_OFI_BBUF_THRESHOLD / GASNET_OFI_BBUF_SIZE = 10000 / 4096)"
        );
        assert_eq!(
            err(&[("GASNET_OFI_NUM_BBUFS", "x")]),
            "GASNET_OFI_NUM_BBUFS=\"x\" is not accepted: expected a whole number of at least 4 \
(GASNET_OFI_BBUF_THRESHOLD / GASNET_OFI_BBUF_SIZE = 16384 / 4096)"
        );
        // No bounce buffers at all is fine with a zero threshold.
        let env = MapEnv::from([
            ("GASNET_OFI_NUM_BBUFS", "0"),
            ("GASNET_OFI_BBUF_THRESHOLD", "0"),
        ]);
        assert_eq!(read(&env).unwrap().num_bbufs, 0);
    }

    #[test]
    fn get_bounce_words() {
        assert_eq!(read(&MapEnv::new()).unwrap().get_bounce, GetBounce::Auto);
        for (v, want) in [
            ("auto", GetBounce::Auto),
            (" ON ", GetBounce::On),
            ("1", GetBounce::On),
            ("no", GetBounce::Off),
            ("0", GetBounce::Off),
        ] {
            let c = read(&MapEnv::from([("GASNET_OFI_GET_BOUNCE", v)])).unwrap();
            assert_eq!(c.get_bounce, want, "{v:?}");
        }
        assert_eq!(
            err(&[("GASNET_OFI_GET_BOUNCE", "sometimes")]),
            "GASNET_OFI_GET_BOUNCE=\"sometimes\" is not accepted: expected one of auto, on (or yes, \
1), off (or no, 0)"
        );
    }

    #[test]
    fn segment_hugepages_words() {
        let c = read(&MapEnv::new()).unwrap();
        assert_eq!(c.segment_hugepages, SegmentHugepages::Auto);
        for (v, want) in [
            ("auto", SegmentHugepages::Auto),
            ("yes", SegmentHugepages::On),
            (" off", SegmentHugepages::Off),
        ] {
            let c = read(&MapEnv::from([("GASNET_OFI_SEGMENT_HUGEPAGES", v)])).unwrap();
            assert_eq!(c.segment_hugepages, want, "{v:?}");
        }
        assert_eq!(
            err(&[("GASNET_OFI_SEGMENT_HUGEPAGES", "2M")]),
            "GASNET_OFI_SEGMENT_HUGEPAGES=\"2M\" is not accepted: expected one of auto, on (or \
yes, 1), off (or no, 0)"
        );
    }

    #[test]
    fn poll_freq_good_and_bad() {
        let env = MapEnv::from([("GASNET_OFI_RMA_POLL_FREQ", "1")]);
        assert_eq!(read(&env).unwrap().rma_poll_freq, 1);
        assert_eq!(
            err(&[("GASNET_OFI_RMA_POLL_FREQ", "0")]),
            "GASNET_OFI_RMA_POLL_FREQ=\"0\" is not accepted: expected a whole number of at least 1"
        );
    }

    #[test]
    fn rma_inject_limit_and_clamp() {
        let env = MapEnv::from([("GASNET_OFI_RMA_INJECT_LIMIT", "1M")]);
        let c = read(&env).unwrap();
        assert_eq!(c.inject_limit, Some(1 << 20));
        let (n, note) = c.resolve_inject_limit(192);
        assert_eq!(n, 192);
        assert_eq!(
            note.unwrap(),
            "GASNET_OFI_RMA_INJECT_LIMIT=1048576 is above the provider's maximum inject size of \
192 bytes; using 192"
        );
        assert_eq!(err(&[("GASNET_OFI_RMA_INJECT_LIMIT", "1K2")]), "GASNET_OFI_RMA_INJECT_LIMIT=\"1K2\" is not accepted: expected a size in bytes (a number with an optional K, M, G or T suffix) [\"1K2\" is not a number]");
    }
}
