//! `GASNET_OFI_LIST_DEVICES` and `gasnetrun-ofi --list-providers`.

use super::Candidate;
use crate::ofi::MrMode;
use crate::profile;

/// One line per usable provider/device pair (`GASNET_OFI_LIST_DEVICES=1`).
pub fn device_lines(cands: &[Candidate]) -> Vec<String> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for c in cands.iter().filter(|c| c.verdict.is_ok()) {
        let key = (c.facts.provider.clone(), c.facts.domain.clone());
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        out.push(format!(
            "provider={} device={} fabric={}",
            c.facts.provider, c.facts.domain, c.facts.fabric
        ));
    }
    out
}

fn mr_text(m: MrMode) -> String {
    let n = m.names();
    if n.is_empty() {
        "none (offsets, requested keys)".into()
    } else {
        n.join("|")
    }
}

/// One provider's facts as `--list-providers` shows them (and
/// `gex-providers --json` writes them).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProviderSummary {
    /// The provider as libfabric names it (`tcp;ofi_rxm`).
    pub name: String,
    /// Its core provider (`tcp`): the part before the first `;`.
    pub core: String,
    /// The profile the conduit applies (`generic` for a provider without
    /// one).
    pub profile: String,
    /// The network the profile serves.
    pub network: String,
    /// The profile's support status (`usable`, `not recommended`, ...).
    pub status: String,
    /// The minimum libfabric version of the profile.
    pub min_libfabric: String,
    /// The libfabric version check, as the text report words it.
    pub libfabric_check: String,
    /// Inject size in bytes (of the first device).
    pub inject_size: usize,
    /// Largest message in bytes (of the first device).
    pub max_msg_size: usize,
    /// The MR mode, as the text report words it.
    pub mr_mode: String,
    /// The MR-mode bits by name (empty: offsets and requested keys).
    pub mr_mode_bits: Vec<String>,
    /// Devices (domains), in the order found.
    pub devices: Vec<String>,
    /// Whether the conduit can use the provider on some device.
    pub usable: bool,
    /// Why not, when it cannot.
    pub unusable_reason: Option<String>,
    /// The profile's notes (may be empty).
    pub notes: String,
}

/// The listing as data: the libfabric version (`major.minor`) and one
/// [`ProviderSummary`] per provider, in the order fi_getinfo gave them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ProviderListing {
    /// The libfabric runtime version, `major.minor`.
    pub libfabric: String,
    /// The providers.
    pub providers: Vec<ProviderSummary>,
}

/// Group the candidates by provider and summarise each.
pub fn provider_listing(cands: &[Candidate]) -> ProviderListing {
    let (maj, min) = crate::ofi::runtime_version();
    let mut providers: Vec<String> = Vec::new();
    for c in cands {
        if !providers.contains(&c.facts.provider) {
            providers.push(c.facts.provider.clone());
        }
    }
    let providers = providers
        .into_iter()
        .map(|p| {
            let group: Vec<&Candidate> = cands.iter().filter(|c| c.facts.provider == p).collect();
            let prof = profile::lookup(&p);
            let first = group[0];
            let mut devices: Vec<String> = Vec::new();
            for c in &group {
                if !devices.contains(&c.facts.domain) {
                    devices.push(c.facts.domain.clone());
                }
            }
            let usable = group.iter().find(|c| c.verdict.is_ok());
            let libfabric_check = match usable.and_then(|c| c.verdict.as_ref().ok()) {
                Some(caps) if caps.libfabric >= prof.min_libfabric => {
                    format!(
                        "ok (needs >= {}, have {})",
                        prof.min_libfabric, caps.libfabric
                    )
                }
                Some(caps) => format!(
                    "below minimum {} (have {}), allowed by GASNET_OFI_ALLOW_UNTRUSTED_PROVIDER",
                    prof.min_libfabric, caps.libfabric
                ),
                None => format!("needs >= {}", prof.min_libfabric),
            };
            let unusable_reason = match usable {
                Some(_) => None,
                None => Some(
                    first
                        .verdict
                        .as_ref()
                        .err()
                        .map(|r| r.to_string())
                        .unwrap_or_default(),
                ),
            };
            ProviderSummary {
                core: p.split(';').next().unwrap_or(&p).to_string(),
                name: p.clone(),
                profile: prof.name.clone(),
                network: prof.network.clone(),
                status: prof.status.as_str().to_string(),
                min_libfabric: prof.min_libfabric.to_string(),
                libfabric_check,
                inject_size: first.facts.inject_size,
                max_msg_size: first.facts.max_msg_size,
                mr_mode: mr_text(first.facts.mr_mode),
                mr_mode_bits: first
                    .facts
                    .mr_mode
                    .names()
                    .iter()
                    .map(|n| n.to_string())
                    .collect(),
                devices,
                usable: usable.is_some(),
                unusable_reason,
                notes: prof.notes.clone(),
            }
        })
        .collect();
    ProviderListing {
        libfabric: format!("{maj}.{min}"),
        providers,
    }
}

/// The `--list-providers` report: for each provider found, its profile
/// status, the libfabric version check, inject and message sizes, MR mode,
/// devices, and whether the conduit can use it (and if not, why).
pub fn provider_report(cands: &[Candidate]) -> String {
    let listing = provider_listing(cands);
    let mut out = format!("libfabric {}\n", listing.libfabric);
    for p in &listing.providers {
        out.push_str(&format!(
            "\n{}\n  profile:        {} ({})\n  status:         {}\n  libfabric:      {}\n  inject size:    {} bytes\n  max msg size:   {} bytes\n  MR mode:        {}\n  devices:        {}\n",
            p.name,
            p.profile,
            p.network,
            p.status,
            p.libfabric_check,
            p.inject_size,
            p.max_msg_size,
            p.mr_mode,
            p.devices.join(", "),
        ));
        match &p.unusable_reason {
            None => out.push_str("  usable:         yes\n"),
            Some(why) => out.push_str(&format!("  usable:         no: {why}\n")),
        }
        if !p.notes.is_empty() {
            out.push_str(&format!("  notes:          {}\n", p.notes));
        }
    }
    out
}

/// The listing as pretty-printed JSON (`gex-providers --json`).
pub fn provider_json(cands: &[Candidate]) -> String {
    serde_json::to_string_pretty(&provider_listing(cands)).expect("a listing serialises") + "\n"
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::candidates;

    #[test]
    fn report_lists_the_four_providers_with_status() {
        let c = candidates(true, false).unwrap();
        let r = provider_report(&c);
        for (p, status) in [
            ("shm", "usable"),
            ("tcp;ofi_rxm", "not recommended"),
            ("udp;ofi_rxd", "usable"),
            ("sockets", "usable"),
        ] {
            let at = r
                .find(&format!("\n{p}\n"))
                .unwrap_or_else(|| panic!("{p} missing:\n{r}"));
            let block = &r[at..];
            assert!(
                block.contains(&format!("status:         {status}\n")),
                "{block}"
            );
        }
        assert!(r.contains("usable:         yes"));
        let lines = device_lines(&c);
        assert!(
            lines
                .iter()
                .any(|l| l.starts_with("provider=shm device=shm")),
            "{lines:?}"
        );
    }

    #[test]
    fn json_listing_has_the_text_report_facts() {
        let c = candidates(true, false).unwrap();
        let text = provider_report(&c);
        let v: serde_json::Value = serde_json::from_str(&provider_json(&c)).unwrap();
        assert!(text.starts_with(&format!("libfabric {}\n", v["libfabric"].as_str().unwrap())));
        let provs = v["providers"].as_array().unwrap();
        assert!(!provs.is_empty());
        for p in provs {
            let name = p["name"].as_str().unwrap();
            let at = text
                .find(&format!("\n{name}\n"))
                .unwrap_or_else(|| panic!("{name} missing:\n{text}"));
            let block = &text[at..];
            let status = p["status"].as_str().unwrap();
            assert!(
                block.contains(&format!("status:         {status}\n")),
                "{block}"
            );
            let devices: Vec<&str> = p["devices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_str().unwrap())
                .collect();
            assert!(
                block.contains(&format!("devices:        {}\n", devices.join(", "))),
                "{block}"
            );
            assert_eq!(p["core"].as_str().unwrap(), name.split(';').next().unwrap());
        }
    }
}
