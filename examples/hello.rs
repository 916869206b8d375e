//! The smallest complete job: every rank starts the client, attaches a
//! segment, takes part in a barrier and exits. Its run time is the
//! conduit's start-up and exit cost (docs/launching.md measures it with
//! `scripts/startup-time.sh`).
//!
//! `gasnetrun-ofi -n 16 target/release/examples/hello [segment_pages]`

#![forbid(unsafe_code)]

use conduit::client::Client;
use gex_examples::Outcome;

fn run(c: &Client<()>, pages: usize) -> Outcome {
    let page = conduit::config::host_page_size();
    let bytes = gex_examples::segment_bytes("segment_pages x page size", &[pages, page])?;
    c.attach_segment(bytes)?;
    c.barrier()?;
    Ok((c.rank() == 0).then(|| {
        format!(
            "hello: ok: {} ranks started, attached {} KiB each and met in a barrier",
            c.size(),
            bytes / 1024
        )
    }))
}

fn main() {
    gex_examples::run_example(
        "hello",
        || gex_examples::count_arg("hello", 1, "segment_pages", 16, 1),
        (),
        run,
    )
}
