//! Tagged point-to-point messaging settings: the variables of Open MPI's OFI
//! MTL (`mtl_ofi_*`) under `GASNET_OFI_*` names.
//!
//! The provider lists (`mtl_ofi_provider_include` / `_exclude`) narrow the
//! one provider selection of the whole conduit and are read separately, as
//! [`super::ProviderList`].

use super::read::count_in;
use super::ConfigError;
use ::tagged::TagMode;
use gex_env::{EnvError, EnvReader};

/// `GASNET_OFI_TAG_MODE` (Open MPI's `mtl_ofi_tag_mode`).
pub const TAG_MODE: &str = "GASNET_OFI_TAG_MODE";
/// `GASNET_OFI_PROGRESS_EVENT_CNT` (`mtl_ofi_progress_event_cnt`).
pub const PROGRESS_EVENT_CNT: &str = "GASNET_OFI_PROGRESS_EVENT_CNT";
/// `GASNET_OFI_ENABLE_SEP` (`mtl_ofi_enable_sep`).
pub const ENABLE_SEP: &str = "GASNET_OFI_ENABLE_SEP";
/// `GASNET_OFI_THREAD_GROUPING` (`mtl_ofi_thread_grouping`).
pub const THREAD_GROUPING: &str = "GASNET_OFI_THREAD_GROUPING";
/// `GASNET_OFI_NUM_CTXTS` (`mtl_ofi_num_ctxts`).
pub const NUM_CTXTS: &str = "GASNET_OFI_NUM_CTXTS";

/// Default of `GASNET_OFI_PROGRESS_EVENT_CNT` (Open MPI's default).
pub const PROGRESS_EVENT_CNT_DEFAULT: usize = 100;
/// Largest accepted `GASNET_OFI_PROGRESS_EVENT_CNT`: 65536 completions per
/// read (a tagged completion entry is 40 bytes, so one batch stays below
/// 3 MiB; larger batches only delay the first completion's handling).
pub const PROGRESS_EVENT_CNT_MAX: usize = 1 << 16;
/// Default of `GASNET_OFI_NUM_CTXTS` (Open MPI's default).
pub const NUM_CTXTS_DEFAULT: usize = 1;
/// Largest accepted `GASNET_OFI_NUM_CTXTS`: 256 contexts, beyond the
/// transmit/receive context counts of any provider and far beyond the
/// threads a process usefully drives.
pub const NUM_CTXTS_MAX: usize = 256;

/// Tagged messaging settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaggedConfig {
    /// `GASNET_OFI_TAG_MODE`: how the communicator id, source rank and tag
    /// share the 64-bit libfabric tag. Default [`TagMode::Auto`].
    pub tag_mode: TagMode,
    /// `GASNET_OFI_PROGRESS_EVENT_CNT`: completions read per call when the
    /// progress function drains the completion queue (it reads batches of
    /// this many until the queue is empty). From 1 to
    /// [`PROGRESS_EVENT_CNT_MAX`], default 100.
    pub progress_event_cnt: usize,
    /// `GASNET_OFI_ENABLE_SEP`: open a scalable endpoint whose transmit and
    /// receive contexts are created lazily as communicators are duplicated.
    pub enable_sep: bool,
    /// `GASNET_OFI_THREAD_GROUPING`: a communicator's id picks its context
    /// (of the scalable endpoint, or without SEP one regular endpoint per
    /// context), so threads on different communicators do not share one.
    pub thread_grouping: bool,
    /// `GASNET_OFI_NUM_CTXTS`: most contexts to create, from 1 to
    /// [`NUM_CTXTS_MAX`], default 1. Only thread grouping uses more than
    /// one; see [`TaggedConfig::notes`].
    pub num_ctxts: usize,
}

impl Default for TaggedConfig {
    fn default() -> Self {
        TaggedConfig {
            tag_mode: TagMode::Auto,
            progress_event_cnt: PROGRESS_EVENT_CNT_DEFAULT,
            enable_sep: false,
            thread_grouping: false,
            num_ctxts: NUM_CTXTS_DEFAULT,
        }
    }
}

impl TaggedConfig {
    /// Read the tagged messaging variables.
    pub fn from_env(r: &EnvReader<'_>) -> Result<Self, ConfigError> {
        let mode = r.string(TAG_MODE, TagMode::Auto.name());
        let tag_mode = mode
            .parse::<TagMode>()
            .map_err(|_| EnvError::new(TAG_MODE, &mode, TagMode::ACCEPTED))?;
        Ok(TaggedConfig {
            tag_mode,
            progress_event_cnt: count_in(
                r,
                PROGRESS_EVENT_CNT,
                PROGRESS_EVENT_CNT_DEFAULT,
                1,
                PROGRESS_EVENT_CNT_MAX,
            )?,
            enable_sep: r.bool(ENABLE_SEP, false)?,
            thread_grouping: r.bool(THREAD_GROUPING, false)?,
            num_ctxts: count_in(r, NUM_CTXTS, NUM_CTXTS_DEFAULT, 1, NUM_CTXTS_MAX)?,
        })
    }

    /// How many contexts are in use at most: `num_ctxts` with thread
    /// grouping, otherwise 1 (every communicator on context 0, as in Open
    /// MPI, whether or not SEP is on).
    pub fn contexts_in_use(&self) -> usize {
        if self.thread_grouping {
            self.num_ctxts
        } else {
            1
        }
    }

    /// Notes about settings that are accepted but have no effect (start-up
    /// prints them as warnings on rank 0 unless `GASNET_QUIET=1`):
    /// `GASNET_OFI_NUM_CTXTS` above 1 without `GASNET_OFI_THREAD_GROUPING`.
    pub fn notes(&self) -> Vec<String> {
        let mut notes = Vec::new();
        if self.num_ctxts > 1 && !self.thread_grouping {
            let sep = if self.enable_sep {
                "the scalable endpoint's first context serves every communicator"
            } else {
                "one endpoint serves every communicator"
            };
            notes.push(format!(
                "{NUM_CTXTS}={} has no effect without {THREAD_GROUPING}=1: {sep}",
                self.num_ctxts
            ));
        }
        notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    fn read(env: &MapEnv) -> Result<TaggedConfig, ConfigError> {
        TaggedConfig::from_env(&EnvReader::quiet(env))
    }

    #[test]
    fn defaults() {
        let c = read(&MapEnv::new()).unwrap();
        assert_eq!(c, TaggedConfig::default());
        assert_eq!(
            c,
            TaggedConfig {
                tag_mode: TagMode::Auto,
                progress_event_cnt: 100,
                enable_sep: false,
                thread_grouping: false,
                num_ctxts: 1,
            }
        );
        assert_eq!(c.contexts_in_use(), 1);
        assert!(c.notes().is_empty());
    }

    #[test]
    fn every_variable_is_recorded() {
        let env = MapEnv::new();
        let r = EnvReader::quiet(&env);
        TaggedConfig::from_env(&r).unwrap();
        let names: Vec<String> = r.reads().into_iter().map(|x| x.name).collect();
        assert_eq!(
            names,
            [
                TAG_MODE,
                PROGRESS_EVENT_CNT,
                ENABLE_SEP,
                THREAD_GROUPING,
                NUM_CTXTS
            ]
        );
        assert_eq!(
            r.reads()[0].to_string(),
            "ENV parameter: GASNET_OFI_TAG_MODE = auto   (default)"
        );
    }

    #[test]
    fn good_values() {
        for (v, want) in [
            ("auto", TagMode::Auto),
            ("ofi_tag_1", TagMode::Tag1),
            ("OFI_TAG_2", TagMode::Tag2),
            (" ofi_tag_full ", TagMode::Full),
        ] {
            let env = MapEnv::from([(TAG_MODE, v)]);
            assert_eq!(read(&env).unwrap().tag_mode, want, "{v}");
        }
        let env = MapEnv::from([
            (PROGRESS_EVENT_CNT, "65536"),
            (ENABLE_SEP, "1"),
            (THREAD_GROUPING, "yes"),
            (NUM_CTXTS, "256"),
        ]);
        let c = read(&env).unwrap();
        assert_eq!(
            (
                c.progress_event_cnt,
                c.enable_sep,
                c.thread_grouping,
                c.num_ctxts
            ),
            (65536, true, true, 256)
        );
        assert_eq!(c.contexts_in_use(), 256);
        assert!(c.notes().is_empty());
    }

    #[test]
    fn thread_grouping_without_sep_is_accepted() {
        let env = MapEnv::from([(THREAD_GROUPING, "on"), (NUM_CTXTS, "4")]);
        let c = read(&env).unwrap();
        assert!(c.thread_grouping && !c.enable_sep);
        assert_eq!(c.contexts_in_use(), 4);
        assert!(c.notes().is_empty());
    }

    #[test]
    fn contexts_without_thread_grouping_are_a_note() {
        let env = MapEnv::from([(NUM_CTXTS, "4")]);
        let c = read(&env).unwrap();
        assert_eq!(c.contexts_in_use(), 1);
        assert_eq!(
            c.notes(),
            [
                "GASNET_OFI_NUM_CTXTS=4 has no effect without GASNET_OFI_THREAD_GROUPING=1: \
one endpoint serves every communicator"
            ]
        );
        let env = MapEnv::from([(NUM_CTXTS, "4"), (ENABLE_SEP, "1")]);
        assert_eq!(
            read(&env).unwrap().notes(),
            [
                "GASNET_OFI_NUM_CTXTS=4 has no effect without GASNET_OFI_THREAD_GROUPING=1: \
the scalable endpoint's first context serves every communicator"
            ]
        );
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let boolean = "a boolean: 1/0, yes/no, y/n, true/false or on/off";
        for (name, value, expected) in [
            (
                TAG_MODE,
                "ofi_tag_3",
                "auto, ofi_tag_1, ofi_tag_2 or ofi_tag_full",
            ),
            (
                TAG_MODE,
                "full",
                "auto, ofi_tag_1, ofi_tag_2 or ofi_tag_full",
            ),
            (PROGRESS_EVENT_CNT, "0", "a whole number from 1 to 65536"),
            (
                PROGRESS_EVENT_CNT,
                "65537",
                "a whole number from 1 to 65536",
            ),
            (PROGRESS_EVENT_CNT, "1K", "a whole number from 1 to 65536"),
            (ENABLE_SEP, "2", boolean),
            (THREAD_GROUPING, "maybe", boolean),
            (NUM_CTXTS, "0", "a whole number from 1 to 256"),
            (NUM_CTXTS, "257", "a whole number from 1 to 256"),
            (NUM_CTXTS, "-1", "a whole number from 1 to 256"),
        ] {
            let env = MapEnv::from([(name, value)]);
            let e = read(&env).unwrap_err();
            assert!(matches!(e, ConfigError::BadValue(_)));
            assert_eq!(
                e.to_string(),
                format!("{name}=\"{value}\" is not accepted: expected {expected}")
            );
        }
    }
}
