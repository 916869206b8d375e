//! Resolution of requested inject limits against the provider's maximum.

/// The inject limit to use for a request `requested` (from variable `var`)
/// on a provider whose maximum inject size is `provider_max`.
///
/// * Unset: the provider's maximum.
/// * At most the maximum: as requested.
/// * Above it: the provider's maximum, and a note naming the variable, the
///   requested and the provider's value (start-up prints it as a warning
///   on rank 0 unless `GASNET_QUIET=1`).
pub fn resolve_inject_limit(
    requested: Option<usize>,
    provider_max: usize,
    var: &str,
) -> (usize, Option<String>) {
    match requested {
        None => (provider_max, None),
        Some(req) if req <= provider_max => (req, None),
        Some(req) => {
            let note = format!(
                "{var}={req} is above the provider's maximum inject size of {provider_max} bytes; \
using {provider_max}"
            );
            (provider_max, Some(note))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unset_is_provider_max() {
        assert_eq!(
            resolve_inject_limit(None, 64, "GASNET_OFI_AM_INJECT_LIMIT"),
            (64, None)
        );
    }

    #[test]
    fn within_is_kept() {
        assert_eq!(
            resolve_inject_limit(Some(0), 64, "GASNET_OFI_AM_INJECT_LIMIT"),
            (0, None)
        );
        assert_eq!(
            resolve_inject_limit(Some(64), 64, "GASNET_OFI_AM_INJECT_LIMIT"),
            (64, None)
        );
    }

    #[test]
    fn above_is_clamped_with_a_note() {
        let (n, note) = resolve_inject_limit(Some(4096), 192, "GASNET_OFI_RMA_INJECT_LIMIT");
        assert_eq!(n, 192);
        assert_eq!(
            note.as_deref(),
            Some(
                "GASNET_OFI_RMA_INJECT_LIMIT=4096 is above the provider's maximum inject size of \
192 bytes; using 192"
            )
        );
    }
}
