//! Collective exit: exit messages by dissemination (`am::exit`), client
//! handlers disabled, a bootstrap barrier on a helper thread while this
//! thread keeps the network progressing (so peers' last messages get
//! through before anyone closes its endpoints), a bounded drain, the
//! statistics file. What follows depends on the caller: `exit` ends the
//! process at once, dropping the client closes everything in ownership
//! order first.

use super::{Core, Progress, H_EXIT};
use crate::client::error::Error;
use crate::sync::{Lock, Mode};
use crate::transport::{Side, Transport};
use am::send::Category;
use std::io::Write;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// Start exiting with `code` (the first code wins): queue the exit
    /// messages.
    pub fn request_exit(&self, code: i32) {
        let sends = self.exit.state.lock().begin(code);
        if !sends.is_empty() {
            self.exit.sends.lock().extend(sends);
        }
        self.exit.started.store(true, Ordering::Release);
    }

    /// The exit below gives up after the exit timeout, but only between
    /// calls: a call that never returns (a provider spinning on a lock a
    /// stopped peer holds in shared memory) would hold the rank forever.
    /// A thread of its own ends the job once the whole exit (coordination,
    /// barrier, a quarter of the timeout to drain) has taken a second
    /// longer than it may.
    fn arm_exit_watchdog(&self, code: i32, timeout: Duration) {
        // Ended as the collective exit ends a rank (end_process: shm
        // files removed, `_exit`), not through the bootstrap or exit
        // handlers, which may need what the stuck call holds; the launcher
        // sees this rank end with `code` and ends the job.
        let end = self.end;
        let rank = self.rank;
        let limit = timeout + timeout / 4 + Duration::from_secs(1);
        let spawned = std::thread::Builder::new()
            .name("exit-watchdog".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                std::thread::sleep(limit);
                gex_env::eprintln_whole!(
                    "ofi-conduit (rank {rank}): the exit did not finish within {:.1} s (a call \
                     into the provider did not return: a peer may be stopped); aborting the job",
                    limit.as_secs_f64()
                );
                end(code)
            });
        if let Err(e) = spawned {
            tracing::warn!("no exit watchdog: {e}");
        }
    }

    fn abort_job(&self, code: i32, why: String) -> ! {
        gex_env::eprintln_whole!("ofi-conduit (rank {}): {why}; aborting the job", self.rank);
        self.boot.abort(code)
    }

    fn progress_all(&self) {
        for set in 0..self.sets.len() {
            if let Err(e) = self.progress(set, Progress::Full) {
                tracing::warn!("during exit: {}", e.report());
                self.defer_further();
            }
        }
    }

    /// Coordinate the exit and drain; returns the exit code. Only one
    /// thread runs it: any other that gets here waits for the process to
    /// end.
    pub fn coordinate_exit(&self) -> i32 {
        if self.exit.leader.swap(true, Ordering::AcqRel) {
            // Another thread leads the exit. One inside a handler may hold
            // a shared-memory inbox's read (abandoned: its handler never
            // returns), which no other thread can take: it keeps reading
            // what it holds, so that the leader hears the peers' exit
            // messages that arrive there. The process ends under it.
            if super::in_handler() {
                loop {
                    self.progress_all();
                    std::thread::yield_now();
                }
            }
            loop {
                std::thread::park();
            }
        }
        let code = self.exit.state.lock().code().unwrap_or(0);
        let timeout = self.cfg.exit_timeout.for_job(self.size);
        let deadline = Instant::now() + timeout;
        self.arm_exit_watchdog(code, timeout);
        // 1. Tell the ranks at distances 1, 2, 4, ... and hear from every
        //    distance, while serving the network (exit messages received
        //    meanwhile may queue more sends).
        loop {
            let next = self.exit.sends.lock().pop();
            if let Some((dest, dist)) = next {
                let args = [code as u32, dist as u32];
                match self.send_am(
                    0,
                    Side::Request,
                    dest,
                    Category::Short,
                    H_EXIT,
                    &args,
                    &[],
                    0,
                    true,
                    Progress::Full,
                ) {
                    Ok(true) => {}
                    Ok(false) => self.exit.sends.lock().push((dest, dist)),
                    Err(e) => self.abort_job(
                        code,
                        format!("exit message to rank {dest} failed: {}", e.report()),
                    ),
                }
            } else if self.exit.state.lock().coordinated() {
                break;
            }
            if Instant::now() > deadline {
                self.abort_job(
                    code,
                    // Debug of a Duration keeps small timeouts exact
                    // ("1ms", "2.5s").
                    format!("exit coordination timed out after {timeout:?}"),
                );
            }
            self.progress_all();
        }
        // 2. Every rank is exiting. A bootstrap barrier (on a helper thread,
        //    while this one keeps the network progressing) makes sure nobody
        //    closes its endpoints while another still needs them.
        let barrier = match super::barrier_thread::BarrierThread::start(
            &self.boot,
            "gasnet-exit",
            "the exit",
        ) {
            Ok(b) => b,
            Err(e) => self.abort_job(code, format!("exit barrier failed: {e}")),
        };
        loop {
            match barrier.poll() {
                Some(Ok(())) => break,
                Some(Err(e)) => self.abort_job(code, format!("exit barrier failed: {e}")),
                None => {}
            }
            if Instant::now() > deadline {
                self.abort_job(code, format!("exit barrier timed out after {timeout:?}"));
            }
            self.progress_all();
            std::thread::sleep(Duration::from_micros(50));
        }
        // 3. Drain our outstanding sends (at most a quarter of the timeout).
        let drain_until = Instant::now() + timeout / 4;
        while self.sends_in_flight() > 0 && Instant::now() < drain_until {
            self.progress_all();
        }
        self.write_stats();
        code
    }

    fn sends_in_flight(&self) -> usize {
        self.sets
            .iter()
            .map(|s| s.pools[0].lock().in_flight() + s.pools[1].lock().in_flight())
            .sum()
    }

    fn write_stats(&self) {
        let Some(path) = &self.cfg.general.stats_file else {
            return;
        };
        let mut s = self.stats().report(self.rank);
        let pc = self.put_counts();
        s.push_str(&format!(
            "NB_PUT_INJECT {}\nNB_PUT_BOUNCE {}\nNB_PUT_BLOCK {}\nNB_PUT_AGGREGATE {}\n",
            pc.inject, pc.bounce, pc.block, pc.aggregate
        ));
        crate::client::statsfile::write(path, self.rank, &s);
    }

    /// The put-path counters summed over the sets.
    pub fn put_counts(&self) -> ::rma::put_path::PutCounts {
        use crate::sync::Counter;
        let mut c = ::rma::put_path::PutCounts::default();
        for s in self.sets.iter() {
            c.inject += s.stats.put_inject.get();
            c.bounce += s.stats.put_bounce.get();
            c.block += s.stats.put_block.get();
            c.aggregate += s.stats.put_aggregate.get();
        }
        c
    }

    /// Tell the launcher this rank finished with `code` (output first: the
    /// launcher may end the job as soon as every rank has finalized).
    pub fn finalize(&self, code: i32) {
        flush_output();
        if let Err(e) = self.boot.finalize(code) {
            tracing::warn!("bootstrap finalize: {e}");
        }
    }
}

/// Flush Rust's and C's standard output and error (a C program's stdio
/// buffers too: the C API links this process).
pub(crate) fn flush_output() {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: fflush(NULL) flushes every open output stream; no pointer is
    // read.
    unsafe { libc::fflush(std::ptr::null_mut()) };
}

/// End the process with `code` now, without running exit handlers (the
/// network objects stay open: other threads may still be inside them, and
/// the operating system reclaims them; the shm provider's files, which it
/// would not, are removed first: see [`crate::ofi::shm_region`]).
pub(crate) fn end_process(code: i32) -> ! {
    crate::ofi::shm_region::unlink_all();
    flush_output();
    // SAFETY: _exit has no preconditions; it ends the process.
    unsafe { libc::_exit(code) }
}

impl<M: Mode, T: Transport, S> Core<M, T, S> {
    /// The collective exit from `exit(code)`: does not return.
    pub fn exit_process(&self, code: i32) -> ! {
        let mut _never_resume = None;
        if super::in_handler() {
            // Called by a handler (C's gasnet_exit), which never returns:
            // the shared-memory reads under it let go of their records so
            // the exit can read its peers' messages.
            if super::shared::abandon_reads() {
                _never_resume = Some(super::shared::NeverResume);
            }
            // The messages read in the same batch as the one whose handler
            // this is, behind it, are queued for the exit's polls (a
            // peer's exit message may be among them).
            super::undelivered::abandon_batches();
        }
        let code = self.run_exit(code);
        self.finalize(code);
        (self.end)(code)
    }

    /// Start (or join) the collective exit with `code` and run it; the code
    /// this rank ends with: the job's, or 1 where that is 0 and a protocol
    /// error was met before the exit (`report_before_exit`).
    pub fn run_exit(&self, code: i32) -> i32 {
        self.report_before_exit();
        self.request_exit(code);
        let code = self.coordinate_exit();
        if code == 0 && self.exit.failed.load(Ordering::Acquire) {
            1
        } else {
            code
        }
    }

    /// Check whether a peer started an exit; if so run it (does not
    /// return). Called by the public entry points after they made progress,
    /// never inside a handler.
    #[inline]
    pub fn exit_if_requested(&self) -> Result<(), Error> {
        if self.exiting() && !super::in_handler() {
            let code = self.exit.state.lock().code().unwrap_or(0);
            self.exit_process(code);
        }
        Ok(())
    }

    /// The errors deferred to later polls that the exit overtook (this
    /// rank's own exit, or a peer's seen first): each protocol error (a
    /// peer's malformed AM, an AM for an unregistered handler) is printed
    /// and fails this rank's exit, as do errors not kept; anything else (a
    /// send to a peer that is leaving) is what exits bring, and is logged.
    #[cold]
    fn report_before_exit(&self) {
        while let Some(e) = self.deferred.take() {
            match e {
                Error::Am(_) => {
                    gex_env::eprintln_whole!(
                        "ofi-conduit (rank {}): {} (met before the job's exit; this rank exits with a failure code)",
                        self.rank,
                        e.report()
                    );
                    self.exit.failed.store(true, Ordering::Release);
                }
                e => tracing::debug!("at exit: {}", e.report()),
            }
        }
        let dropped = self.deferred.take_dropped();
        if dropped > 0 {
            gex_env::eprintln_whole!(
                "ofi-conduit (rank {}): {dropped} more error(s) were met while 64 waited for a poll, and not kept (met before the job's exit; this rank exits with a failure code)",
                self.rank
            );
            self.exit.failed.store(true, Ordering::Release);
        }
    }
}
