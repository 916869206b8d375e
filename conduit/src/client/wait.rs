//! Wait mode: what a wait loop does when a poll finds nothing.
//!
//! Every wait in the client (blocking calls, `block_until`, barriers, send
//! retries) polls in a loop. On dedicated cores spinning gives the lowest
//! latency. When a host runs more ranks than there are CPUs, a spinning
//! rank holds the CPU its peer needs to answer: round trips then take a
//! scheduler time slice instead of microseconds. In yield mode a rank gives
//! its CPU away (`sched_yield`) after [`YIELD_AFTER`] consecutive polls
//! that completed nothing, as GASNet's `GASNET_WAIT_SPINBLOCK` and UPC++'s
//! `UPCXX_OVERSUBSCRIBED` do.

use crate::config::general::WaitModeSetting;

/// Consecutive empty polls before a yield.
pub const YIELD_AFTER: u32 = 8;

/// How wait loops behave (see [`crate::client::Client::set_wait_mode`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Poll without pause.
    Spin,
    /// Yield the CPU after a few polls that found nothing.
    Yield,
}

impl WaitMode {
    /// Resolve the `GASNET_WAIT_MODE` setting: `auto` yields when this host
    /// runs more ranks (`local_ranks`) than the CPUs this process may use
    /// (`cpus`).
    pub fn resolve(setting: WaitModeSetting, local_ranks: usize, cpus: usize) -> WaitMode {
        match setting {
            WaitModeSetting::Spin => WaitMode::Spin,
            WaitModeSetting::Yield => WaitMode::Yield,
            WaitModeSetting::Auto if local_ranks > cpus => WaitMode::Yield,
            WaitModeSetting::Auto => WaitMode::Spin,
        }
    }
}

/// The CPUs this process may run on (affinity and cgroup quota), at least 1.
pub fn usable_cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

thread_local! {
    /// Consecutive polls of this thread that completed nothing.
    static EMPTY_POLLS: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// The wait mode of a client, and the yields its wait loops made. Empty
/// polls are counted per thread (every thread of a multi-threaded client
/// waits on its own), so a thread yields after its own empty polls.
#[derive(Debug)]
pub(crate) struct Idle<C> {
    spin: std::sync::atomic::AtomicBool,
    /// Yields made (statistics).
    pub yields: C,
}

impl<C: crate::sync::Counter> Idle<C> {
    pub fn new(mode: WaitMode) -> Self {
        Idle {
            spin: std::sync::atomic::AtomicBool::new(mode == WaitMode::Spin),
            yields: C::default(),
        }
    }

    /// The mode.
    pub fn mode(&self) -> WaitMode {
        if self.spin.load(std::sync::atomic::Ordering::Relaxed) {
            WaitMode::Spin
        } else {
            WaitMode::Yield
        }
    }

    /// Change the mode.
    pub fn set_mode(&self, mode: WaitMode) {
        self.spin
            .store(mode == WaitMode::Spin, std::sync::atomic::Ordering::Relaxed);
    }

    /// Called after each poll, saying whether it completed anything.
    #[inline]
    pub fn after_poll(&self, progressed: bool) {
        if self.spin.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        EMPTY_POLLS.with(|e| {
            if progressed {
                e.set(0);
                return;
            }
            let n = e.get().saturating_add(1);
            e.set(n);
            if n >= YIELD_AFTER {
                self.yields.add(1);
                std::thread::yield_now();
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_yields_only_when_oversubscribed() {
        use WaitModeSetting::*;
        assert_eq!(WaitMode::resolve(Auto, 4, 2), WaitMode::Yield);
        assert_eq!(WaitMode::resolve(Auto, 2, 2), WaitMode::Spin);
        assert_eq!(WaitMode::resolve(Spin, 64, 1), WaitMode::Spin);
        assert_eq!(WaitMode::resolve(Yield, 1, 64), WaitMode::Yield);
    }

    #[test]
    fn yields_after_empty_polls_only() {
        let i = Idle::<std::cell::Cell<u64>>::new(WaitMode::Yield);
        i.after_poll(true);
        for _ in 0..YIELD_AFTER - 1 {
            i.after_poll(false);
        }
        assert_eq!(i.yields.get(), 0);
        i.after_poll(false);
        assert_eq!(i.yields.get(), 1);
        // Progress resets the count.
        i.after_poll(true);
        i.after_poll(false);
        assert_eq!(i.yields.get(), 1);
        let s = Idle::<std::cell::Cell<u64>>::new(WaitMode::Spin);
        for _ in 0..100 {
            s.after_poll(false);
        }
        assert_eq!(s.yields.get(), 0);
        assert_eq!(s.mode(), WaitMode::Spin);
        s.set_mode(WaitMode::Yield);
        assert_eq!(s.mode(), WaitMode::Yield);
    }
}
