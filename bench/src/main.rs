//! gex-bench: the conduit's benchmarks, side by side with `fi_pingpong`.
//!
//! Run it under the launcher with two ranks:
//!
//! ```text
//! FI_PROVIDER=shm GASNET_OFI_DEVICE=shm GASNET_QUIET=1 \
//!     target/release/gasnetrun-ofi -n 2 target/release/gex-bench
//! FI_PROVIDER=tcp GASNET_OFI_DEVICE=lo GASNET_QUIET=1 \
//!     target/release/gasnetrun-ofi -n 2 target/release/gex-bench --json out.json --plot out.svg
//! ```
//!
//! Rank 0 measures and prints; rank 1 serves. See `docs/PERFORMANCE.md`
//! for the method and `gex-bench --help` for the options.
//!
//! `--tests tagged` sets the conduit's tagged messaging beside
//! `fi_pingpong` and Open MPI's OFI MTL (`bench/c/mtl_pingpong.c`, built
//! with `mpicc` at run time and run with `mpirun`, on the same provider):
//!
//! ```text
//! FI_PROVIDER=tcp GASNET_OFI_DEVICE=lo GASNET_QUIET=1 \
//!     target/release/gasnetrun-ofi -n 2 target/release/gex-bench --tests tagged \
//!     --sizes 8,64,512,4k,64k,1m
//! ```

// Denied, not forbidden: the tagged step's one-buffer window posts raw
// receives (`run/tagged.rs`, the one `allow`).
#![deny(unsafe_code)]

mod child;
mod cli;
mod mtl;
mod par;
mod pingpong;
mod plot;
mod proc;
mod report;
mod run;
mod samples;
mod stats;

use clap::Parser;
use conduit::client::Client;

fn write_out(dest: &str, text: &str) -> Result<(), String> {
    if dest == "-" {
        print!("{text}");
        Ok(())
    } else {
        std::fs::write(dest, text).map_err(|e| format!("cannot write {dest}: {e}"))
    }
}

/// Wait up to `secs` seconds until the CPUs are more than 90% idle over one
/// second (before the job starts its own spinning). Returns the busy
/// percentage last seen.
fn wait_quiet(secs: u64) -> f64 {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        let (b0, t0) = proc::cpu_ticks();
        std::thread::sleep(std::time::Duration::from_secs(1));
        let (b1, t1) = proc::cpu_ticks();
        let busy = 100.0 * (b1 - b0) as f64 / (t1 - t0).max(1) as f64;
        if busy < 10.0 || std::time::Instant::now() > until {
            return busy;
        }
    }
}

fn main() {
    let opts = cli::Opts::parse();
    // Rank 0 writes the chart: find out before the run, not after it, that
    // it could not. Where the launcher tells the rank, before init (a rank
    // leaving then ends the job at once).
    let env_rank = std::env::var("GASNET_OFI_RANK").ok();
    let rank_known = env_rank.is_some();
    if let (Some("0"), Some(t)) = (env_rank.as_deref(), &opts.plot) {
        if let Err(e) = t.check_dir() {
            conduit::eprintln_whole!("gex-bench: {e}");
            std::process::exit(2);
        }
    }
    if opts.wait_quiet > 0 {
        let busy = wait_quiet(opts.wait_quiet);
        // Before init the rank is only in the launcher's environment.
        let rank0 = env_rank.as_deref().is_none_or(|r| r == "0");
        if busy >= 10.0 && !opts.quiet && rank0 {
            conduit::eprintln_whole!(
                "gex-bench: the machine is still {busy:.0}% busy after {} s; measuring anyway",
                opts.wait_quiet
            );
        }
    }
    if !opts.par.is_empty() {
        par_main(&opts);
    }
    // Tagged messaging opens endpoints of its own: only when measured.
    let mut init = conduit::client::Options::new(());
    if opts.tests.contains(&cli::TestKind::Tagged) {
        init = init.tagged();
    }
    let c = match Client::init_with(init) {
        Ok(c) => c,
        Err(e) => {
            conduit::eprintln_whole!("gex-bench: {}", e.report());
            std::process::exit(1);
        }
    };
    if let (0, false, Some(t)) = (c.rank(), rank_known, &opts.plot) {
        // Launched without the rank in the environment: check now.
        if let Err(e) = t.check_dir() {
            conduit::eprintln_whole!("gex-bench: {e}");
            c.exit(1);
        }
    }
    let report = match run::run(&c, &opts) {
        Ok(r) => r,
        Err(e) => {
            let mut text = e.to_string();
            let mut cur = e.source();
            while let Some(x) = cur {
                text.push_str(&format!(": {x}"));
                cur = x.source();
            }
            conduit::eprintln_whole!("gex-bench: rank {}: {text}", c.rank());
            c.exit(1);
        }
    };
    let mut code = 0;
    if let Some(r) = report {
        let mut table_to_stdout = true;
        for (dest, text) in [
            (opts.json.as_deref(), r.json()),
            (opts.csv.as_deref(), r.csv()),
        ] {
            if let Some(d) = dest {
                table_to_stdout &= d != "-";
                if let Err(e) = write_out(d, &text) {
                    conduit::eprintln_whole!("gex-bench: {e}");
                    code = 1;
                }
            }
        }
        if table_to_stdout {
            print!("{}", r.table());
        }
        if let Some(t) = &opts.plot {
            if let Err(e) = plot::write(&r, t) {
                conduit::eprintln_whole!("gex-bench: {e}");
                code = 1;
            }
        }
    }
    if let Err(e) = c.barrier() {
        conduit::eprintln_whole!("gex-bench: rank {}: {e}", c.rank());
        c.exit(1);
    }
    c.exit(code);
}

/// `--par`: the multi-threaded message rate instead of the other tests.
fn par_main(opts: &cli::Opts) -> ! {
    if let Some(t) = opts.par.iter().find(|t| **t == 0 || **t > 64) {
        conduit::eprintln_whole!("gex-bench: --par {t} is not accepted: thread counts are 1..=64");
        std::process::exit(2);
    }
    let c = match par::init(&opts.par) {
        Ok(c) => c,
        Err(e) => {
            conduit::eprintln_whole!("gex-bench: {}", e.report());
            std::process::exit(1);
        }
    };
    match par::run(&c, opts, &opts.par) {
        Ok(Some(rates)) => {
            match opts.json.as_deref() {
                Some(dest) => {
                    let text = serde_json::to_string_pretty(&rates).unwrap_or_default() + "\n";
                    if let Err(e) = write_out(dest, &text) {
                        conduit::eprintln_whole!("gex-bench: {e}");
                        c.exit(1);
                    }
                    if dest != "-" {
                        print!("{}", par::table(c.provider(), &rates));
                    }
                }
                None => print!("{}", par::table(c.provider(), &rates)),
            }
            let _ = c.barrier();
            c.exit(0)
        }
        Ok(None) => {
            let _ = c.barrier();
            c.exit(0)
        }
        Err(e) => {
            conduit::eprintln_whole!("gex-bench: rank {}: {e}", c.rank());
            c.exit(1)
        }
    }
}
