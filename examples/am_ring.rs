//! A ring of AM Mediums: a token travels `laps` times around the ranks;
//! every rank appends its rank to the payload as it passes, and rank 0
//! checks the whole trail at the end.
//!
//! `gasnetrun-ofi -n 4 target/release/examples/am_ring [laps]`

use conduit::client::{AmError, Client, Handler};
use std::sync::{Arc, Mutex};

const H_TOKEN: u8 = 200;

fn run(c: &mut Client, laps: usize) -> Result<Option<String>, AmError> {
    let (me, n) = (c.rank(), c.size());
    if laps * n + 1 > c.max_medium() {
        return Err(AmError::BadArgument(format!(
            "{laps} laps of {n} ranks do not fit in one Medium of {} bytes",
            c.max_medium()
        )));
    }
    let inbox: Arc<Mutex<Option<Vec<u8>>>> = Arc::new(Mutex::new(None));
    let ib = inbox.clone();
    c.register(
        H_TOKEN,
        Handler::request_medium(0, move |_, _, p| {
            *ib.lock().expect("inbox lock") = Some(p.to_vec());
        }),
    )?;
    c.barrier()?;
    let next = (me + 1) % n;
    if me == 0 {
        c.request_medium(next, H_TOKEN, &[], &[0])?;
    }
    let mut summary = None;
    for lap in 0..laps {
        let ib = inbox.clone();
        c.block_until(|| ib.lock().expect("inbox lock").is_some())?;
        let mut trail = inbox.lock().expect("inbox lock").take().unwrap_or_default();
        trail.push(me as u8);
        if me == 0 && lap + 1 == laps {
            let want: Vec<u8> = (0..laps * n + 1).map(|i| (i % n) as u8).collect();
            if trail != want {
                return Err(AmError::BadArgument(format!(
                    "the token's trail is wrong: {:?}...",
                    &trail[..trail.len().min(16)]
                )));
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
        run,
    )
}
