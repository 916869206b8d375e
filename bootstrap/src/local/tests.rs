use super::*;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

/// Longest a test waits for its ranks: a deadlock fails the test instead of
/// hanging it.
const WATCHDOG: Duration = Duration::from_secs(60);

/// Run `f(rank's bootstrap)` on one thread per rank; returns each rank's
/// result by rank (`Err` with the panic message for a rank that panicked).
/// Fails the test if the ranks do not all end within [`WATCHDOG`].
fn run_ranks<T: Send + 'static>(
    n: usize,
    f: impl Fn(LocalBootstrap) -> T + Send + Sync + 'static,
) -> Vec<Result<T, String>> {
    let f = Arc::new(f);
    let (tx, rx) = mpsc::channel();
    for b in LocalBootstrap::group(n) {
        let (f, tx) = (f.clone(), tx.clone());
        thread::spawn(move || {
            let rank = b.rank();
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(b)));
            let r = r.map_err(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            });
            let _ = tx.send((rank, r));
        });
    }
    drop(tx);
    let mut out: Vec<Option<Result<T, String>>> = (0..n).map(|_| None).collect();
    for _ in 0..n {
        let (rank, r) = rx
            .recv_timeout(WATCHDOG)
            .expect("the ranks did not all end: a bootstrap collective deadlocked");
        out[rank] = Some(r);
    }
    out.into_iter().map(Option::unwrap).collect()
}

fn contribution(rank: usize, i: usize) -> Vec<u8> {
    (0..(rank + i) % 7)
        .map(|k| (rank * 31 + i + k) as u8)
        .collect()
}

#[test]
fn repeated_collectives_give_every_rank_the_same_results() {
    const N: usize = 5;
    const ROUNDS: usize = 300;
    let res = run_ranks(N, |b| {
        let r = b.rank();
        assert_eq!(b.size(), N);
        assert_eq!(b.name(), "local");
        for i in 0..ROUNDS {
            if (i + r) % 17 == 0 {
                thread::sleep(Duration::from_millis(1));
            }
            let all = b.allgather(&contribution(r, i)).unwrap();
            let want: Vec<Vec<u8>> = (0..N).map(|q| contribution(q, i)).collect();
            assert_eq!(all, want, "allgather #{i} on rank {r}");
            let root = i % N;
            let data = if r == root {
                contribution(r, i)
            } else {
                vec![9; 3]
            };
            assert_eq!(b.broadcast(root, &data).unwrap(), contribution(root, i));
            b.barrier().unwrap();
        }
        b.finalize(r as i32 + 10).unwrap();
        assert_eq!(b.finalize_code(), Some(r as i32 + 10));
        b
    });
    let boots: Vec<LocalBootstrap> = res.into_iter().map(Result::unwrap).collect();
    let codes: Vec<Option<i32>> = (0..N as i32).map(|r| Some(r + 10)).collect();
    assert_eq!(boots[0].finalize_codes(), codes);
    assert_eq!(boots[0].abandoned(), None);
}

#[test]
fn one_host_map_and_single_rank_group() {
    assert!(LocalBootstrap::group(0).is_empty());
    let g = LocalBootstrap::group(3);
    assert_eq!(g[2].hosts().nhosts(), 1);
    assert_eq!(g[2].hosts().local_ranks(), &[0, 1, 2]);
    assert_eq!(g[2].hosts().local_index(), 2);
    drop(g);

    let mut g = LocalBootstrap::group(1);
    let b = g.pop().unwrap();
    assert_eq!(b.allgather(b"x").unwrap(), vec![b"x".to_vec()]);
    assert_eq!(b.broadcast(0, b"y").unwrap(), b"y".to_vec());
    b.barrier().unwrap();
    let e = b.broadcast(1, b"y").unwrap_err();
    assert!(matches!(e, BootstrapError::InvalidArgument(_)), "{e}");
    assert_eq!(b.finalize_code(), None);
    b.finalize(3).unwrap();
    assert_eq!(b.finalize_codes(), vec![Some(3)]);
    let e = b.barrier().unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid argument: bootstrap collective after finalize"
    );
}

#[test]
fn usable_as_a_shared_trait_object() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<LocalBootstrap>();
    let res = run_ranks(2, |b| {
        let b: Arc<dyn Bootstrap> = Arc::new(b);
        let b2 = b.clone();
        let r = thread::spawn(move || b2.allgather(&[b2.rank() as u8]).unwrap())
            .join()
            .unwrap();
        assert_eq!(r, vec![vec![0], vec![1]]);
        b.finalize(0).unwrap();
    });
    assert!(res.iter().all(Result::is_ok), "{res:?}");
}

#[test]
fn threads_of_one_rank_take_turns() {
    // Rank 0 runs two barriers from two threads at once; rank 1 runs two
    // barriers in a row: each pairs with one of rank 0's.
    let res = run_ranks(2, |b| {
        if b.rank() == 0 {
            thread::scope(|s| {
                let t = s.spawn(|| b.barrier());
                b.barrier().unwrap();
                t.join().unwrap().unwrap();
            });
        } else {
            b.barrier().unwrap();
            b.barrier().unwrap();
        }
        b.finalize(0).unwrap();
    });
    assert!(res.iter().all(Result::is_ok), "{res:?}");
}

/// Rank 0 panics (before the others arrive, or while they wait); the other
/// ranks' collectives fail instead of waiting forever.
#[test]
fn a_panicking_rank_does_not_hang_the_others() {
    for delay in [0, 200] {
        let res = run_ranks(3, move |b| {
            if b.rank() == 0 {
                thread::sleep(Duration::from_millis(delay));
                panic!("rank 0 fails on purpose");
            }
            let e = b.barrier().unwrap_err();
            assert!(matches!(e, BootstrapError::PeerLost(_)), "{e}");
            e.to_string()
        });
        assert_eq!(res[0].as_ref().unwrap_err(), "rank 0 fails on purpose");
        for r in &res[1..] {
            let e = r.as_ref().unwrap();
            assert!(e.contains("rank 0 panicked"), "{e}");
            assert!(e.starts_with("bootstrap peer lost: "), "{e}");
        }
    }
}

#[test]
fn a_collective_called_while_unwinding_fails_at_once() {
    struct BarrierOnDrop(Option<LocalBootstrap>, mpsc::Sender<String>);
    impl Drop for BarrierOnDrop {
        fn drop(&mut self) {
            let b = self.0.as_ref().unwrap();
            let r = b.barrier().map_err(|e| e.to_string());
            let _ = self.1.send(r.unwrap_err());
        }
    }
    let (tx, rx) = mpsc::channel();
    let res = run_ranks(2, move |b| {
        if b.rank() == 0 {
            let _guard = BarrierOnDrop(Some(b), tx.clone());
            panic!("rank 0 fails on purpose");
        }
        b.barrier().unwrap_err().to_string()
    });
    assert!(res[0].is_err());
    let e = rx.recv_timeout(WATCHDOG).unwrap();
    assert!(e.contains("rank 0 panicked"), "{e}");
    assert!(res[1].as_ref().unwrap().contains("rank 0 panicked"));
}

#[test]
fn abort_panics_with_the_code_and_releases_the_others() {
    let res = run_ranks(3, |b| {
        b.barrier().unwrap();
        if b.rank() == 1 {
            b.abort(7);
        }
        b.allgather(b"x").unwrap_err().to_string()
    });
    assert_eq!(
        res[1].as_ref().unwrap_err(),
        "rank 1 aborted the job with code 7"
    );
    for r in [&res[0], &res[2]] {
        let e = r.as_ref().unwrap();
        assert!(e.contains("rank 1 aborted the job with code 7"), "{e}");
    }
}

#[test]
fn ranks_out_of_step_get_an_error() {
    let res = run_ranks(2, |b| {
        let e = if b.rank() == 0 {
            b.barrier().unwrap_err()
        } else {
            // Join only once rank 0 waits in its barrier.
            while b.group.lock().unwrap().narrived == 0 {
                thread::sleep(Duration::from_millis(1));
            }
            b.allgather(b"x").unwrap_err()
        };
        assert!(
            matches!(e, BootstrapError::Protocol(_) | BootstrapError::PeerLost(_)),
            "{e}"
        );
        e.to_string()
    });
    let e1 = res[1].as_ref().unwrap();
    assert!(e1.contains("out of step") && e1.contains("barrier"), "{e1}");
    let e0 = res[0].as_ref().unwrap();
    assert!(e0.contains("called allgather as collective #1"), "{e0}");

    // Broadcasts from different roots are out of step too.
    let res = run_ranks(2, |b| {
        b.broadcast(b.rank(), b"x").map_err(|e| e.to_string())
    });
    assert!(res.iter().all(|r| r.as_ref().unwrap().is_err()), "{res:?}");
}

#[test]
fn a_finalized_or_dropped_rank_is_not_waited_for() {
    // Finalized: the others' next collective fails, the codes stay readable.
    let res = run_ranks(3, |b| {
        b.barrier().unwrap();
        if b.rank() == 2 {
            b.finalize(4).unwrap();
            return (b.finalize_codes(), String::new());
        }
        let e = b.barrier().unwrap_err().to_string();
        (b.finalize_codes(), e)
    });
    for r in &res[..2] {
        let (codes, e) = r.as_ref().unwrap();
        assert_eq!(codes[2], Some(4));
        assert!(
            e.contains("rank 2 has finalized and will not join collective #2"),
            "{e}"
        );
    }
    // Dropped without finalize.
    let res = run_ranks(2, |b| {
        if b.rank() == 0 {
            drop(b);
            return String::new();
        }
        b.barrier().unwrap_err().to_string()
    });
    let e = res[1].as_ref().unwrap();
    assert!(e.contains("rank 0 left the job without finalize"), "{e}");
}
