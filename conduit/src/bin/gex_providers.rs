//! Print, for every libfabric provider on this machine, its profile status,
//! libfabric version check, inject and message sizes, MR mode, devices, and
//! whether the conduit can use it (and if not, why).
//!
//! This is what `gasnetrun-ofi --list-providers` runs (a separate program,
//! so that the launcher itself does not load libfabric, which costs about
//! 0.2 s per launch here).
//!
//! `gex-providers --json` prints the same facts as one JSON document
//! (`conduit::select::listing::ProviderListing`), for tools such as the
//! provider matrix (`tests/provider-matrix.sh`).

const USAGE: &str = "usage: gex-providers [--json]\n\n\
List the libfabric providers of this machine with the conduit's verdict on each.\n\n\
  --json   print the listing as JSON instead of text\n  -h, --help   this help\n";

fn main() {
    let mut json = false;
    for arg in std::env::args().skip(1) {
        match arg.as_str() {
            "--json" => json = true,
            "-h" | "--help" => {
                print!("{USAGE}");
                return;
            }
            other => {
                gex_env::eprintln_whole!(
                    "gex-providers: unknown argument {other:?} (expected --json or --help)"
                );
                std::process::exit(2);
            }
        }
    }
    let text = match conduit::select::candidates(true, false) {
        Ok(c) if json => conduit::select::listing::provider_json(&c),
        Ok(c) => conduit::select::listing::provider_report(&c),
        Err(e) => {
            gex_env::eprintln_whole!("gex-providers: {e}");
            std::process::exit(1);
        }
    };
    match gex_env::line::write_stdout(&text) {
        // A closed pipe (`| head`): the reader has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Err(e) => {
            gex_env::eprintln_whole!("gex-providers: cannot write the listing to stdout: {e}");
            std::process::exit(1);
        }
        Ok(()) => {}
    }
}
