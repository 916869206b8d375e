//! Receive-buffer accounting: which buffers to post, how, and when a buffer
//! that the provider released may be posted again.
//!
//! `GASNET_OFI_NUM_RECEIVE_BUFFS` buffers of `GASNET_OFI_RECEIVE_BUFF_SIZE`
//! bytes serve one endpoint each (this type accounts for one endpoint's
//! share). In [`RecvMode::Multi`] a buffer is posted with `FI_MULTI_RECV`
//! and the provider packs messages into it; in [`RecvMode::PerMessage`]
//! (`single` and `recv`) each post receives one message.
//!
//! # When a multi-receive buffer is free again
//!
//! The provider reports the release of a multi-receive buffer with the
//! `FI_MULTI_RECV` completion flag, either on the last message it placed
//! in the buffer or in a completion of its own. That flag alone is not
//! enough: libfabric 1.17's `ofi_rxm` over `tcp` carves a buffer for each
//! message as its header arrives and reports each message once all of its
//! data has arrived, connection by connection, so the message that carries
//! `FI_MULTI_RECV` can complete while an earlier message in the same buffer
//! is still being written (known-issues.md). Reposting then lets new
//! messages overwrite it. So a buffer is reposted only when
//!
//! 1. the provider released it, and
//! 2. every byte the provider placed before the release point belongs to a
//!    message whose handler has returned: the bytes of consumed messages,
//!    rounded up to [`crate::wire::ALIGN`], add up to the end of the last
//!    message (providers place messages back to back; every AM length is a
//!    multiple of `ALIGN`).
//!
//! A release that comes in a completion of its own marks the end at the
//! furthest byte delivered so far (the specification says the buffer is no
//! longer in use then).
//!
//! # Rescue posts
//!
//! libfabric 1.17's `shm` takes a receive entry from a fixed pool for every
//! posted buffer *and* for every unexpected message. Under a flood the
//! unexpected messages can take every entry while no buffer is posted;
//! a multi-receive post then fails with `-FI_ENOMEM` forever, and the
//! unexpected messages can only drain into a posted buffer. A post without
//! `FI_MULTI_RECV` that matches an unexpected message reuses that message's
//! entry, so after a post answered "no memory" the buffer is posted once as
//! [`PostAs::Single`]; once that message has been handled it goes back to
//! multi-receive posting.

use crate::wire::align_up;
use crate::Error;
use std::collections::VecDeque;

/// How buffers are used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvMode {
    /// Posted with `FI_MULTI_RECV`: many messages per post.
    Multi,
    /// One message per post (`single` and `recv`).
    PerMessage,
}

/// How to post a buffer now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PostAs {
    /// With `FI_MULTI_RECV`.
    Multi,
    /// Without: the buffer receives one message.
    Single,
}

/// Why a post did not happen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// `-FI_EAGAIN`: try again after progress.
    Again,
    /// `-FI_ENOMEM`: the provider has no receive entry free.
    NoMemory,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Waiting in the post queue.
    Queued,
    /// Handed to the provider (from the moment a poster took it: with
    /// several threads, its first completion can be read by another thread
    /// before the post call has even returned).
    Posted(PostAs),
    /// The provider released it; waiting for its messages' handlers.
    Released,
}

#[derive(Debug, Clone)]
struct Buf {
    state: State,
    /// Bytes (aligned) of messages whose handlers have returned.
    done: usize,
    /// Bytes (aligned) of messages delivered from the buffer.
    delivered: usize,
    /// Furthest byte (aligned) of any message delivered from the buffer.
    delivered_end: usize,
    /// Where the provider stopped placing messages, once released.
    release_end: Option<usize>,
    /// Messages delivered whose handlers have not returned.
    in_flight: u32,
    /// Post the next time without `FI_MULTI_RECV` (after `NoMemory`).
    rescue: bool,
}

impl Buf {
    fn new() -> Buf {
        Buf {
            state: State::Queued,
            done: 0,
            delivered: 0,
            delivered_end: 0,
            release_end: None,
            in_flight: 0,
            rescue: false,
        }
    }
}

/// A message to hand to the dispatcher: `len` bytes at `offset` in the
/// buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// Offset in the buffer.
    pub offset: usize,
    /// Length.
    pub len: usize,
}

/// Counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecvCounts {
    /// Posts made (first posts included).
    pub posts: u64,
    /// Posts the provider refused.
    pub refused: u64,
    /// Rescue posts (without `FI_MULTI_RECV`, after `-FI_ENOMEM`).
    pub rescues: u64,
    /// Releases whose earlier messages were still incomplete when the
    /// release arrived.
    pub early_releases: u64,
}

/// One endpoint's receive buffers (indices `0..count`).
#[derive(Debug)]
pub struct RecvAccounting {
    size: usize,
    mode: RecvMode,
    bufs: Vec<Buf>,
    queue: VecDeque<u32>,
    counts: RecvCounts,
}

impl RecvAccounting {
    /// `count` buffers of `size` bytes (a multiple of [`crate::wire::ALIGN`]),
    /// all waiting for their first post.
    pub fn new(count: usize, size: usize, mode: RecvMode) -> RecvAccounting {
        RecvAccounting {
            size,
            mode,
            bufs: vec![Buf::new(); count],
            queue: (0..count as u32).collect(),
            counts: RecvCounts::default(),
        }
    }

    /// Bytes per buffer.
    pub fn buffer_size(&self) -> usize {
        self.size
    }

    /// Number of buffers.
    pub fn len(&self) -> usize {
        self.bufs.len()
    }

    /// True when there are no buffers.
    pub fn is_empty(&self) -> bool {
        self.bufs.is_empty()
    }

    /// The mode.
    pub fn mode(&self) -> RecvMode {
        self.mode
    }

    /// Counters.
    pub fn counts(&self) -> RecvCounts {
        self.counts
    }

    /// Buffers currently handed to the provider.
    pub fn posted(&self) -> usize {
        self.bufs
            .iter()
            .filter(|b| matches!(b.state, State::Posted(_)))
            .count()
    }

    /// Buffers waiting to be posted.
    pub fn queued(&self) -> usize {
        self.queue.len()
    }

    /// Whether nothing waits to be posted (cheap check before reposting).
    #[inline]
    pub fn nothing_to_post(&self) -> bool {
        self.queue.is_empty()
    }

    /// Whether posting should not wait for an idle moment: half or more of
    /// the buffers wait for a post (a busy receiver keeps at least half of
    /// its buffers with the provider).
    #[inline]
    pub fn post_due(&self) -> bool {
        self.queue.len() * 2 >= self.bufs.len()
    }

    /// Take the next buffer to post and say how; the caller posts it and
    /// reports with [`RecvAccounting::posted_ok`] or
    /// [`RecvAccounting::refused`] (each buffer goes to one poster). The
    /// buffer counts as posted from now on.
    pub fn next_post(&mut self) -> Option<(u32, PostAs)> {
        let i = self.queue.pop_front()?;
        let b = &mut self.bufs[i as usize];
        let how = if self.mode == RecvMode::PerMessage || b.rescue {
            PostAs::Single
        } else {
            PostAs::Multi
        };
        b.state = State::Posted(how);
        b.done = 0;
        b.delivered = 0;
        b.delivered_end = 0;
        b.release_end = None;
        b.in_flight = 0;
        Some((i, how))
    }

    /// The post returned by [`RecvAccounting::next_post`] succeeded.
    pub fn posted_ok(&mut self, i: u32, how: PostAs) {
        let _ = i;
        self.counts.posts += 1;
        if how == PostAs::Single && self.mode == RecvMode::Multi {
            self.counts.rescues += 1;
        }
    }

    /// The post returned by [`RecvAccounting::next_post`] was refused: the
    /// buffer goes back to the front of the queue (after `NoMemory` in
    /// multi mode it is posted next as [`PostAs::Single`]).
    pub fn refused(&mut self, i: u32, why: Refusal) {
        debug_assert!(matches!(self.bufs[i as usize].state, State::Posted(_)));
        self.bufs[i as usize].state = State::Queued;
        self.queue.push_front(i);
        self.counts.refused += 1;
        if why == Refusal::NoMemory && self.mode == RecvMode::Multi {
            self.bufs[i as usize].rescue = true;
        }
    }

    /// A receive completion for buffer `i`: `len` bytes at `offset` (for a
    /// multi-receive post, where the provider placed them; `None` for a
    /// single post, whose message starts at 0), with `released` when the
    /// completion carries `FI_MULTI_RECV`. Returns the message to dispatch
    /// (`None` for a bare release). Once the message's handler has
    /// returned, call [`RecvAccounting::consumed`].
    ///
    /// A completion for a buffer that is not posted, or bytes outside the
    /// buffer, is an error: the buffer is never handed out twice.
    #[inline]
    pub fn arrived(
        &mut self,
        i: u32,
        offset: Option<usize>,
        len: usize,
        released: bool,
    ) -> Result<Option<Arrival>, Error> {
        let size = self.size;
        // `let ... else`, not `ok_or`: errors are built only when returned.
        let Some(b) = self.bufs.get_mut(i as usize) else {
            return Err(Error::UnknownReceiveBuffer { index: i });
        };
        let how = match b.state {
            State::Posted(how) => how,
            // A late message of a released buffer (the case described in
            // the module documentation) is still expected.
            State::Released if b.release_end.is_some_and(|e| b.delivered < e) => PostAs::Multi,
            _ => return Err(Error::NotPosted { index: i }),
        };
        let offset = match how {
            PostAs::Single => 0,
            PostAs::Multi => offset.unwrap_or(0),
        };
        let Some(end) = offset.checked_add(len).filter(|e| *e <= size) else {
            return Err(Error::OutsideBuffer {
                index: i,
                offset,
                len,
                size,
            });
        };
        let end = align_up(end).min(size);
        if len > 0 {
            if let Some(r) = b.release_end {
                if end > r {
                    return Err(Error::AfterRelease {
                        index: i,
                        offset,
                        end: r,
                    });
                }
            }
            b.in_flight += 1;
            b.delivered += align_up(len);
            b.delivered_end = b.delivered_end.max(end);
        }
        let single = how == PostAs::Single;
        if single || released {
            if b.release_end.is_some() {
                return Err(Error::ReleasedTwice { index: i });
            }
            let at = if len > 0 { end } else { b.delivered_end };
            b.release_end = Some(at);
            b.state = State::Released;
            if single {
                b.rescue = false;
            } else if b.delivered < at {
                // Earlier messages of this buffer are still arriving.
                self.counts.early_releases += 1;
            }
        }
        if len == 0 {
            self.maybe_free(i);
            return Ok(None);
        }
        Ok(Some(Arrival { offset, len }))
    }

    /// The handler of a message from buffer `i` (as returned by
    /// [`RecvAccounting::arrived`]) returned. Returns true when this made
    /// the buffer free, which queues it for posting.
    #[inline]
    pub fn consumed(&mut self, i: u32, a: Arrival) -> bool {
        let b = &mut self.bufs[i as usize];
        debug_assert!(b.in_flight > 0);
        b.in_flight = b.in_flight.saturating_sub(1);
        b.done += align_up(a.len);
        self.maybe_free(i)
    }

    fn maybe_free(&mut self, i: u32) -> bool {
        let b = &mut self.bufs[i as usize];
        let free = b.state == State::Released
            && b.in_flight == 0
            && b.release_end.is_some_and(|e| b.done >= e);
        if free {
            b.state = State::Queued;
            self.queue.push_back(i);
        }
        free
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn posted_all(r: &mut RecvAccounting) {
        while let Some((i, how)) = r.next_post() {
            r.posted_ok(i, how);
        }
    }

    #[test]
    fn in_order_multi_receive_recycles_after_release() {
        let mut r = RecvAccounting::new(2, 64, RecvMode::Multi);
        let (i, how) = r.next_post().unwrap();
        assert_eq!((i, how), (0, PostAs::Multi));
        r.posted_ok(i, how);
        posted_all(&mut r);
        assert_eq!(r.posted(), 2);
        let a = r.arrived(0, Some(0), 16, false).unwrap().unwrap();
        assert!(!r.consumed(0, a));
        let b = r.arrived(0, Some(16), 24, true).unwrap().unwrap();
        assert_eq!(
            b,
            Arrival {
                offset: 16,
                len: 24
            }
        );
        assert!(r.consumed(0, b));
        assert_eq!(r.next_post(), Some((0, PostAs::Multi)));
    }

    /// A busy receiver may leave consumed buffers unposted until half of
    /// them are out, never more.
    #[test]
    fn posting_is_due_once_half_the_buffers_wait() {
        let mut r = RecvAccounting::new(4, 64, RecvMode::PerMessage);
        assert!(r.post_due(), "nothing posted yet");
        posted_all(&mut r);
        assert!(!r.post_due());
        for (i, due) in [(0, false), (1, true), (2, true)] {
            let a = r.arrived(i, None, 16, true).unwrap().unwrap();
            assert!(r.consumed(i, a));
            assert_eq!(r.post_due(), due, "after buffer {i}");
        }
        posted_all(&mut r);
        assert!(!r.post_due());
        let mut one = RecvAccounting::new(1, 64, RecvMode::PerMessage);
        posted_all(&mut one);
        let a = one.arrived(0, None, 16, true).unwrap().unwrap();
        assert!(one.consumed(0, a));
        assert!(one.post_due(), "a single buffer is reposted at once");
    }

    /// The tcp;ofi_rxm 1.17 pattern: the last message of a buffer (with
    /// FI_MULTI_RECV) completes before an earlier one.
    #[test]
    fn release_before_an_earlier_message_waits_for_it() {
        let mut r = RecvAccounting::new(1, 4096, RecvMode::Multi);
        posted_all(&mut r);
        let first = r.arrived(0, Some(0), 16, false).unwrap().unwrap();
        r.consumed(0, first);
        // A 2048-byte message was carved at 16 and is still arriving; the
        // next one, at 2064, ends the buffer and arrives first.
        let last = r.arrived(0, Some(2064), 2032, true).unwrap().unwrap();
        assert!(
            !r.consumed(0, last),
            "reposted while bytes 16..2064 were pending"
        );
        assert_eq!(r.next_post(), None);
        assert_eq!(r.counts().early_releases, 1);
        let late = r.arrived(0, Some(16), 2048, false).unwrap().unwrap();
        assert!(r.consumed(0, late));
        assert_eq!(r.next_post(), Some((0, PostAs::Multi)));
    }

    #[test]
    fn a_bare_release_waits_for_running_handlers() {
        let mut r = RecvAccounting::new(1, 256, RecvMode::Multi);
        posted_all(&mut r);
        let a = r.arrived(0, Some(0), 40, false).unwrap().unwrap();
        assert_eq!(r.arrived(0, None, 0, true).unwrap(), None);
        assert_eq!(r.next_post(), None);
        assert!(r.consumed(0, a));
        assert_eq!(r.next_post(), Some((0, PostAs::Multi)));
    }

    #[test]
    fn no_memory_rescues_with_a_single_post() {
        let mut r = RecvAccounting::new(1, 256, RecvMode::Multi);
        let (i, _) = r.next_post().unwrap();
        r.refused(i, Refusal::Again);
        assert_eq!(r.next_post(), Some((0, PostAs::Multi)));
        r.refused(0, Refusal::NoMemory);
        assert_eq!(r.next_post(), Some((0, PostAs::Single)));
        r.posted_ok(0, PostAs::Single);
        // A single post's completion releases it (the offset is ignored).
        let a = r.arrived(0, Some(99), 24, false).unwrap().unwrap();
        assert_eq!(a.offset, 0);
        assert!(r.consumed(0, a));
        assert_eq!(r.next_post(), Some((0, PostAs::Multi)));
        assert_eq!(r.counts().rescues, 1);
    }

    #[test]
    fn per_message_mode_always_posts_single() {
        let mut r = RecvAccounting::new(3, 64, RecvMode::PerMessage);
        posted_all(&mut r);
        let a = r.arrived(1, None, 8, false).unwrap().unwrap();
        assert!(r.consumed(1, a));
        assert_eq!(r.next_post(), Some((1, PostAs::Single)));
    }

    #[test]
    fn errors_name_the_buffer() {
        let mut r = RecvAccounting::new(1, 64, RecvMode::Multi);
        assert_eq!(
            r.arrived(0, Some(0), 8, false).unwrap_err().to_string(),
            "the provider reported a receive into buffer 0, which is not posted"
        );
        posted_all(&mut r);
        assert_eq!(
            r.arrived(0, Some(60), 8, false).unwrap_err().to_string(),
            "the provider reported 8 bytes at offset 60 of receive buffer 0, which holds 64"
        );
        assert_eq!(
            r.arrived(3, Some(0), 8, false).unwrap_err().to_string(),
            "the provider reported a receive into buffer 3, which does not exist"
        );
        // Released with bytes 0..16 still arriving, then released again.
        let a = r.arrived(0, Some(16), 8, true).unwrap().unwrap();
        assert_eq!(
            r.arrived(0, None, 0, true).unwrap_err().to_string(),
            "the provider released receive buffer 0 twice"
        );
        assert_eq!(
            r.arrived(0, Some(24), 8, false).unwrap_err().to_string(),
            "the provider placed a message at offset 24 of receive buffer 0 after releasing it at 24"
        );
        r.consumed(0, a);
    }
}
