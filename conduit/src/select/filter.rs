//! `FI_PROVIDER` as libfabric interprets it: a comma-separated list of
//! provider names, or with a leading `^` a list to exclude. A layered
//! provider (`tcp;ofi_rxm`) is matched by its full name or by its core
//! provider's name (`tcp`).
//!
//! The conduit applies the filter itself (and removes `FI_PROVIDER` from the
//! environment before libfabric starts), so that when nothing matches it can
//! say what is available instead of only "no provider".

/// A parsed `FI_PROVIDER` value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProviderFilter {
    names: Vec<String>,
    exclude: bool,
}

impl ProviderFilter {
    /// Parse a value like `tcp`, `shm,tcp;ofi_rxm` or `^sockets,udp`.
    pub fn parse(value: &str) -> ProviderFilter {
        let v = value.trim();
        let (exclude, list) = match v.strip_prefix('^') {
            Some(rest) => (true, rest),
            None => (false, v),
        };
        ProviderFilter {
            names: list
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect(),
            exclude,
        }
    }

    /// Whether `provider` passes.
    pub fn matches(&self, provider: &str) -> bool {
        let core = provider.split(';').next().unwrap_or(provider);
        let listed = self.names.iter().any(|n| n == provider || n == core);
        listed != self.exclude
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_libfabric() {
        let f = ProviderFilter::parse("tcp");
        assert!(f.matches("tcp;ofi_rxm"));
        assert!(f.matches("tcp"));
        assert!(!f.matches("shm"));
        let f = ProviderFilter::parse("tcp;ofi_rxm");
        assert!(f.matches("tcp;ofi_rxm"));
        assert!(!f.matches("udp;ofi_rxd"));
        assert!(!ProviderFilter::parse("ofi_rxm").matches("tcp;ofi_rxm"));
        let f = ProviderFilter::parse("^tcp");
        assert!(!f.matches("tcp;ofi_rxm"));
        assert!(f.matches("shm"));
        let f = ProviderFilter::parse("shm, udp");
        assert!(f.matches("shm") && f.matches("udp;ofi_rxd") && !f.matches("sockets"));
        assert!(!ProviderFilter::parse("nonexistent").matches("shm"));
    }
}
