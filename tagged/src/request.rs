//! Requests: one slot per operation, found from a completion's context
//! without a search (the context is the slot's index), each with the kind
//! of operation that decides what a completion does to it (the MTL's
//! per-request completion callback).

/// What a finished receive or probe reports (MPI's status).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Status {
    /// Source rank in the communicator ([`Status::UNKNOWN_SOURCE`] for a
    /// truncated wildcard-source receive on a provider that reports no
    /// CQ data in error completions).
    pub source: u32,
    /// The message's tag.
    pub tag: u32,
    /// Bytes placed in the buffer (receives) or the message's size
    /// (probes and sends).
    pub len: usize,
    /// The message was longer than the buffer: `len` bytes were written,
    /// the rest dropped.
    pub truncated: bool,
    /// The message's full size (equals `len` unless truncated). For a
    /// truncated receive this is what the provider reported; providers that
    /// report no size in the error completion (tcp;ofi_rxm's rendezvous
    /// path) leave the buffer's size here, a lower bound.
    pub size: usize,
    /// The receive was cancelled before it matched.
    pub cancelled: bool,
}

impl Status {
    /// The source of a message whose source the provider did not report.
    pub const UNKNOWN_SOURCE: u32 = u32::MAX;
}

/// A libfabric failure of an operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpError {
    /// libfabric error number (positive `FI_E*`).
    pub err: i32,
    /// Provider error number.
    pub prov_errno: i32,
    /// The provider's text.
    pub text: String,
}

/// What a request is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A send; done on its completion.
    Send {
        /// Bytes.
        len: usize,
    },
    /// A send from a copy the conduit owns, which nobody waits for (the
    /// caller's buffer was free at return, as with an inject): its slot is
    /// freed, not kept as done, when it completes or fails.
    Detached {
        /// Bytes.
        len: usize,
    },
    /// A synchronous send: done once sent *and* acknowledged.
    SyncSend {
        /// Bytes.
        len: usize,
        /// The send completed.
        sent: bool,
        /// The receiver's acknowledgement arrived.
        acked: bool,
    },
    /// A receive into a buffer of `cap` bytes.
    Recv {
        /// Buffer size.
        cap: usize,
        /// It holds one of the provider's receive entries that the
        /// application's receives share (the conduit's own receives, and
        /// probes, use a reserve).
        counted: bool,
        /// The source asked for (a communicator rank; `None`: any).
        from: Option<u32>,
    },
    /// A probe (`FI_PEEK`, perhaps with `FI_CLAIM`).
    Probe,
}

/// Which of a request's operations a context stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// The request's send, receive or probe.
    Main,
    /// A synchronous send's wait for its acknowledgement.
    Ack,
}

const PART_MAIN: u64 = 1;
const PART_ACK: u64 = 2;

/// The context value of `part` of the request in slot `idx`: never 0 and
/// never a multiple of 8, so it cannot be mistaken for a pointer.
#[inline]
pub fn context(idx: u32, part: Part) -> u64 {
    ((idx as u64) << 3)
        | match part {
            Part::Main => PART_MAIN,
            Part::Ack => PART_ACK,
        }
}

/// The slot and part a context value stands for.
#[inline]
pub fn decode_context(ctx: u64) -> Option<(u32, Part)> {
    let idx = u32::try_from(ctx >> 3).ok()?;
    match ctx & 7 {
        PART_MAIN => Some((idx, Part::Main)),
        PART_ACK => Some((idx, Part::Ack)),
        _ => None,
    }
}

/// A request's handle: slot and generation (a stale handle never sees a
/// reused slot's result).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReqId {
    /// Slot.
    pub idx: u32,
    /// Generation of the slot when started.
    pub gen: u32,
}

/// Outcome of a finished request.
pub type Outcome = Result<Status, OpError>;

#[derive(Debug)]
enum State {
    Free,
    Pending(Kind),
    Done(Outcome),
}

#[derive(Debug)]
struct Slot {
    gen: u32,
    /// The communicator (id) the request is on; [`NO_OWNER`] for one that
    /// no communicator waits for.
    owner: u32,
    state: State,
    /// Nobody will take the outcome ([`Requests::abandon`]): the slot is
    /// freed when the request finishes.
    abandoned: bool,
}

/// The owner of requests no communicator waits for (detached sends).
pub const NO_OWNER: u32 = u32::MAX;

/// The table of requests.
#[derive(Debug, Default)]
pub struct Requests {
    slots: Vec<Slot>,
    free: Vec<u32>,
    pending: usize,
}

impl Requests {
    /// An empty table.
    pub fn new() -> Requests {
        Requests::default()
    }

    /// Start a request of `kind` on communicator `owner` (or
    /// [`NO_OWNER`]).
    pub fn start(&mut self, owner: u32, kind: Kind) -> ReqId {
        self.pending += 1;
        if let Some(idx) = self.free.pop() {
            let s = &mut self.slots[idx as usize];
            s.gen = s.gen.wrapping_add(1);
            s.owner = owner;
            s.state = State::Pending(kind);
            s.abandoned = false;
            return ReqId { idx, gen: s.gen };
        }
        let idx = self.slots.len() as u32;
        self.slots.push(Slot {
            gen: 0,
            owner,
            state: State::Pending(kind),
            abandoned: false,
        });
        ReqId { idx, gen: 0 }
    }

    /// Requests started and not yet finished.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Requests on communicator `owner` not yet finished (a scan: for a
    /// communicator's free, not for hot paths).
    pub fn pending_on(&self, owner: u32) -> usize {
        self.slots
            .iter()
            .filter(|s| s.owner == owner && matches!(s.state, State::Pending(_)))
            .count()
    }

    /// The kind of the request pending in slot `idx` (completions carry
    /// the slot, not the generation).
    pub fn kind_at(&self, idx: u32) -> Option<Kind> {
        match self.slots.get(idx as usize) {
            Some(Slot {
                state: State::Pending(k),
                ..
            }) => Some(*k),
            _ => None,
        }
    }

    /// The kind of a pending request.
    pub fn kind(&self, id: ReqId) -> Option<Kind> {
        match self.slots.get(id.idx as usize) {
            Some(Slot {
                gen,
                state: State::Pending(k),
                ..
            }) if *gen == id.gen => Some(*k),
            _ => None,
        }
    }

    fn finish(&mut self, idx: u32, o: Outcome) {
        if let Some(s) = self.slots.get_mut(idx as usize) {
            match s.state {
                State::Pending(_) if s.abandoned => {
                    self.pending -= 1;
                    s.state = State::Free;
                    s.abandoned = false;
                    self.free.push(idx);
                }
                State::Pending(Kind::Detached { .. }) => {
                    self.pending -= 1;
                    s.state = State::Free;
                    self.free.push(idx);
                }
                State::Pending(_) => {
                    self.pending -= 1;
                    s.state = State::Done(o);
                }
                _ => {}
            }
        }
    }

    /// A successful completion of `part` of slot `idx`. For a receive or
    /// probe, `status` is what arrived (with the full size in `size`);
    /// for a receive, the caller has told whether it asks for an
    /// acknowledgement. Returns true when the request is now done.
    pub fn complete(&mut self, idx: u32, part: Part, status: Status) -> bool {
        let Some(s) = self.slots.get_mut(idx as usize) else {
            return false;
        };
        let State::Pending(kind) = &mut s.state else {
            return false;
        };
        let done = match (kind, part) {
            (Kind::Send { len } | Kind::Detached { len }, Part::Main) => Some(Status {
                len: *len,
                size: *len,
                ..status
            }),
            (Kind::SyncSend { len, sent, acked }, p) => {
                match p {
                    Part::Main => *sent = true,
                    Part::Ack => *acked = true,
                }
                (*sent && *acked).then_some(Status {
                    len: *len,
                    size: *len,
                    ..status
                })
            }
            (Kind::Recv { .. }, Part::Main) | (Kind::Probe, Part::Main) => Some(status),
            _ => None,
        };
        match done {
            Some(st) => {
                self.finish(idx, Ok(st));
                true
            }
            None => false,
        }
    }

    /// A failed operation of slot `idx`. A truncated receive (`FI_ETRUNC`)
    /// and a cancelled one (`FI_ECANCELED`) finish with a status saying so;
    /// anything else finishes with the error (a detached send's slot is
    /// freed: its caller reports the error).
    pub fn fail(&mut self, idx: u32, outcome: Outcome) {
        self.finish(idx, outcome);
    }

    /// Whether `id` has finished.
    pub fn is_done(&self, id: ReqId) -> bool {
        matches!(self.slots.get(id.idx as usize), Some(Slot { gen, state: State::Done(_), .. }) if *gen == id.gen)
    }

    /// Nobody will take `id`'s outcome (its caller returned an error while
    /// a part of it was still posted, such as a synchronous send's
    /// acknowledgement receive being cancelled): a finished request's slot
    /// is freed now, a pending one's when it finishes, and it no longer
    /// counts as its communicator's ([`Requests::pending_on`]).
    pub fn abandon(&mut self, id: ReqId) {
        let Some(s) = self.slots.get_mut(id.idx as usize) else {
            return;
        };
        if s.gen != id.gen {
            return;
        }
        match s.state {
            State::Done(_) => {
                s.state = State::Free;
                self.free.push(id.idx);
            }
            State::Pending(_) => {
                s.abandoned = true;
                s.owner = NO_OWNER;
            }
            State::Free => {}
        }
    }

    /// Take the outcome of a finished request and free its slot.
    pub fn take(&mut self, id: ReqId) -> Option<Outcome> {
        let s = self.slots.get_mut(id.idx as usize)?;
        if s.gen != id.gen || !matches!(s.state, State::Done(_)) {
            return None;
        }
        let State::Done(o) = std::mem::replace(&mut s.state, State::Free) else {
            unreachable!("checked above")
        };
        self.free.push(id.idx);
        Some(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A detached send leaves nothing to take: its slot is free for the
    /// next request once it completes or fails, and a stale handle to it
    /// sees nothing.
    #[test]
    fn detached_sends_free_their_slot_when_they_finish() {
        let mut r = Requests::new();
        let a = r.start(1, Kind::Detached { len: 8 });
        let b = r.start(1, Kind::Detached { len: 9 });
        assert_eq!(r.pending(), 2);
        assert!(r.complete(a.idx, Part::Main, Status::default()));
        assert_eq!(r.pending(), 1);
        assert!(!r.is_done(a));
        assert_eq!(r.take(a), None);
        assert_eq!(r.kind_at(a.idx), None);
        let c = r.start(1, Kind::Send { len: 1 });
        assert_eq!(c.idx, a.idx, "the freed slot is reused");
        assert_ne!(c.gen, a.gen);
        r.fail(
            b.idx,
            Err(OpError {
                err: 5,
                prov_errno: 0,
                text: "lost".into(),
            }),
        );
        assert_eq!(r.pending(), 1);
        assert_eq!(r.take(b), None);
        assert_eq!(r.start(1, Kind::Probe).idx, b.idx);
        // The Send in a's old slot is unaffected.
        assert!(r.complete(c.idx, Part::Main, Status::default()));
        assert_eq!(r.take(c).map(|o| o.map(|s| s.len)), Some(Ok(1)));
    }

    #[test]
    fn contexts_round_trip_and_never_look_like_pointers() {
        for idx in [0, 1, 77, u32::MAX] {
            for p in [Part::Main, Part::Ack] {
                let c = context(idx, p);
                assert_ne!(c % 8, 0);
                assert_eq!(decode_context(c), Some((idx, p)));
            }
        }
        assert_eq!(decode_context(0x1000), None);
    }

    #[test]
    fn sync_send_needs_both_parts() {
        let mut r = Requests::new();
        let id = r.start(
            1,
            Kind::SyncSend {
                len: 8,
                sent: false,
                acked: false,
            },
        );
        assert!(!r.complete(id.idx, Part::Ack, Status::default()));
        assert!(!r.is_done(id));
        assert!(r.complete(id.idx, Part::Main, Status::default()));
        let st = r.take(id).unwrap().unwrap();
        assert_eq!(st.len, 8);
        assert_eq!(r.pending(), 0);
    }

    #[test]
    fn stale_handles_see_nothing() {
        let mut r = Requests::new();
        let a = r.start(
            1,
            Kind::Recv {
                cap: 4,
                counted: true,
                from: None,
            },
        );
        r.complete(
            a.idx,
            Part::Main,
            Status {
                len: 4,
                size: 4,
                ..Status::default()
            },
        );
        assert!(r.take(a).is_some());
        let b = r.start(1, Kind::Send { len: 1 });
        assert_eq!(a.idx, b.idx);
        assert!(!r.is_done(a));
        assert!(r.take(a).is_none());
        assert_eq!(r.kind(b), Some(Kind::Send { len: 1 }));
        r.fail(
            b.idx,
            Err(OpError {
                err: 5,
                prov_errno: 0,
                text: "x".into(),
            }),
        );
        assert!(r.take(b).unwrap().is_err());
    }

    #[test]
    fn pending_requests_are_counted_per_communicator() {
        let mut r = Requests::new();
        let a = r.start(3, Kind::Send { len: 1 });
        r.start(4, Kind::Probe);
        r.start(NO_OWNER, Kind::Detached { len: 2 });
        assert_eq!(
            (r.pending_on(3), r.pending_on(4), r.pending_on(5)),
            (1, 1, 0)
        );
        assert!(r.complete(a.idx, Part::Main, Status::default()));
        assert_eq!(r.pending_on(3), 0, "a finished request is not pending");
        assert_eq!(r.pending(), 2);
    }

    #[test]
    fn an_abandoned_request_frees_its_slot_when_it_finishes() {
        let mut r = Requests::new();
        let kind = Kind::SyncSend {
            len: 8,
            sent: false,
            acked: false,
        };
        let a = r.start(4, kind);
        // Its send failed; the acknowledgement's receive is being cancelled.
        assert!(!r.complete(a.idx, Part::Main, Status::default()));
        r.abandon(a);
        assert_eq!(r.pending(), 1, "still owed the cancelled receive's end");
        assert_eq!(r.pending_on(4), 0, "its communicator may be freed");
        r.fail(
            a.idx,
            Err(OpError {
                err: 125,
                prov_errno: 0,
                text: "cancelled".into(),
            }),
        );
        assert_eq!(r.pending(), 0);
        assert!(!r.is_done(a) && r.take(a).is_none(), "nothing kept");
        let b = r.start(4, Kind::Probe);
        assert_eq!(b.idx, a.idx, "the slot was freed and is reused");
        // Abandoning a finished request frees it at once; a stale id is
        // ignored.
        assert!(r.complete(b.idx, Part::Main, Status::default()));
        r.abandon(b);
        r.abandon(a);
        assert_eq!(r.start(4, Kind::Probe).idx, a.idx);
        assert_eq!(r.pending(), 1);
    }
}
