//! `gasnetrun-ofi --list-providers`.
//!
//! SWAP POINT: the conduit will provide the real provider listing.
//! Replace the body of [`list_providers`] with a call into the conduit;
//! nothing else in the launcher needs to change.

/// Print the libfabric providers usable by the conduit; returns the exit
/// code for the launcher.
pub fn list_providers() -> i32 {
    eprintln!("gasnetrun-ofi: provider listing needs the conduit");
    1
}
