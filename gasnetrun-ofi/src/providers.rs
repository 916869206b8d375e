//! `gasnetrun-ofi --list-providers`: for each libfabric provider on this
//! machine, its profile status, libfabric version check, inject sizes, MR
//! mode, devices, and whether the conduit can use it (and if not, why).

/// Print the report; returns the launcher's exit code.
pub fn list_providers() -> i32 {
    match conduit::select::candidates(true, false) {
        Ok(c) => {
            print!("{}", conduit::select::listing::provider_report(&c));
            0
        }
        Err(e) => {
            eprintln!("gasnetrun-ofi: cannot list providers: {e}");
            1
        }
    }
}
