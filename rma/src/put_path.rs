//! The put hierarchy of the reference conduit, for puts whose source must be
//! reusable when the call returns:
//!
//! 1. up to the inject limit: `FI_INJECT` (the provider copies the data);
//! 2. above it and up to `GASNET_OFI_BBUF_THRESHOLD`: copy into bounce
//!    buffers, one write per buffer, never more buffers than the threshold
//!    allows;
//! 3. beyond the threshold, or when not enough bounce buffers are free: a
//!    blocking put that waits for remote completion.
//!
//! Implicit (NBI) puts of at most the aggregation limit take none of these:
//! they are gathered into one message per target ([`crate::aggregate`]).
//!
//! `NB_PUT_INJECT`, `NB_PUT_BOUNCE`, `NB_PUT_BLOCK` and `NB_PUT_AGGREGATE`
//! count each path.

/// The path a "now" put takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PutPath {
    /// `FI_INJECT`.
    Inject,
    /// This many bounce buffers.
    Bounce(usize),
    /// Block until remote completion.
    Block,
    /// Gathered with other implicit puts into one message to the target.
    Aggregate,
}

/// The limits that decide the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PutLimits {
    /// RMA inject limit (already capped at the provider's).
    pub inject: usize,
    /// `GASNET_OFI_BBUF_THRESHOLD`.
    pub bbuf_threshold: usize,
    /// `GASNET_OFI_BBUF_SIZE`.
    pub bbuf_size: usize,
    /// `GASNET_OFI_PUT_AGGREGATE_LIMIT` in effect (0: off).
    pub aggregate: usize,
}

impl PutLimits {
    /// The path of a blocking put of `nbytes`: injected up to the inject
    /// limit, else written from the caller's buffer while the call waits.
    #[inline]
    pub fn choose_blocking(&self, nbytes: usize) -> PutPath {
        if nbytes <= self.inject {
            PutPath::Inject
        } else {
            PutPath::Block
        }
    }

    /// The path of an implicit put of `nbytes`: aggregated up to the
    /// aggregation limit, else as [`choose`](Self::choose).
    #[inline]
    pub fn choose_implicit(&self, nbytes: usize, bbufs_free: usize) -> PutPath {
        if nbytes > 0 && nbytes <= self.aggregate {
            PutPath::Aggregate
        } else {
            self.choose(nbytes, bbufs_free)
        }
    }

    /// The path for `nbytes`, given how many bounce buffers are free now.
    #[inline]
    pub fn choose(&self, nbytes: usize, bbufs_free: usize) -> PutPath {
        if nbytes <= self.inject {
            PutPath::Inject
        } else if nbytes <= self.bbuf_threshold && self.bbuf_size > 0 {
            let n = nbytes.div_ceil(self.bbuf_size);
            if n <= bbufs_free {
                PutPath::Bounce(n)
            } else {
                PutPath::Block
            }
        } else {
            PutPath::Block
        }
    }
}

/// The `NB_PUT_*` counters: how many puts took each path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PutCounts {
    /// `NB_PUT_INJECT`.
    pub inject: u64,
    /// `NB_PUT_BOUNCE`.
    pub bounce: u64,
    /// `NB_PUT_BLOCK`.
    pub block: u64,
    /// `NB_PUT_AGGREGATE`.
    pub aggregate: u64,
}

impl PutCounts {
    /// Count one put on `path`.
    #[inline]
    pub fn count(&mut self, path: PutPath) {
        match path {
            PutPath::Inject => self.inject += 1,
            PutPath::Bounce(_) => self.bounce += 1,
            PutPath::Block => self.block += 1,
            PutPath::Aggregate => self.aggregate += 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: PutLimits = PutLimits {
        inject: 64,
        bbuf_threshold: 16384,
        bbuf_size: 4096,
        aggregate: 256,
    };

    #[test]
    fn hierarchy_boundaries() {
        assert_eq!(L.choose(0, 64), PutPath::Inject);
        assert_eq!(L.choose(64, 64), PutPath::Inject);
        assert_eq!(L.choose(65, 64), PutPath::Bounce(1));
        assert_eq!(L.choose(4096, 64), PutPath::Bounce(1));
        assert_eq!(L.choose(4097, 64), PutPath::Bounce(2));
        assert_eq!(L.choose(16384, 64), PutPath::Bounce(4));
        assert_eq!(L.choose(16385, 64), PutPath::Block);
        // Not enough free buffers: block rather than wait for buffers.
        assert_eq!(L.choose(16384, 3), PutPath::Block);
        assert_eq!(L.choose(100, 0), PutPath::Block);
    }

    #[test]
    fn implicit_puts_up_to_the_limit_are_aggregated() {
        assert_eq!(L.choose_implicit(0, 64), PutPath::Inject);
        assert_eq!(L.choose_implicit(1, 64), PutPath::Aggregate);
        assert_eq!(L.choose_implicit(256, 64), PutPath::Aggregate);
        assert_eq!(L.choose_implicit(257, 64), PutPath::Bounce(1));
        let off = PutLimits { aggregate: 0, ..L };
        assert_eq!(off.choose_implicit(8, 64), PutPath::Inject);
    }

    #[test]
    fn never_more_buffers_than_the_threshold_allows() {
        for n in 65..=L.bbuf_threshold {
            if let PutPath::Bounce(k) = L.choose(n, usize::MAX) {
                assert!(k * L.bbuf_size >= n);
                assert!(k <= L.bbuf_threshold / L.bbuf_size);
            }
        }
    }

    #[test]
    fn counters() {
        let mut c = PutCounts::default();
        for p in [
            PutPath::Inject,
            PutPath::Bounce(2),
            PutPath::Block,
            PutPath::Block,
            PutPath::Aggregate,
        ] {
            c.count(p);
        }
        assert_eq!(L.choose_blocking(64), PutPath::Inject);
        assert_eq!(L.choose_blocking(65), PutPath::Block);
        assert_eq!(
            c,
            PutCounts {
                inject: 1,
                bounce: 1,
                block: 2,
                aggregate: 1,
            }
        );
    }
}
