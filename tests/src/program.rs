//! What the conformance programs and their tests share: ending a mode the
//! same way everywhere, checking an exact error, checking a job's line.

use crate::{fail, Fallible, JobResult};
use conduit::client::{Client, ClientOf, Error, Mode};
use conduit::transport::Transport;

/// Start the client of program `prog`, or print `<prog>: <error>` and
/// exit 1.
pub fn init(prog: &str) -> Client {
    Client::init().unwrap_or_else(|e| {
        gex_env::eprintln_whole!("{prog}: {}", e.report());
        std::process::exit(1);
    })
}

/// Argument `i` of `args` as a count, `default` when it is absent; any
/// other text is an error naming it (no silent default). The conformance
/// programs call it only in the modes that take counts, and only for those
/// positions: the launcher tests append a token after every program's
/// arguments.
pub fn count_arg(args: &[String], i: usize, default: usize) -> Fallible<usize> {
    match args.get(i) {
        None => Ok(default),
        Some(a) => a
            .parse()
            .map_err(|_| fail(format!("argument {i} is '{a}'; expected a whole number"))),
    }
}

/// End a program's mode: on success rank 0 prints `<prog> <mode>: <line>`
/// and a barrier holds every rank until it has (an exit, even a normal
/// one, ends every rank of the job); on an error the rank prints
/// `<prog>: rank R: <error>` and ends the job with code 1.
pub fn finish<M: Mode, S, T: Transport>(
    c: &ClientOf<M, S, T>,
    prog: &str,
    mode: &str,
    r: Fallible<String>,
) {
    let r = r.and_then(|line| {
        if c.rank() == 0 {
            println!("{prog} {mode}: {line}");
        }
        c.barrier().map_err(Into::into)
    });
    if let Err(e) = r {
        gex_env::eprintln_whole!("{prog}: rank {}: {}", c.rank(), crate::report(&*e));
        c.exit(1);
    }
}

/// `r` failed with exactly the message `want` (the error's whole chain);
/// else an error saying what `what` did instead.
pub fn expect_err<T: std::fmt::Debug>(what: &str, r: Result<T, Error>, want: &str) -> Fallible<()> {
    match r {
        Err(e) if e.report() == want => Ok(()),
        Err(e) => Err(fail(format!(
            "{what}: error {:?}, expected {want:?}",
            e.report()
        ))),
        Ok(v) => Err(fail(format!(
            "{what}: succeeded with {v:?}, expected {want:?}"
        ))),
    }
}

impl JobResult {
    /// Assert that the job exited 0 and printed `line`; `what` names the
    /// run in the panic message.
    pub fn expect_line(&self, what: &str, line: &str) {
        assert_eq!(
            self.code,
            Some(0),
            "{what}: {}\n{}",
            self.stdout,
            self.stderr
        );
        assert!(
            self.stdout.contains(line),
            "{what}: expected {line:?} in:\n{}\n{}",
            self.stdout,
            self.stderr
        );
    }
}
