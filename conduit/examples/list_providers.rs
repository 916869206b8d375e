//! Print, for every libfabric provider on this machine, its profile status,
//! libfabric version check, inject and message sizes, MR mode, devices, and
//! whether the conduit can use it (and if not, why).
//!
//! `cargo run -p conduit --example list_providers`

fn main() {
    match conduit::select::candidates(true, false) {
        Ok(c) => print!("{}", conduit::select::listing::provider_report(&c)),
        Err(e) => {
            eprintln!("list_providers: {e}");
            std::process::exit(1);
        }
    }
}
