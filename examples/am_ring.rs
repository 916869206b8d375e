//! A ring of AM Mediums: a token travels `laps` times around the ranks;
//! every rank appends its rank to the payload as it passes, and rank 0
//! checks the whole trail at the end. The handler leaves the token in the
//! client's typed state, where the main loop picks it up.
//!
//! `gasnetrun-ofi -n 4 target/release/examples/am_ring [laps]`

#![forbid(unsafe_code)]

use conduit::client::Client;
use gex_examples::Outcome;
use std::cell::RefCell;

const H_TOKEN: u8 = 200;

/// The client's state: the token, once it arrived.
#[derive(Default)]
struct Ring {
    inbox: RefCell<Option<Vec<u8>>>,
}

fn run(c: &Client<Ring>, laps: usize) -> Outcome {
    let (me, n) = (c.rank(), c.size());
    if laps * n + 1 > c.max_medium() {
        return Err(format!(
            "{laps} laps of {n} ranks do not fit in one Medium of {} bytes",
            c.max_medium()
        )
        .into());
    }
    c.on_request_medium(H_TOKEN, 0, |tok, _, p| {
        tok.state().inbox.replace(Some(p.to_vec()));
    })?;
    c.barrier()?;
    let next = (me + 1) % n;
    if me == 0 {
        c.request_medium(next, H_TOKEN, &[], &[0])?;
    }
    let mut summary = None;
    for lap in 0..laps {
        c.block_until(|| c.state().inbox.borrow().is_some())?;
        let mut trail = c.state().inbox.take().unwrap_or_default();
        trail.push(me as u8);
        if me == 0 && lap + 1 == laps {
            let want: Vec<u8> = (0..laps * n + 1).map(|i| (i % n) as u8).collect();
            if trail != want {
                return Err(format!(
                    "the token's trail is wrong: {:?}...",
                    &trail[..trail.len().min(16)]
                )
                .into());
            }
            summary = Some(format!(
                "am_ring: ok: {laps} laps around {n} ranks, {} hops, trail checked",
                laps * n
            ));
        } else {
            c.request_medium(next, H_TOKEN, &[], &trail)?;
        }
    }
    Ok(summary)
}

fn main() {
    gex_examples::run_example(
        "am_ring",
        || gex_examples::count_arg("am_ring", 1, "laps", 100, 1),
        Ring::default(),
        run,
    )
}
