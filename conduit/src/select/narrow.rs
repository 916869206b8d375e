//! Narrowing the usable providers by the user's provider variables:
//! `FI_PROVIDER` ([`ProviderFilter`], libfabric's semantics) and
//! `GASNET_OFI_PROVIDER_INCLUDE` / `_EXCLUDE` ([`ProviderList`], Open MPI's).
//!
//! The list is applied first, then `FI_PROVIDER` on what is left, so that
//! `FI_PROVIDER`'s preference for a provider named in full only chooses
//! among providers the list allows (`FI_PROVIDER=tcp` with
//! `GASNET_OFI_PROVIDER_INCLUDE=tcp;ofi_rxm` gives `tcp;ofi_rxm`, which
//! `tcp` selects in libfabric's sense too). All must agree:
//!
//! * a variable that alone matches no usable provider is
//!   [`SelectError::NoSuchProvider`], naming it and listing what is usable;
//! * variables that each allow some provider but none in common are
//!   [`SelectError::NoCommonProvider`], quoting each one and what it allows.

use super::{unique, ProviderFilter, SelectError};
use crate::config::libfabric_vars::FI_PROVIDER;
use crate::config::ProviderList;

/// Keep the providers of `pool` (the usable candidates, in libfabric's
/// order) that `fi_provider` and `list` select; `name` gives a candidate's
/// provider name. An error says which variable leaves nothing.
pub(super) fn by_provider<T>(
    pool: &mut Vec<T>,
    name: impl Fn(&T) -> &str,
    fi_provider: Option<&str>,
    list: &ProviderList,
) -> Result<(), SelectError> {
    let usable = || unique(pool.iter().map(|c| name(c).to_string()));
    let filter = fi_provider.map(|v| (v, ProviderFilter::parse(v)));
    if let Some((value, f)) = &filter {
        if !pool.iter().any(|c| f.matches(name(c))) {
            return Err(SelectError::NoSuchProvider {
                var: FI_PROVIDER.into(),
                value: value.to_string(),
                available: usable(),
            });
        }
    }
    let Some((var, value)) = list.setting() else {
        if let Some((_, f)) = &filter {
            f.keep(pool, &name);
        }
        return Ok(());
    };
    let list_allows = unique(
        pool.iter()
            .map(&name)
            .filter(|p| list.matches(p))
            .map(str::to_string),
    );
    if list_allows.is_empty() {
        return Err(SelectError::NoSuchProvider {
            var: var.into(),
            value: value.into(),
            available: usable(),
        });
    }
    let Some((fi_value, f)) = filter else {
        pool.retain(|c| list.matches(name(c)));
        return Ok(());
    };
    let fi_allows = unique(
        pool.iter()
            .map(&name)
            .filter(|p| f.matches(p))
            .map(str::to_string),
    );
    pool.retain(|c| list.matches(name(c)));
    f.keep(pool, &name);
    if pool.is_empty() {
        return Err(SelectError::NoCommonProvider {
            fi_provider: fi_value.to_string(),
            var: var.into(),
            value: value.into(),
            fi_allows,
            list_allows,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{provider_list, ConfigError};
    use crate::select::{select, SelectOptions};
    use gex_env::{EnvReader, MapEnv};

    /// What libfabric 2.x offers on a test machine, in its order.
    const OFFERED: [&str; 5] = ["tcp;ofi_rxm", "tcp", "shm", "udp;ofi_rxd", "sockets"];

    fn list(var: &str, value: &str) -> ProviderList {
        let env = MapEnv::from([(var, value)]);
        ProviderList::from_env(&EnvReader::quiet(&env)).unwrap()
    }

    fn include(v: &str) -> ProviderList {
        list(provider_list::PROVIDER_INCLUDE, v)
    }

    fn exclude(v: &str) -> ProviderList {
        list(provider_list::PROVIDER_EXCLUDE, v)
    }

    fn pick(fi: Option<&str>, l: &ProviderList) -> Result<Vec<&'static str>, String> {
        let mut pool = OFFERED.to_vec();
        by_provider(&mut pool, |p| p, fi, l).map_err(|e| e.to_string())?;
        Ok(pool)
    }

    #[test]
    fn without_a_list_fi_provider_is_unchanged() {
        assert_eq!(pick(None, &ProviderList::All).unwrap(), OFFERED);
        assert_eq!(pick(Some("tcp"), &ProviderList::All).unwrap(), ["tcp"]);
        assert_eq!(
            pick(Some("nonexistent"), &ProviderList::All).unwrap_err(),
            "FI_PROVIDER=\"nonexistent\" matches no usable provider; usable providers here: \
tcp;ofi_rxm, tcp, shm, udp;ofi_rxd, sockets"
        );
    }

    #[test]
    fn include_and_exclude_filter() {
        assert_eq!(pick(None, &include("tcp")).unwrap(), ["tcp;ofi_rxm", "tcp"]);
        assert_eq!(
            pick(None, &include("shm,udp;ofi_rxd")).unwrap(),
            ["shm", "udp;ofi_rxd"]
        );
        assert_eq!(
            pick(None, &exclude("tcp,sockets")).unwrap(),
            ["shm", "udp;ofi_rxd"]
        );
        assert_eq!(
            pick(None, &exclude("tcp;ofi_rxm")).unwrap(),
            ["tcp", "shm", "udp;ofi_rxd", "sockets"]
        );
    }

    #[test]
    fn agreeing_variables_narrow_together() {
        assert_eq!(pick(Some("tcp"), &include("tcp")).unwrap(), ["tcp"]);
        // The list goes first: FI_PROVIDER=tcp also selects tcp;ofi_rxm.
        assert_eq!(
            pick(Some("tcp"), &include("tcp;ofi_rxm")).unwrap(),
            ["tcp;ofi_rxm"]
        );
        assert_eq!(
            pick(Some("^shm"), &exclude("tcp")).unwrap(),
            ["udp;ofi_rxd", "sockets"]
        );
    }

    #[test]
    fn a_list_matching_nothing_is_named() {
        assert_eq!(
            pick(None, &include("cxi,psm2")).unwrap_err(),
            "GASNET_OFI_PROVIDER_INCLUDE=\"cxi,psm2\" matches no usable provider; usable \
providers here: tcp;ofi_rxm, tcp, shm, udp;ofi_rxd, sockets"
        );
        assert_eq!(
            pick(Some("shm"), &exclude("tcp,shm,udp,sockets")).unwrap_err(),
            "GASNET_OFI_PROVIDER_EXCLUDE=\"tcp,shm,udp,sockets\" matches no usable provider; \
usable providers here: tcp;ofi_rxm, tcp, shm, udp;ofi_rxd, sockets"
        );
    }

    #[test]
    fn disagreement_quotes_every_variable() {
        assert_eq!(
            pick(Some("shm"), &include("tcp")).unwrap_err(),
            "FI_PROVIDER=\"shm\" and GASNET_OFI_PROVIDER_INCLUDE=\"tcp\" select no common \
provider: FI_PROVIDER allows shm; GASNET_OFI_PROVIDER_INCLUDE allows tcp;ofi_rxm, tcp"
        );
        assert_eq!(
            pick(Some("tcp,shm"), &exclude("tcp,shm")).unwrap_err(),
            "FI_PROVIDER=\"tcp,shm\" and GASNET_OFI_PROVIDER_EXCLUDE=\"tcp,shm\" select no \
common provider: FI_PROVIDER allows tcp;ofi_rxm, tcp, shm; GASNET_OFI_PROVIDER_EXCLUDE allows \
udp;ofi_rxd, sockets"
        );
    }

    /// Select on this machine (its libfabric), on one host.
    fn select_here(fi: Option<&str>, l: ProviderList) -> Result<String, String> {
        select(&SelectOptions {
            fi_provider: fi.map(str::to_string),
            provider_list: l,
            need_multi_recv: true,
            single_host: true,
            ..Default::default()
        })
        .map(|s| s.caps.provider)
        .map_err(|e| e.to_string())
    }

    #[test]
    fn selection_follows_the_lists() {
        // shm is preferred on one host unless a list leaves it out.
        assert_eq!(select_here(None, ProviderList::All).unwrap(), "shm");
        assert_eq!(
            select_here(None, include("tcp;ofi_rxm")).unwrap(),
            "tcp;ofi_rxm"
        );
        let p = select_here(None, exclude("shm")).unwrap();
        assert_ne!(p, "shm");
        assert!(p.starts_with("tcp"), "{p}");
        assert_eq!(
            select_here(Some("tcp;ofi_rxm"), include("tcp")).unwrap(),
            "tcp;ofi_rxm"
        );
    }

    #[test]
    fn selection_refuses_disagreeing_variables() {
        let e = select_here(Some("shm"), include("udp")).unwrap_err();
        assert_eq!(
            e,
            "FI_PROVIDER=\"shm\" and GASNET_OFI_PROVIDER_INCLUDE=\"udp\" select no common \
provider: FI_PROVIDER allows shm; GASNET_OFI_PROVIDER_INCLUDE allows udp;ofi_rxd"
        );
        let e = select_here(None, include("nonexistent")).unwrap_err();
        assert!(
            e.starts_with(
                "GASNET_OFI_PROVIDER_INCLUDE=\"nonexistent\" matches no usable provider; \
usable providers here: "
            ),
            "{e}"
        );
        for p in ["shm", "tcp;ofi_rxm", "udp;ofi_rxd", "sockets"] {
            assert!(e.contains(p), "{e}");
        }
    }

    #[test]
    fn both_lists_never_reach_selection() {
        let env = MapEnv::from([
            (provider_list::PROVIDER_INCLUDE, "shm"),
            (provider_list::PROVIDER_EXCLUDE, "tcp"),
        ]);
        let e = ProviderList::from_env(&EnvReader::quiet(&env)).unwrap_err();
        assert!(matches!(e, ConfigError::Conflict(_)));
    }
}
