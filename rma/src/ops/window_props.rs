//! Property test of the get window against a model of the transfers really
//! in flight: random gets to a few peers, split into pieces as
//! `plan::chunks` splits them, posted only when `Ops::try_charge_window`
//! says so, completed (or failed) in any order, or cancelled before being
//! posted as a failed post cancels them.

use super::tests::err;
use super::{GetWindow, Implicit, OpId, Ops};
use proptest::prelude::*;

const PEERS: usize = 3;

/// One get of the model: its id, peer, transfers not yet posted (in the
/// order they are posted) and posted ones not yet completed.
struct Get {
    op: OpId,
    rank: usize,
    pending: Vec<usize>,
    posted: Vec<usize>,
}

/// What the test does next (indices are taken modulo what exists).
#[derive(Debug, Clone)]
enum Step {
    /// A get of `len` bytes (folded to at most eight pieces) in pieces of
    /// at most the window's piece (smaller when `max_msg_size` is).
    Start {
        rank: usize,
        len: usize,
        piece: usize,
    },
    Post(usize),
    Complete {
        get: usize,
        which: usize,
        ok: bool,
    },
    Cancel(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        2 => (0..PEERS, 1usize..=4096, any::<usize>())
            .prop_map(|(rank, len, piece)| Step::Start { rank, len, piece }),
        4 => any::<usize>().prop_map(Step::Post),
        3 => (any::<usize>(), any::<usize>(), prop::bool::weighted(0.9))
            .prop_map(|(get, which, ok)| Step::Complete { get, which, ok }),
        1 => any::<usize>().prop_map(Step::Cancel),
    ]
}

/// The model's bytes posted and not completed, per peer.
fn really_in_flight(gets: &[Get], rank: usize) -> u64 {
    gets.iter()
        .filter(|g| g.rank == rank)
        .flat_map(|g| g.posted.iter())
        .map(|&l| l as u64)
        .sum()
}

/// Post the next transfer of `g` if the window lets it, checking what a
/// refusal and a charge may do; whether it was posted.
fn post(t: &mut Ops, w: GetWindow, gets: &mut [Get], g: usize) -> Result<bool, TestCaseError> {
    let Some(&len) = gets[g].pending.first() else {
        return Ok(false);
    };
    let rank = gets[g].rank;
    let held = t.window_in_flight(rank);
    let real = really_in_flight(gets, rank);
    let refilling = t.window_refused(rank);
    // What the transfer needs: its length, or while the peer refills all
    // but a quarter of the window.
    let need = if refilling {
        len.max(w.limit() - w.limit() / 4)
    } else {
        len
    };
    let fits = held == 0 || held + need as u64 <= w.limit() as u64;
    if t.try_charge_window(gets[g].op, rank, len, w) {
        prop_assert!(
            fits,
            "charged {len} with {held} held (refilling: {refilling})"
        );
        // From the model: a refilling peer takes transfers again only once
        // at most a quarter of the window is really in flight.
        prop_assert!(
            !refilling || real <= (w.limit() / 4) as u64,
            "refilled at {real}"
        );
        prop_assert!(!t.window_refused(rank), "a charge clears the refusal");
        gets[g].pending.remove(0);
        gets[g].posted.push(len);
        Ok(true)
    } else {
        // Refused exactly when it does not fit, never with nothing in
        // flight (completions will come), and the peer is marked.
        prop_assert!(
            !fits,
            "refused {len} with {held} held (refilling: {refilling})"
        );
        prop_assert!(real > 0, "an idle peer refused");
        prop_assert!(t.window_refused(rank));
        Ok(false)
    }
}

/// Retire `gets[g]` once it has nothing pending or posted.
fn retire_if_over(t: &mut Ops, gets: &mut Vec<Get>, g: usize) -> Result<(), TestCaseError> {
    if gets[g].pending.is_empty() && gets[g].posted.is_empty() {
        prop_assert!(t.state(gets[g].op).is_some(), "over but running");
        t.retire(gets[g].op);
        gets.swap_remove(g);
    }
    Ok(())
}

fn check(t: &Ops, w: GetWindow, gets: &[Get]) -> Result<(), TestCaseError> {
    for rank in 0..PEERS {
        let held = t.window_in_flight(rank);
        let real = really_in_flight(gets, rank);
        prop_assert!(held >= real, "peer {rank}: {held} held < {real} in flight");
        prop_assert!(held <= w.limit() as u64, "peer {rank}: {held} held");
        if !gets.iter().any(|g| g.rank == rank) {
            prop_assert_eq!(held, 0, "peer {} has no get but holds bytes", rank);
        }
    }
    Ok(())
}

proptest! {
    /// The window never counts less than is in flight nor more than its
    /// limit, never refuses an idle peer, refills only at a quarter full
    /// after a refusal, and gives everything back once every get is over,
    /// whatever the order of completions, failures and cancellations.
    #[test]
    fn the_window_bounds_what_is_in_flight_and_gives_all_back(
        limit in prop::sample::select(vec![1usize, 3, 7, 64, 400, 1000, 4096]),
        steps in prop::collection::vec(step(), 1..300),
    ) {
        let w = GetWindow::new(limit).unwrap();
        let mut t = Ops::new();
        let mut gets: Vec<Get> = Vec::new();
        for s in steps {
            match s {
                Step::Start { rank, len, piece } => {
                    let piece = 1 + piece % w.piece();
                    let len = 1 + (len - 1) % (8 * piece);
                    let mut pending = vec![piece; len / piece];
                    if len % piece > 0 {
                        pending.push(len % piece);
                    }
                    let op = t.start(pending.len() as u32, Implicit::Get);
                    gets.push(Get { op, rank, pending, posted: Vec::new() });
                }
                Step::Post(g) if !gets.is_empty() => {
                    let g = g % gets.len();
                    post(&mut t, w, &mut gets, g)?;
                }
                Step::Complete { get, which, ok } if !gets.is_empty() => {
                    let g = get % gets.len();
                    if gets[g].posted.is_empty() {
                        continue;
                    }
                    let i = which % gets[g].posted.len();
                    gets[g].posted.swap_remove(i);
                    let r = if ok { Ok(()) } else { Err(err("lost")) };
                    t.complete_transfer(gets[g].op.index, r);
                    retire_if_over(&mut t, &mut gets, g)?;
                }
                Step::Cancel(g) if !gets.is_empty() => {
                    let g = g % gets.len();
                    let n = std::mem::take(&mut gets[g].pending).len() as u32;
                    if n > 0 {
                        t.cancel_transfers(gets[g].op, n, err("not posted"));
                    }
                    retire_if_over(&mut t, &mut gets, g)?;
                }
                _ => {}
            }
            check(&t, w, &gets)?;
        }
        // Drain: every pending transfer gets posted in the end, by
        // completing what is in flight whenever the window refuses.
        // Each round posts or completes a transfer, or retires a get.
        let bound = 3 * gets.iter().map(|g| 1 + 2 * g.pending.len() + g.posted.len()).sum::<usize>();
        let mut rounds = 0;
        while !gets.is_empty() {
            rounds += 1;
            prop_assert!(rounds <= bound, "the window never drained");
            let g = rounds % gets.len();
            if post(&mut t, w, &mut gets, g)? {
                check(&t, w, &gets)?;
                continue;
            }
            // Refused (so something to the peer is in flight) or nothing
            // left to post: complete a transfer to the peer, its own first.
            let rank = gets[g].rank;
            let h = if gets[g].posted.is_empty() {
                gets.iter().position(|o| o.rank == rank && !o.posted.is_empty())
            } else {
                Some(g)
            };
            match h {
                Some(h) => {
                    gets[h].posted.remove(0);
                    t.complete_transfer(gets[h].op.index, Ok(()));
                    retire_if_over(&mut t, &mut gets, h)?;
                }
                None => retire_if_over(&mut t, &mut gets, g)?,
            }
            check(&t, w, &gets)?;
        }
        for rank in 0..PEERS {
            prop_assert_eq!(t.window_in_flight(rank), 0);
        }
        prop_assert_eq!(t.in_flight(), 0);
    }
}
