//! Print, for every libfabric provider on this machine, its profile status,
//! libfabric version check, inject and message sizes, MR mode, devices, and
//! whether the conduit can use it (and if not, why).
//!
//! This is what `gasnetrun-ofi --list-providers` runs (a separate program,
//! so that the launcher itself does not load libfabric, which costs about
//! 0.2 s per launch here).

fn main() {
    match conduit::select::candidates(true, false) {
        Ok(c) => print!("{}", conduit::select::listing::provider_report(&c)),
        Err(e) => {
            eprintln!("gex-providers: {e}");
            std::process::exit(1);
        }
    }
}
