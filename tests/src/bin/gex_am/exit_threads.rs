//! `gex-am exit-threads [code]` (2 ranks or more): two threads of rank 0
//! exit at once. Rank 1 sends rank 0 a request; on rank 0 the main thread
//! runs its handler, which waits until a second thread has started the
//! collective exit (and leads it), then calls `exit` itself from inside
//! the handler. Rank 1 then exits too. Over the shared-memory path the
//! handler's thread holds the read of rank 1's ring, where rank 1's exit
//! message arrives: the exit must still end promptly with `code`, not by
//! the exit timeout.

use conduit::client::{Handler, Options, ParClient};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

static CLIENT: OnceLock<ParClient<()>> = OnceLock::new();
static IN_HANDLER: AtomicBool = AtomicBool::new(false);
static LEADING: AtomicBool = AtomicBool::new(false);

/// Run the mode; never returns.
pub(crate) fn main(code: i32) -> ! {
    let c = match ParClient::init_with(Options::new(())) {
        Ok(c) => CLIENT.get_or_init(|| c),
        Err(e) => {
            gex_env::eprintln_whole!("gex-am: {}", e.report());
            std::process::exit(1);
        }
    };
    let registered = c.register(
        220,
        Handler::request_short(0, move |_tok, _| {
            IN_HANDLER.store(true, Ordering::Release);
            while !LEADING.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            // The other thread is inside `exit` by now, leading it.
            std::thread::sleep(Duration::from_millis(300));
            if let Some(c) = CLIENT.get() {
                c.exit(code)
            }
        }),
    );
    println!("gex-am exit-threads: rank {}", c.rank());
    if c.rank() == 0 {
        // Started before the barrier: rank 1's request may be handled
        // inside it.
        std::thread::spawn(move || {
            while !IN_HANDLER.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            LEADING.store(true, Ordering::Release);
            c.exit(code)
        });
    }
    if let Err(e) = registered.and_then(|_| c.barrier()) {
        gex_env::eprintln_whole!("gex-am: rank {}: {}", c.rank(), e.report());
        c.exit(1);
    }
    match c.rank() {
        0 => {
            // Polls until the handler runs here (if it did not in the
            // barrier); it never returns.
            let r = c.block_until(|| false);
            gex_env::eprintln_whole!("gex-am: rank 0: the wait ended: {r:?}");
            c.exit(1)
        }
        1 => {
            if let Err(e) = c.request_short(0, 220, &[]) {
                gex_env::eprintln_whole!("gex-am: rank 1: {}", e.report());
                c.exit(1);
            }
            // After rank 0's handler started the second exit.
            std::thread::sleep(Duration::from_millis(600));
            c.exit(code)
        }
        _ => {
            let r = c.block_until(|| false);
            gex_env::eprintln_whole!("gex-am: rank {}: the wait ended: {r:?}", c.rank());
            c.exit(1)
        }
    }
}
