//! Small reading helpers on top of [`gex_env::EnvReader`] that the typed
//! readers of this module share. Every helper records the read, so
//! `GASNET_VERBOSEENV` and [`gex_env::EnvReader::reads`] see it.

use gex_env::{parse_bool, parse_size, EnvError, EnvReader, BOOL_ACCEPTED};

/// The text to quote in an error about `name`: the value as found in the
/// environment, or the effective default when the variable is unset.
pub(crate) fn value_text(r: &EnvReader<'_>, name: &str, effective: impl ToString) -> String {
    r.peek(name).unwrap_or_else(|| effective.to_string())
}

/// `res`, with a refusal's accepted-values text replaced by `expected`:
/// where a variable's rule is more than a read's own bounds (a minimum
/// that depends on another variable, values that are excluded), every
/// refusal states the whole rule. A parse failure's reason
/// ([`EnvError::reason`]) is kept.
pub(crate) fn explained<T>(res: Result<T, EnvError>, expected: &str) -> Result<T, EnvError> {
    res.map_err(|mut e| {
        e.expected = expected.to_string();
        e
    })
}

/// An optional boolean: `None` when unset or empty.
pub(crate) fn opt_bool(r: &EnvReader<'_>, name: &str) -> Result<Option<bool>, EnvError> {
    match r.peek(name) {
        None => {
            r.record(name, "", true);
            Ok(None)
        }
        Some(v) => {
            r.record(name, &v, false);
            parse_bool(&v)
                .map(Some)
                .ok_or_else(|| EnvError::new(name, &v, BOOL_ACCEPTED))
        }
    }
}

/// A count that must fit in `usize` (`uint` of gex-env, converted).
pub(crate) fn count(
    r: &EnvReader<'_>,
    name: &str,
    default: usize,
    min: usize,
) -> Result<usize, EnvError> {
    let max = usize::MAX as u64;
    let n = r.uint(name, default as u64, min as u64, max)?;
    usize::try_from(n).map_err(|_| EnvError::new(name, &value_text(r, name, n), "a smaller number"))
}

/// A count with a default, from `min` to `max` (an error names the range).
pub(crate) fn count_in(
    r: &EnvReader<'_>,
    name: &str,
    default: usize,
    min: usize,
    max: usize,
) -> Result<usize, EnvError> {
    let n = r.uint(name, default as u64, min as u64, max as u64)?;
    // `n <= max`, and `max` is a usize.
    Ok(n as usize)
}

/// A size in bytes with a default, at least `min`, at most `max`, as `usize`.
pub(crate) fn size_in(
    r: &EnvReader<'_>,
    name: &str,
    default: usize,
    min: usize,
    max: usize,
) -> Result<usize, EnvError> {
    let rule = || {
        format!(
            "a size from {min} bytes to {} (a number with an optional K, M, G or T suffix)",
            gex_env::format_size(max as u64)
        )
    };
    // A value that is no size at all, or below `min`, is told the whole
    // range too (the parser's reason kept), where there is an upper bound.
    let n = r.size(name, default as u64, min as u64).map_err(|mut e| {
        if max < usize::MAX {
            e.expected = rule();
        }
        e
    })?;
    if n > max as u64 {
        return Err(EnvError::new(name, &value_text(r, name, n), rule()));
    }
    // `n <= max`, and `max` is a usize.
    Ok(n as usize)
}

/// An optional size in bytes, as `usize`.
pub(crate) fn opt_size(r: &EnvReader<'_>, name: &str) -> Result<Option<usize>, EnvError> {
    match r.opt_size(name, 0)? {
        None => Ok(None),
        Some(n) => usize::try_from(n).map(Some).map_err(|_| {
            EnvError::new(
                name,
                &value_text(r, name, n),
                format!(
                    "a size of at most {} (a number with an optional K, M, G or T suffix)",
                    gex_env::format_size(usize::MAX as u64)
                ),
            )
        }),
    }
}

/// Parse a size that is already known to be present; used by readers that
/// accept words besides sizes.
pub(crate) fn parse_size_usize(text: &str) -> Option<usize> {
    parse_size(text).ok().and_then(|n| usize::try_from(n).ok())
}

/// The host's page size (`sysconf(_SC_PAGESIZE)`), 4096 if unknown.
pub fn host_page_size() -> usize {
    use nix::unistd::{sysconf, SysconfVar};
    match sysconf(SysconfVar::PAGE_SIZE) {
        Ok(Some(n)) if n > 0 => n as usize,
        _ => 4096,
    }
}

/// The host's physical memory in bytes (`_SC_PHYS_PAGES` x page size), when
/// the system reports it.
pub fn host_physical_memory() -> Option<u64> {
    use nix::unistd::{sysconf, SysconfVar};
    match sysconf(SysconfVar::_PHYS_PAGES) {
        Ok(Some(pages)) if pages > 0 => (pages as u64).checked_mul(host_page_size() as u64),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gex_env::MapEnv;

    #[test]
    fn opt_bool_records_and_parses() {
        let env = MapEnv::from([("GASNET_OFI_SET_UNIVERSE_SIZE", "no")]);
        let r = EnvReader::quiet(&env);
        assert_eq!(
            opt_bool(&r, "GASNET_OFI_SET_UNIVERSE_SIZE"),
            Ok(Some(false))
        );
        assert_eq!(opt_bool(&r, "GASNET_QUIET"), Ok(None));
        let reads = r.reads();
        assert_eq!(reads.len(), 2);
        assert!(reads[1].defaulted);
    }

    #[test]
    fn host_facts_are_sane() {
        assert!(host_page_size().is_power_of_two());
        if let Some(m) = host_physical_memory() {
            assert!(m > 0);
        }
    }
}
