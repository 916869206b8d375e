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

/// The `--list-providers` report: for each provider found, its profile
/// status, the libfabric version check, inject and message sizes, MR mode,
/// devices, and whether the conduit can use it (and if not, why).
pub fn provider_report(cands: &[Candidate]) -> String {
    let (maj, min) = crate::ofi::runtime_version();
    let mut out = format!("libfabric {maj}.{min}\n");
    let mut providers: Vec<String> = Vec::new();
    for c in cands {
        if !providers.contains(&c.facts.provider) {
            providers.push(c.facts.provider.clone());
        }
    }
    for p in providers {
        let group: Vec<&Candidate> = cands.iter().filter(|c| c.facts.provider == p).collect();
        let prof = profile::lookup(&p);
        let first = group[0];
        let devices: Vec<String> = {
            let mut d: Vec<String> = Vec::new();
            for c in &group {
                if !d.contains(&c.facts.domain) {
                    d.push(c.facts.domain.clone());
                }
            }
            d
        };
        let usable = group.iter().find(|c| c.verdict.is_ok());
        let version_check = match usable.and_then(|c| c.verdict.as_ref().ok()) {
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
        out.push_str(&format!(
            "\n{p}\n  profile:        {} ({})\n  status:         {}\n  libfabric:      {version_check}\n  inject size:    {} bytes\n  max msg size:   {} bytes\n  MR mode:        {}\n  devices:        {}\n",
            prof.name,
            prof.network,
            prof.status.as_str(),
            first.facts.inject_size,
            first.facts.max_msg_size,
            mr_text(first.facts.mr_mode),
            devices.join(", "),
        ));
        match usable {
            Some(_) => out.push_str("  usable:         yes\n"),
            None => {
                let why = group[0]
                    .verdict
                    .as_ref()
                    .err()
                    .map(|r| r.to_string())
                    .unwrap_or_default();
                out.push_str(&format!("  usable:         no: {why}\n"));
            }
        }
        if !prof.notes.is_empty() {
            out.push_str(&format!("  notes:          {}\n", prof.notes));
        }
    }
    out
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
}
