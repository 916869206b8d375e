//! Test program for the launcher tests: `bootcheck <token> <mode> [args]`.
//! `<token>` only marks the processes of one test (it is looked for in
//! /proc afterwards). Modes:
//! * `check <nhosts> [NAME=VALUE]...`: allgather, broadcast, barrier and
//!   host-map checks, the named variables must hold the given values
//!   (`NAME=!`: must be unset);
//!   prints `bootcheck rank R ok`, exits 0.
//! * `exit <rank> <code>`: after a barrier, `<rank>` exits with `<code>`;
//!   the others wait in a second barrier (torn down by the launcher).
//! * `abort <rank> <code>`: after a barrier, `<rank>` calls abort.
//! * `hang`: prints `ready R PID`, then sleeps; SIGTERM prints
//!   `bootcheck got SIGTERM` and exits 99.
//! * `waitfile <path>`: rank 0 waits until `<path>` exists, then a
//!   broadcast and a barrier.
//! * `args ...`: prints `args R <Debug of the arguments>`.
//! * `which`: prints `bootstrap R of N <name>` (`single`, `tcp`, `pmix`,
//!   `mpi`).
//! * `bench`: one barrier (launch-time measurement).

use bootstrap::{bootstrap_from_env, Bootstrap};
use std::time::Duration;

extern "C" fn on_term(_: libc::c_int) {
    let m = b"bootcheck got SIGTERM\n";
    // SAFETY: write and _exit are async-signal-safe.
    unsafe {
        libc::write(1, m.as_ptr().cast(), m.len());
        libc::_exit(99);
    }
}

fn fail(b: &dyn Bootstrap, what: String) -> ! {
    eprintln!("bootcheck rank {}: FAILED: {what}", b.rank());
    std::process::exit(42)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mode = args.get(2).cloned().unwrap_or_default();
    let b = match bootstrap_from_env() {
        Ok(b) => b,
        Err(e) => {
            eprintln!("bootcheck: bootstrap failed: {e}");
            std::process::exit(41);
        }
    };
    let b: &dyn Bootstrap = &*b;
    let (r, n) = (b.rank(), b.size());
    match mode.as_str() {
        "check" => {
            let nhosts: usize = args[3].parse().unwrap();
            // Variable-length, rank-dependent contributions.
            let mine: Vec<u8> = (0..r + 1).map(|i| (r * 7 + i) as u8).collect();
            let all = b
                .allgather(&mine)
                .unwrap_or_else(|e| fail(b, e.to_string()));
            for (q, got) in all.iter().enumerate() {
                let want: Vec<u8> = (0..q + 1).map(|i| (q * 7 + i) as u8).collect();
                if *got != want {
                    fail(b, format!("allgather entry {q}: {got:?} != {want:?}"));
                }
            }
            let root = n - 1;
            let msg = format!("from root {root} of {n}");
            let got = b
                .broadcast(
                    root,
                    if r == root {
                        msg.as_bytes()
                    } else {
                        b"ignored"
                    },
                )
                .unwrap_or_else(|e| fail(b, e.to_string()));
            if got != msg.as_bytes() {
                fail(b, format!("broadcast: {:?}", String::from_utf8_lossy(&got)));
            }
            b.barrier().unwrap_or_else(|e| fail(b, e.to_string()));
            let h = b.hosts();
            if h.nhosts() != nhosts || !h.is_block() || !h.local_ranks().contains(&r) {
                fail(b, format!("host map {h:?}"));
            }
            let per = h.ranks_per_host();
            if per.iter().sum::<usize>() != n
                || per.iter().max().unwrap() - per.iter().min().unwrap() > 1
            {
                fail(b, format!("ranks per host {per:?}"));
            }
            for kv in &args[4..] {
                let (k, v) = kv.split_once('=').unwrap();
                let got = std::env::var(k).ok();
                // `NAME=!` means NAME must be unset.
                let want = (v != "!").then_some(v);
                if got.as_deref() != want {
                    fail(b, format!("{k} is {got:?}, expected {v:?}"));
                }
            }
            // A second round, to check sequencing.
            let all = b.allgather(format!("r{r}").as_bytes()).unwrap();
            assert_eq!(all.len(), n);
            b.barrier().unwrap();
            println!(
                "bootcheck rank {r} ok host {} local {}/{}",
                h.my_host(),
                h.local_index(),
                h.local_ranks().len()
            );
            b.finalize(0).unwrap();
        }
        "exit" => {
            let who: usize = args[3].parse().unwrap();
            let code: i32 = args[4].parse().unwrap();
            b.barrier().unwrap();
            if r == who {
                std::process::exit(code);
            }
            let _ = b.barrier();
            std::thread::sleep(Duration::from_secs(600));
        }
        "abort" => {
            let who: usize = args[3].parse().unwrap();
            let code: i32 = args[4].parse().unwrap();
            b.barrier().unwrap();
            if r == who {
                b.abort(code);
            }
            std::thread::sleep(Duration::from_secs(600));
        }
        "hang" => {
            // SAFETY: installing a handler that only calls async-signal-safe functions.
            unsafe {
                libc::signal(libc::SIGTERM, on_term as *const () as libc::sighandler_t);
            }
            b.barrier().unwrap();
            println!("ready {r} {}", std::process::id());
            std::thread::sleep(Duration::from_secs(600));
        }
        "waitfile" => {
            if r == 0 {
                let p = std::path::Path::new(&args[3]);
                while !p.exists() {
                    std::thread::sleep(Duration::from_millis(20));
                }
            }
            let v = b.broadcast(0, b"go").unwrap();
            assert_eq!(v, b"go");
            b.barrier().unwrap();
            println!("bootcheck rank {r} ok");
        }
        "args" => {
            println!("args {r} {:?}", &args[3..]);
        }
        "which" => {
            println!("bootstrap {r} of {n} {}", b.name());
            b.barrier().unwrap();
            b.finalize(0).unwrap();
        }
        "bench" => {
            b.barrier().unwrap();
        }
        m => {
            eprintln!("bootcheck: unknown mode {m:?}");
            std::process::exit(40);
        }
    }
}
