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

    /// The names in the list that some provider of `offered` has as its
    /// full name (none for an exclusion list).
    fn exact_names<'a>(&self, offered: impl Iterator<Item = &'a str>) -> Vec<&str> {
        if self.exclude {
            return Vec::new();
        }
        let offered: Vec<&str> = offered.collect();
        self.names
            .iter()
            .filter(|n| offered.contains(&n.as_str()))
            .map(|n| n.as_str())
            .collect()
    }
}

impl ProviderFilter {
    /// Keep the providers of `pool` this filter selects: those it matches,
    /// less those matched only through a core name that another offered
    /// provider has as its full name. With libfabric 2.x, `tcp` is the
    /// native tcp RDM provider and also the core of `tcp;ofi_rxm`:
    /// `FI_PROVIDER=tcp` then means the native one, as libfabric lists it
    /// first, and `tcp;ofi_rxm` is asked for by its full name. With 1.x (no
    /// native tcp RDM), `tcp` still selects `tcp;ofi_rxm`.
    pub fn keep<T>(&self, pool: &mut Vec<T>, name: impl Fn(&T) -> &str) {
        pool.retain(|c| self.matches(name(c)));
        let exact = self.exact_names(pool.iter().map(&name));
        if exact.is_empty() {
            return;
        }
        pool.retain(|c| {
            let p = name(c);
            let core = p.split(';').next().unwrap_or(p);
            // Kept: named exactly, or matched by a name nobody has in full.
            exact.contains(&p)
                || self
                    .names
                    .iter()
                    .any(|n| (n == p || n == core) && !exact.contains(&n.as_str()))
        });
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

    #[test]
    fn a_provider_named_exactly_wins_over_one_matched_by_its_core() {
        let offered = ["tcp;ofi_rxm", "tcp", "shm"];
        let pick = |v: &str| {
            let mut pool = offered.to_vec();
            ProviderFilter::parse(v).keep(&mut pool, |p| p);
            pool
        };
        assert_eq!(pick("tcp"), ["tcp"]);
        assert_eq!(pick("tcp;ofi_rxm"), ["tcp;ofi_rxm"]);
        // Without a native tcp (libfabric 1.x), tcp still selects rxm.
        let mut pool = vec!["tcp;ofi_rxm"];
        ProviderFilter::parse("tcp").keep(&mut pool, |p| p);
        assert_eq!(pool, ["tcp;ofi_rxm"]);
        // An exclusion list names nothing exactly.
        assert_eq!(pick("^shm"), ["tcp;ofi_rxm", "tcp"]);
        assert_eq!(pick("shm,tcp"), ["tcp", "shm"]);
        assert_eq!(pick("shm,tcp;ofi_rxm"), ["tcp;ofi_rxm", "shm"]);
        // A list with a name that is exact for one provider keeps the
        // providers its other names match by core (libfabric 1.x).
        let mut pool = vec!["tcp;ofi_rxm", "shm"];
        ProviderFilter::parse("shm,tcp").keep(&mut pool, |p| p);
        assert_eq!(pool, ["tcp;ofi_rxm", "shm"]);
    }
}
