//! `gasnetrun-ofi --list-providers`: for each libfabric provider on this
//! machine, its profile status, libfabric version check, inject sizes, MR
//! mode, devices, and whether the conduit can use it (and if not, why).
//!
//! The report comes from the conduit's `gex-providers` program, installed
//! next to `gasnetrun-ofi`: the launcher itself does not link libfabric,
//! whose loading (with its psm libraries) costs about 0.2 s on every launch.

use std::process::Command;

/// The report program's name.
pub const PROVIDERS_PROGRAM: &str = "gex-providers";

/// Run the report; returns the launcher's exit code.
pub fn list_providers() -> i32 {
    let prog = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join(PROVIDERS_PROGRAM)));
    match prog {
        Some(p) if p.exists() => match Command::new(&p).status() {
            Ok(s) => s.code().unwrap_or(1),
            Err(e) => {
                gex_env::eprintln_whole!("gasnetrun-ofi: cannot run {}: {e}", p.display());
                1
            }
        },
        _ => {
            gex_env::eprintln_whole!(
                "gasnetrun-ofi: --list-providers needs the {PROVIDERS_PROGRAM} program next to gasnetrun-ofi (build it with: cargo build -p conduit)"
            );
            1
        }
    }
}
