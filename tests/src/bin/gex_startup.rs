//! Start-up check and a first multi-rank job on the fabric.
//!
//! Every rank: bootstrap (from `gasnetrun-ofi`, or a single-rank job when
//! started directly), read the configuration, select and check the provider,
//! open fabric, domain, a CQ, an AV and an RDM endpoint, exchange endpoint
//! names with the bootstrap allgather, insert them all in the AV, then pass a
//! message around the ring of ranks and check its contents. Rank 0 prints
//! what was chosen.
//!
//! Exit status 0 when everything worked; 1 with one line on stderr naming
//! what was wrong otherwise.

use conduit::config::Config;
use conduit::ofi::{AddressVector, CompletionQueue, CqEntry, CqRead, Domain, Endpoint, OfiError};
use conduit::startup::{prepare, JobShape};
use gex_env::{EnvReader, ProcessEnv};
use ofi_sys as sys;
use std::time::{Duration, Instant};

fn poll(cq: &CompletionQueue, got: &mut Vec<CqEntry>) -> Result<(), String> {
    let mut buf = [CqEntry::default(); 8];
    // SAFETY: this program is single-threaded; nothing else calls into the
    // domain concurrently.
    match unsafe { cq.read(&mut buf) }.map_err(|e| e.to_string())? {
        CqRead::Entries(n) => got.extend_from_slice(&buf[..n]),
        CqRead::Empty => {}
        CqRead::Error => {
            // SAFETY: as above.
            let e = unsafe { cq.read_error() }.map_err(|e| e.to_string())?;
            return Err(format!("completion error: {e:?}"));
        }
    }
    Ok(())
}

fn retry(
    cq: &CompletionQueue,
    got: &mut Vec<CqEntry>,
    mut op: impl FnMut() -> Result<(), OfiError>,
) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match op() {
            Ok(()) => return Ok(()),
            Err(e) if e.is_again() && Instant::now() < deadline => poll(cq, got)?,
            Err(e) => return Err(e.to_string()),
        }
    }
}

fn run() -> Result<(), String> {
    let boot = bootstrap::bootstrap_from_env().map_err(|e| e.to_string())?;
    let (rank, size) = (boot.rank(), boot.size());
    let env = ProcessEnv;
    let reader = EnvReader::quiet(&env);
    let cfg = Config::from_env(&reader).map_err(|e| e.to_string())?;
    let job = JobShape {
        rank,
        size,
        single_host: boot.hosts().nhosts() == 1,
        threads: false,
    };
    let prepared = prepare(&cfg, &reader, &job).map_err(|e| e.to_string())?;
    let entry = prepared
        .selected
        .info
        .first()
        .ok_or("selection returned no fi_info")?;
    let domain = Domain::open_entry(&entry).map_err(|e| e.to_string())?;
    let cq = CompletionQueue::open(&domain, cfg.cq.tx_cq_size).map_err(|e| e.to_string())?;
    let av =
        AddressVector::open(&domain, prepared.caps().av_type, size).map_err(|e| e.to_string())?;
    let ep = Endpoint::open(&domain)
        .and_then(|b| b.bind_cq(&cq, (sys::FI_TRANSMIT | sys::FI_RECV) as u64))
        .and_then(|b| b.bind_av(&av))
        .and_then(|b| b.enable())
        .map_err(|e| e.to_string())?;
    let name = ep.name().map_err(|e| e.to_string())?;
    let names = boot.allgather(&name).map_err(|e| e.to_string())?;
    let refs: Vec<&[u8]> = names.iter().map(|n| n.as_slice()).collect();
    let addrs = av.insert(&refs).map_err(|e| e.to_string())?;

    // Ring: send to rank+1, receive from rank-1.
    let mut got = Vec::new();
    let mut rbuf = vec![0u8; 64];
    let msg: Vec<u8> = format!("hello from rank {rank} of {size}").into_bytes();
    let (rctx, sctx) = (1usize, 2usize);
    // SAFETY: rbuf and msg outlive the completions waited for below; the
    // contexts are tags, never dereferenced.
    retry(&cq, &mut got, || unsafe {
        ep.recv_msg(rbuf.as_mut_ptr(), rbuf.len(), rctx as *mut _, 0)
    })?;
    boot.barrier().map_err(|e| e.to_string())?;
    let next = addrs[(rank + 1) % size];
    // SAFETY: as above.
    retry(&cq, &mut got, || unsafe {
        ep.send(msg.as_ptr(), msg.len(), next, sctx as *mut _)
    })?;
    let deadline = Instant::now() + Duration::from_secs(60);
    while ![rctx, sctx]
        .iter()
        .all(|c| got.iter().any(|e| e.context() as usize == *c))
    {
        if Instant::now() > deadline {
            return Err("the ring message did not arrive within 60 s".into());
        }
        poll(&cq, &mut got)?;
    }
    let len = got
        .iter()
        .find(|e| e.context() as usize == rctx)
        .map_or(0, |e| e.len());
    let prev = (rank + size - 1) % size;
    let want = format!("hello from rank {prev} of {size}");
    if &rbuf[..len] != want.as_bytes() {
        return Err(format!(
            "rank {rank} received {:?}, expected {want:?}",
            String::from_utf8_lossy(&rbuf[..len])
        ));
    }
    // Nobody closes its endpoint while a peer may still need progress.
    boot.barrier().map_err(|e| e.to_string())?;

    if rank == 0 {
        let c = prepared.caps();
        println!(
            "provider={} domain={} profile={} status={} mr_mode={}{}{} am_inject={} rma_inject={} ranks={size} hosts={} ring=ok",
            c.provider,
            c.domain,
            c.profile,
            c.status.as_str(),
            if c.mr_virt_addr { "virt_addr," } else { "offset," },
            if c.mr_prov_key { "prov_key," } else { "requested_key," },
            if c.mr_endpoint { "endpoint" } else { "domain" },
            prepared.am_inject_limit,
            prepared.rma_inject_limit,
            boot.hosts().nhosts(),
        );
    }
    boot.finalize(0).map_err(|e| e.to_string())?;
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        gex_env::eprintln_whole!("gex-startup: {e}");
        std::process::exit(1);
    }
}
