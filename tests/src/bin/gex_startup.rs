//! Start-up check: read the configuration, select and check the provider,
//! open fabric, domain and an endpoint, print what was chosen.
//!
//! Exit status 0 when everything opened; 1 with one line on stderr naming
//! what was wrong otherwise.

use conduit::config::Config;
use conduit::ofi::{AddressVector, CompletionQueue, Domain, Endpoint};
use conduit::startup::{prepare, JobShape};
use gex_env::{EnvReader, ProcessEnv};
use ofi_sys as sys;

fn run() -> Result<(), String> {
    let env = ProcessEnv;
    let reader = EnvReader::quiet(&env);
    let cfg = Config::from_env(&reader).map_err(|e| e.to_string())?;
    let prepared = prepare(&cfg, &reader, &JobShape::single()).map_err(|e| e.to_string())?;
    let entry = prepared
        .selected
        .info
        .first()
        .ok_or("selection returned no fi_info")?;
    let domain = Domain::open_entry(&entry).map_err(|e| e.to_string())?;
    let cq = CompletionQueue::open(&domain, cfg.cq.tx_cq_size).map_err(|e| e.to_string())?;
    let av = AddressVector::open(&domain, prepared.caps().av_type, 1).map_err(|e| e.to_string())?;
    let builder = Endpoint::open(&domain)
        .and_then(|b| b.bind_cq(&cq, (sys::FI_TRANSMIT | sys::FI_RECV) as u64))
        .and_then(|b| b.bind_av(&av))
        .map_err(|e| e.to_string())?;
    if std::env::var_os("GEX_STARTUP_NO_ENABLE").is_none() {
        let ep = builder.enable().map_err(|e| e.to_string())?;
        let name = ep.name().map_err(|e| e.to_string())?;
        av.insert(&[&name]).map_err(|e| e.to_string())?;
    }
    let c = prepared.caps();
    println!(
        "provider={} domain={} profile={} status={} mr_mode={}{}{} am_inject={} rma_inject={}",
        c.provider,
        c.domain,
        c.profile,
        c.status.as_str(),
        if c.mr_virt_addr {
            "virt_addr,"
        } else {
            "offset,"
        },
        if c.mr_prov_key {
            "prov_key,"
        } else {
            "requested_key,"
        },
        if c.mr_endpoint { "endpoint" } else { "domain" },
        prepared.am_inject_limit,
        prepared.rma_inject_limit,
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("gex-startup: {e}");
        std::process::exit(1);
    }
}
