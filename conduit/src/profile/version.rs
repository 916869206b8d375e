//! libfabric versions (`1.15`, `1.15.2`).

use serde::{Deserialize, Deserializer};
use std::fmt;

/// A libfabric version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major.
    pub major: u32,
    /// Minor.
    pub minor: u32,
    /// Revision (0 when unknown).
    pub patch: u32,
}

impl Version {
    /// Build a version.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version {
            major,
            minor,
            patch,
        }
    }

    /// Parse `1.15` or `1.15.2`.
    pub fn parse(s: &str) -> Result<Version, String> {
        let parts: Vec<&str> = s.trim().split('.').collect();
        if parts.len() < 2 || parts.len() > 3 {
            return Err(format!("{s:?} is not a version like 1.15 or 1.15.2"));
        }
        let num = |p: &str| {
            p.parse::<u32>()
                .map_err(|_| format!("{s:?} is not a version like 1.15 or 1.15.2"))
        };
        Ok(Version {
            major: num(parts[0])?,
            minor: num(parts[1])?,
            patch: if parts.len() == 3 { num(parts[2])? } else { 0 },
        })
    }

    /// The libfabric library in use. `fi_version()` gives major.minor; the
    /// revision comes from a core provider's `prov_version`, which libfabric
    /// encodes as `FI_VERSION(major * 100 + minor, revision)`, when one is
    /// given and agrees.
    pub fn libfabric(core_prov_version: Option<(u32, u32)>) -> Version {
        let (major, minor) = crate::ofi::runtime_version();
        let patch = match core_prov_version {
            Some((pm, rev)) if pm == major * 100 + minor => rev,
            _ => 0,
        };
        Version::new(major, minor, patch)
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.patch == 0 {
            write!(f, "{}.{}", self.major, self.minor)
        } else {
            write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
        }
    }
}

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Version::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_order() {
        assert_eq!(Version::parse("1.15").unwrap(), Version::new(1, 15, 0));
        assert_eq!(Version::parse("1.15.2").unwrap(), Version::new(1, 15, 2));
        assert!(Version::parse("1").is_err());
        assert!(Version::parse("1.x").is_err());
        assert!(Version::new(1, 15, 2) > Version::new(1, 15, 0));
        assert!(Version::new(1, 9, 0) < Version::new(1, 15, 0));
        assert_eq!(Version::new(1, 15, 2).to_string(), "1.15.2");
        assert_eq!(Version::new(1, 17, 0).to_string(), "1.17");
    }

    #[test]
    fn libfabric_revision_from_core_provider() {
        let v = Version::libfabric(None);
        assert!(v >= Version::new(1, 15, 0));
        let with_rev = Version::libfabric(Some((v.major * 100 + v.minor, 3)));
        assert_eq!(with_rev.patch, 3);
        let external = Version::libfabric(Some((2, 5)));
        assert_eq!(external.patch, 0);
    }
}
