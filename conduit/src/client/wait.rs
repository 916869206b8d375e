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

/// Tracks empty polls and yields in [`WaitMode::Yield`].
#[derive(Debug)]
pub(crate) struct Idle {
    pub mode: WaitMode,
    empty: u32,
    /// Yields made (statistics).
    pub yields: u64,
}

impl Idle {
    pub fn new(mode: WaitMode) -> Idle {
        Idle {
            mode,
            empty: 0,
            yields: 0,
        }
    }

    /// Called after each poll, saying whether it completed anything.
    #[inline]
    pub fn after_poll(&mut self, progressed: bool) {
        if self.mode == WaitMode::Spin {
            return;
        }
        if progressed {
            self.empty = 0;
            return;
        }
        self.empty = self.empty.saturating_add(1);
        if self.empty >= YIELD_AFTER {
            self.yields += 1;
            std::thread::yield_now();
        }
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
        let mut i = Idle::new(WaitMode::Yield);
        for _ in 0..YIELD_AFTER - 1 {
            i.after_poll(false);
        }
        assert_eq!(i.yields, 0);
        i.after_poll(false);
        assert_eq!(i.yields, 1);
        // Progress resets the count.
        i.after_poll(true);
        i.after_poll(false);
        assert_eq!(i.yields, 1);
        let mut s = Idle::new(WaitMode::Spin);
        for _ in 0..100 {
            s.after_poll(false);
        }
        assert_eq!(s.yields, 0);
    }
}
