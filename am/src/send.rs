//! The send-path decision for an Active Message: checked once, before
//! anything is posted.
//!
//! * An AM to the sending rank itself never reaches the provider
//!   ([`Route::Loopback`]: some providers lose messages an endpoint sends to
//!   itself under load, and there is nothing for the fabric to do).
//! * A Long whose whole message fits under the inline limit carries its
//!   payload inside the message ([`LongPath::Inline`]); a larger one first
//!   writes its payload into the destination's segment by RMA and then
//!   sends the header ([`LongPath::Rma`], put-then-send).
//! * A message up to the inject limit is injected ([`Route::Inject`]: the
//!   provider copies it, no completion); a larger one goes from a send
//!   buffer ([`Route::Buffered`]) that its completion returns to the pool.

use crate::wire::{message_len, Header, Kind};
use crate::{Error, MAX_ARGS};

/// What the sender asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Category {
    /// Short: arguments only.
    Short,
    /// Medium: payload delivered in a temporary buffer.
    Medium,
    /// Long: payload delivered into the destination's segment.
    Long,
}

/// How the message leaves this rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// Queued for this rank's own next poll.
    Loopback,
    /// `fi_inject`.
    Inject,
    /// `fi_send` from a pooled buffer.
    Buffered,
    /// Through the destination's shared-memory ring (a rank of this
    /// supernode).
    Shared,
}

/// How a Long payload travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LongPath {
    /// Inside the message; the receiver copies it into place.
    Inline,
    /// By an RMA write that completes before the header is sent.
    Rma,
    /// Copied by the sender into the destination's segment, mapped in its
    /// address space, before the header is queued (shared memory).
    Copy,
}

/// The limits that decide the path (fixed at start-up).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SendLimits {
    /// This rank.
    pub rank: usize,
    /// Ranks in the job.
    pub size: usize,
    /// Largest message injected (`GASNET_OFI_AM_INJECT_LIMIT`, capped at
    /// the provider's inject size).
    pub inject_limit: usize,
    /// Largest message that carries a Long payload inline
    /// (`GASNET_OFI_LONG_AM_RMA_THRESH`).
    pub long_inline_limit: usize,
    /// Largest Medium payload (`GASNET_OFI_MAX_MEDIUM`).
    pub max_medium: usize,
}

/// A message to send, as the caller describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Destination rank.
    pub dest: usize,
    /// Category.
    pub category: Category,
    /// Request (else reply).
    pub is_request: bool,
    /// Handler index.
    pub handler: u8,
    /// Number of arguments.
    pub nargs: usize,
    /// Payload bytes (Medium, Long).
    pub payload_len: usize,
    /// For Long: the offset in the destination's segment and that
    /// segment's size (`None` when no segment is attached there).
    pub long_target: Option<(usize, Option<u64>)>,
}

/// The decided path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// The header to encode (its kind says whether a Long is inline).
    pub header: Header,
    /// How the message leaves.
    pub route: Route,
    /// Bytes on the wire.
    pub len: usize,
    /// For Long: how the payload travels.
    pub long: Option<LongPath>,
    /// Whether the payload is encoded into the message.
    pub payload_inline: bool,
}

impl SendLimits {
    /// Check `r` and decide its path.
    #[inline]
    pub fn plan(&self, r: &Request) -> Result<Plan, Error> {
        if r.dest >= self.size {
            return Err(Error::BadRank {
                rank: r.dest,
                size: self.size,
            });
        }
        if r.nargs > MAX_ARGS {
            return Err(Error::TooManyArgs { nargs: r.nargs });
        }
        let loopback = r.dest == self.rank;
        let (kind, long) = match r.category {
            Category::Short => (Kind::Short, None),
            Category::Medium => {
                if r.payload_len > self.max_medium {
                    return Err(Error::MediumTooLarge {
                        len: r.payload_len,
                        max: self.max_medium,
                    });
                }
                (Kind::Medium, None)
            }
            Category::Long => {
                let (offset, size) = r.long_target.unwrap_or((0, None));
                let Some(size) = size else {
                    return Err(Error::NoSegment { rank: r.dest });
                };
                // A Long of no bytes writes nothing: its destination is
                // passed to the handler as given, wherever it points
                // (GASNet-EX's dest_addr "even for the degenerate case
                // when nbytes==0").
                let fits = r.payload_len == 0
                    || offset
                        .checked_add(r.payload_len)
                        .is_some_and(|end| end as u64 <= size)
                        && r.payload_len <= u32::MAX as usize;
                if !fits {
                    return Err(Error::LongOutsideSegment {
                        rank: r.dest,
                        offset,
                        len: r.payload_len,
                        size: size as usize,
                    });
                }
                let inline_len = message_len(Kind::LongInline, r.nargs, r.payload_len);
                // An empty Long always goes inline: there is nothing to
                // write, and its offset need not lie in the segment.
                if loopback || r.payload_len == 0 || inline_len <= self.long_inline_limit {
                    (Kind::LongInline, Some(LongPath::Inline))
                } else {
                    (Kind::Long, Some(LongPath::Rma))
                }
            }
        };
        let payload_inline = matches!(kind, Kind::Medium | Kind::LongInline);
        let len = message_len(
            kind,
            r.nargs,
            if payload_inline { r.payload_len } else { 0 },
        );
        let route = if loopback {
            Route::Loopback
        } else if len <= self.inject_limit {
            Route::Inject
        } else {
            Route::Buffered
        };
        Ok(Plan {
            header: Header {
                kind,
                nargs: r.nargs as u8,
                is_request: r.is_request,
                handler: r.handler,
                src: self.rank as u32,
            },
            route,
            len,
            long,
            payload_inline,
        })
    }
}

impl SendLimits {
    /// The plan of a message to a rank of this supernode (another rank
    /// whose segment and AM rings are mapped here): the checks of
    /// [`SendLimits::plan`], then [`Route::Shared`]; a Long carries only its
    /// header, its payload is copied into place ([`LongPath::Copy`]). A
    /// message to this rank itself keeps `plan`'s loopback route.
    #[inline]
    pub fn plan_shared(&self, r: &Request) -> Result<Plan, Error> {
        let mut p = self.plan(r)?;
        if p.route == Route::Loopback {
            return Ok(p);
        }
        p.route = Route::Shared;
        if p.long.is_some() {
            p.header.kind = Kind::Long;
            p.long = Some(LongPath::Copy);
            p.payload_inline = false;
            p.len = message_len(Kind::Long, r.nargs, 0);
        }
        Ok(p)
    }

    /// [`SendLimits::plan_shared`] of a Short or a Medium within the
    /// maximum to another rank, in a few compares; `None` for anything
    /// else.
    #[inline(always)]
    pub fn plan_shared_small(
        &self,
        dest: usize,
        category: Category,
        is_request: bool,
        handler: u8,
        nargs: usize,
        payload_len: usize,
    ) -> Option<Plan> {
        self.small(
            dest,
            category,
            is_request,
            handler,
            nargs,
            payload_len,
            Route::Shared,
        )
    }

    /// The plan of a Short, or a Medium within the maximum, to another rank
    /// in the job that fits the inject limit: nearly every message, decided
    /// in a few compares without building a [`Request`]. `None` for
    /// anything else, which [`SendLimits::plan`] decides (or refuses); where
    /// this returns a plan, it is the one `plan` returns.
    #[inline(always)]
    pub fn plan_injected(
        &self,
        dest: usize,
        category: Category,
        is_request: bool,
        handler: u8,
        nargs: usize,
        payload_len: usize,
    ) -> Option<Plan> {
        self.small(
            dest,
            category,
            is_request,
            handler,
            nargs,
            payload_len,
            Route::Inject,
        )
        .filter(|p| p.len <= self.inject_limit)
    }

    /// A Short, or a Medium within the maximum, to another rank, on
    /// `route`; `None` for anything else.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn small(
        &self,
        dest: usize,
        category: Category,
        is_request: bool,
        handler: u8,
        nargs: usize,
        payload_len: usize,
        route: Route,
    ) -> Option<Plan> {
        if dest >= self.size || dest == self.rank || nargs > MAX_ARGS {
            return None;
        }
        let (kind, inline) = match category {
            Category::Short => (Kind::Short, 0),
            Category::Medium if payload_len <= self.max_medium => (Kind::Medium, payload_len),
            _ => return None,
        };
        Some(Plan {
            header: Header {
                kind,
                nargs: nargs as u8,
                is_request,
                handler,
                src: self.rank as u32,
            },
            route,
            len: message_len(kind, nargs, inline),
            long: None,
            payload_inline: kind == Kind::Medium,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: SendLimits = SendLimits {
        rank: 1,
        size: 4,
        inject_limit: 64,
        long_inline_limit: 8280,
        max_medium: 8192,
    };

    fn req(dest: usize, category: Category, nargs: usize, payload_len: usize) -> Request {
        Request {
            dest,
            category,
            is_request: true,
            handler: 200,
            nargs,
            payload_len,
            long_target: Some((0, Some(1 << 20))),
        }
    }

    /// The shared plans: `plan`'s checks, the shared route, a Long by copy
    /// with only its header in the message, loopback kept; the small plan
    /// agrees with the full one wherever it decides.
    #[test]
    fn the_shared_plans_agree() {
        for dest in 0..6 {
            for category in [Category::Short, Category::Medium, Category::Long] {
                for nargs in [0, 3, 16, 17] {
                    for payload_len in [0, 8, 8192, 8193, 1 << 20, (1 << 20) + 1] {
                        let r = req(dest, category, nargs, payload_len);
                        let full = L.plan_shared(&r);
                        let plain = L.plan(&r);
                        assert_eq!(full.is_err(), plain.is_err(), "{r:?}");
                        let small = L.plan_shared_small(
                            dest,
                            category,
                            true,
                            r.handler,
                            nargs,
                            payload_len,
                        );
                        if let Some(s) = small {
                            assert_eq!(Ok(s), full, "{r:?}");
                        }
                        let Ok(p) = full else { continue };
                        if dest == L.rank {
                            assert_eq!(p.route, Route::Loopback);
                            continue;
                        }
                        assert_eq!(p.route, Route::Shared);
                        if category == Category::Long {
                            assert_eq!(p.long, Some(LongPath::Copy));
                            assert_eq!(p.header.kind, Kind::Long);
                            assert!(!p.payload_inline);
                            assert_eq!(p.len, message_len(Kind::Long, nargs, 0));
                        } else {
                            assert!(small.is_some(), "{r:?}");
                        }
                    }
                }
            }
        }
    }

    /// Where the fast plan decides, it decides as `plan` does; it leaves
    /// nothing injectable to `plan` for a Short or Medium to another rank.
    #[test]
    fn the_injected_plan_agrees_with_plan() {
        for dest in 0..6 {
            for category in [Category::Short, Category::Medium, Category::Long] {
                for nargs in 0..=17 {
                    for payload_len in [0, 1, 8, 40, 57, 64, 8192, 8193] {
                        for is_request in [true, false] {
                            let mut r = req(dest, category, nargs, payload_len);
                            r.is_request = is_request;
                            let full = L.plan(&r);
                            let fast = L.plan_injected(
                                dest,
                                category,
                                is_request,
                                r.handler,
                                nargs,
                                payload_len,
                            );
                            match (&full, fast) {
                                (_, Some(p)) => assert_eq!(full.as_ref().ok(), Some(&p), "{r:?}"),
                                (Ok(p), None) => assert!(
                                    p.route != Route::Inject || category == Category::Long,
                                    "{r:?} left to plan: {p:?}"
                                ),
                                (Err(_), None) => {}
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn routes() {
        let p = L.plan(&req(2, Category::Short, 2, 0)).unwrap();
        assert_eq!((p.route, p.len, p.long), (Route::Inject, 16, None));
        let p = L.plan(&req(2, Category::Medium, 0, 57)).unwrap();
        assert_eq!(p.route, Route::Buffered);
        assert_eq!(p.len, 80);
        let p = L.plan(&req(1, Category::Medium, 0, 57)).unwrap();
        assert_eq!(p.route, Route::Loopback);
        // Long: inline up to the limit, by RMA above; always inline to self.
        let p = L.plan(&req(2, Category::Long, 0, 8256)).unwrap();
        assert_eq!(
            (p.header.kind, p.long),
            (Kind::LongInline, Some(LongPath::Inline))
        );
        assert_eq!(p.len, 8280);
        let p = L.plan(&req(2, Category::Long, 0, 8257)).unwrap();
        assert_eq!((p.header.kind, p.long), (Kind::Long, Some(LongPath::Rma)));
        assert_eq!(
            (p.route, p.len, p.payload_inline),
            (Route::Inject, 24, false)
        );
        let p = L.plan(&req(1, Category::Long, 0, 100_000)).unwrap();
        assert_eq!((p.route, p.long), (Route::Loopback, Some(LongPath::Inline)));
    }

    #[test]
    fn bad_sends_are_refused_with_their_numbers() {
        let e = |r: Request| L.plan(&r).unwrap_err().to_string();
        assert_eq!(
            e(req(4, Category::Short, 0, 0)),
            "rank 4 is not in the job (size 4)"
        );
        assert_eq!(
            e(req(2, Category::Short, 17, 0)),
            "17 AM arguments given; at most 16 are supported"
        );
        assert_eq!(
            e(req(2, Category::Medium, 0, 8193)),
            "AM Medium payload of 8193 bytes exceeds the maximum of 8192 bytes (GASNET_OFI_MAX_MEDIUM)"
        );
        let mut r = req(2, Category::Long, 0, 16);
        r.long_target = Some((usize::MAX - 4, Some(1 << 20)));
        assert_eq!(
            e(r),
            format!(
                "16 bytes at offset {} do not fit in the 1048576-byte segment of rank 2",
                usize::MAX - 4
            )
        );
        r.long_target = Some((0, None));
        assert_eq!(
            e(r),
            "rank 2 has no segment attached (call attach_segment first)"
        );
    }
}
