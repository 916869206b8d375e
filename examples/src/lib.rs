//! Runnable example programs for the conduit (the files beside this
//! crate's `Cargo.toml`), each self-checking and printing a one-line
//! summary:
//!
//! - `am_ring`: a ring of AM Mediums carrying a growing trail;
//! - `gups`: random-access updates by AM (XOR) and fetch-and-add by AM;
//! - `stencil`: a 1-D stencil with NBI halo puts and a barrier per step,
//!   checked against the serial computation;
//! - `long_gather`: a gather by AM Long, each payload checked in its
//!   handler through its `Payload` and again in the segment.
//!
//! Build with `cargo build --release -p gex-examples --examples` and run
//! with `gasnetrun-ofi -n 4 target/release/examples/<name> [args]`.
//! `tests/examples.rs` runs each under 4 ranks on shm and tcp;ofi_rxm.

#![forbid(unsafe_code)]

use conduit::client::{Client, Options};

/// What an example's body returns: a summary line, or an error (a conduit
/// error or a failed check).
pub type Outcome = Result<Option<String>, Box<dyn std::error::Error + Send + Sync>>;

/// Positional argument `index` (1 is the first after the program name) as
/// a whole number of at least `min`, or `default` when it is absent. The
/// error names the program, the argument, the value and what is accepted.
pub fn count_arg(
    prog: &str,
    index: usize,
    name: &str,
    default: usize,
    min: usize,
) -> Result<usize, String> {
    count_from(std::env::args().nth(index), prog, name, default, min)
}

fn count_from(
    value: Option<String>,
    prog: &str,
    name: &str,
    default: usize,
    min: usize,
) -> Result<usize, String> {
    let Some(v) = value else { return Ok(default) };
    match v.parse::<usize>() {
        Ok(n) if n >= min => Ok(n),
        Err(e) if *e.kind() == std::num::IntErrorKind::PosOverflow => Err(format!(
            "{prog}: {name}={v:?} is not accepted: expected a whole number from {min} to {}",
            usize::MAX
        )),
        _ => Err(format!(
            "{prog}: {name}={v:?} is not accepted: expected a whole number of at least {min}"
        )),
    }
}

/// The segment size for the product of `factors` (what the arguments ask
/// for, described by `what`) rounded up to whole pages, or an error naming
/// them when it does not fit in memory addresses (instead of an arithmetic
/// overflow).
pub fn segment_bytes(what: &str, factors: &[usize]) -> Result<usize, String> {
    let page = conduit::config::host_page_size();
    factors
        .iter()
        .try_fold(1usize, |acc, &f| acc.checked_mul(f))
        .and_then(|b| b.max(1).checked_next_multiple_of(page))
        .ok_or_else(|| {
            let f: Vec<String> = factors.iter().map(usize::to_string).collect();
            format!(
                "the segment for {what} ({} bytes) is larger than this machine can \
                 address: use smaller arguments",
                f.join(" x ")
            )
        })
}

/// Parse the arguments with `args`, start the conduit with the handler
/// state `state`, run `body`, and end the job collectively. When `body` succeeds, the summary line it returns
/// (rank 0's, typically) is printed, every rank meets at a last barrier and
/// exits 0; otherwise `<prog>: rank R: <error>` is printed and the job
/// exits 1. Bad arguments print their error and exit 2 on every rank before
/// the conduit starts.
pub fn run_example<A, S: Send>(
    prog: &str,
    args: impl FnOnce() -> Result<A, String>,
    state: S,
    body: impl FnOnce(&Client<S>, A) -> Outcome,
) -> ! {
    let a = args().unwrap_or_else(|e| {
        conduit::eprintln_whole!("{e}");
        std::process::exit(2)
    });
    let c = Client::init_with(Options::new(state)).unwrap_or_else(|e| {
        conduit::eprintln_whole!("{prog}: {}", e.report());
        std::process::exit(1)
    });
    // The summary is printed before the last barrier: once a peer leaves
    // it, its exit ends this process too (collective exit).
    let done = body(&c, a).and_then(|summary| {
        if let Some(l) = summary {
            match gex_env::line::write_stdout(&format!("{l}\n")) {
                // A closed pipe (`| head`): the reader wanted no more.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
                Err(e) => {
                    conduit::eprintln_whole!("{prog}: cannot write to stdout: {e}");
                    c.exit(1)
                }
                Ok(()) => {}
            }
        }
        Ok(c.barrier()?)
    });
    match done {
        Ok(()) => c.exit(0),
        Err(e) => {
            let mut text = e.to_string();
            let mut cur = e.source();
            while let Some(x) = cur {
                text.push_str(&format!(": {x}"));
                cur = x.source();
            }
            conduit::eprintln_whole!("{prog}: rank {}: {text}", c.rank());
            c.exit(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::count_from;

    #[test]
    fn count_arguments() {
        assert_eq!(count_from(None, "p", "laps", 7, 1), Ok(7));
        assert_eq!(count_from(Some("12".into()), "p", "laps", 7, 1), Ok(12));
        for bad in ["0", "-3", "many", ""] {
            assert_eq!(
                count_from(Some(bad.into()), "am_ring", "laps", 7, 1),
                Err(format!(
                    "am_ring: laps={bad:?} is not accepted: expected a whole number of at least 1"
                ))
            );
        }
        assert_eq!(
            count_from(Some("99999999999999999999999".into()), "p", "laps", 7, 1),
            Err(format!(
                "p: laps=\"99999999999999999999999\" is not accepted: \
                 expected a whole number from 1 to {}",
                usize::MAX
            ))
        );
    }
}
