//! The library's state: one client per process, reachable from the thread
//! that initialised it (the SEQ contract), fatal errors, handle checks and
//! the event table.

use crate::types::Handle;
use conduit::client::{Client, RawOp, SegmentInfo};
use std::cell::{Cell, RefCell};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// Everything the C API keeps between calls.
pub(crate) struct Api {
    /// The conduit's single-threaded client.
    pub client: Client<()>,
    /// The name and flags `gex_Client_Init` was given
    /// (`gex_Client_QueryName`, `gex_Client_QueryFlags`).
    pub name: std::ffi::CString,
    /// See `name`.
    pub flags: crate::types::gex_Flags_t,
    /// Every rank's segment, once attached.
    pub segs: RefCell<Vec<SegmentInfo>>,
    /// Explicit events (`gex_Event_t`).
    pub events: RefCell<Events>,
    /// Implicit puts and gets not yet synced.
    pub nbi_puts: RefCell<Vec<RawOp>>,
    /// Implicit gets not yet synced.
    pub nbi_gets: RefCell<Vec<RawOp>>,
    /// The legacy barrier's notify (id, flags), until its wait.
    pub legacy: Cell<Option<(i32, i32)>>,
    /// This host's ranks, for `gex_System_QueryHostInfo`.
    pub host_ranks: Vec<crate::types::gex_RankInfo_t>,
    /// This rank's supernode, for `gex_System_QueryNbrhdInfo`.
    pub nbrhd_ranks: Vec<crate::types::gex_RankInfo_t>,
    /// The primordial team as the collectives see it (made at first use).
    pub world: std::cell::OnceCell<crate::team::CTeam>,
    /// Teams made by `gex_TM_Split` (never freed: see `team`).
    pub teams: RefCell<Vec<&'static crate::team::TmObj>>,
    /// Collectives started by `gex_Coll_*NB`, until their event completes.
    pub colls: RefCell<Vec<Option<crate::coll::Pending>>>,
    /// The open NBI access region's operations.
    pub region: RefCell<Option<Vec<RawOp>>>,
    /// Ended access regions whose event has not completed.
    pub regions: RefCell<Vec<Option<Vec<RawOp>>>>,
    /// Client data of the client, the endpoint, the segment and the
    /// primordial team (`gex_*_SetCData`).
    pub cdata: [Cell<*const c_void>; 4],
    /// Live atomic domains (boxed: a domain's handle is its address,
    /// which must not move as the list grows).
    #[allow(clippy::vec_box)]
    pub ads: RefCell<Vec<Box<crate::ad::AdObj>>>,
}

/// The client, once `gex_Client_Init` succeeded (a leaked box: it lives
/// until the process ends).
static API: AtomicPtr<Api> = AtomicPtr::new(std::ptr::null_mut());
/// The thread that called `gex_Client_Init` (its `pthread_self`): the SEQ
/// library's one calling thread. Plain statics rather than thread-locals:
/// in a shared library every thread-local access is a call to
/// `__tls_get_addr`, and these are read on every call.
static OWNER: AtomicUsize = AtomicUsize::new(0);
/// The running C handler's token (null outside handlers); only the owner
/// thread reads or writes it.
static CURRENT_TOKEN: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());

fn this_thread() -> usize {
    // SAFETY: pthread_self has no preconditions.
    unsafe { libc::pthread_self() as usize }
}

/// Install the state (once, from `gex_Client_Init`).
pub(crate) fn install(api: Api) -> &'static Api {
    let api: &'static Api = Box::leak(Box::new(api));
    OWNER.store(this_thread(), Ordering::Release);
    API.store(api as *const Api as *mut Api, Ordering::Release);
    api
}

/// Whether `gex_Client_Init` succeeded in this process.
pub(crate) fn initialised() -> bool {
    !API.load(Ordering::Acquire).is_null()
}

/// The state, or `None` before `gex_Client_Init` or on another thread.
#[inline]
pub(crate) fn try_api() -> Option<&'static Api> {
    let p = API.load(Ordering::Acquire);
    if p.is_null() || OWNER.load(Ordering::Relaxed) != this_thread() {
        return None;
    }
    // SAFETY: `p` is the leaked box `install` stored, never freed; only the
    // owner thread (checked above) reaches it, so its non-Sync parts are
    // never shared between threads.
    Some(unsafe { &*p })
}

/// The state, for `call`; a fatal error before `gex_Client_Init` or from a
/// thread other than the one that called it.
#[inline]
pub(crate) fn api(call: &str) -> &'static Api {
    match try_api() {
        Some(a) => a,
        None => not_ready(call),
    }
}

#[cold]
fn not_ready(call: &str) -> ! {
    if initialised() {
        fatal(
            call,
            "called from a thread other than the one that called gex_Client_Init \
             (this is the SEQ library: one thread makes every GASNet call)",
        )
    } else {
        fatal(call, "called before gex_Client_Init")
    }
}

/// The running C handler's token (null outside handlers).
#[inline]
pub(crate) fn current_token() -> *mut c_void {
    CURRENT_TOKEN.load(Ordering::Relaxed)
}

/// Mark `token` as the running handler's for the duration of `f`.
#[inline]
pub(crate) fn in_handler<R>(token: *mut c_void, f: impl FnOnce() -> R) -> R {
    let prev = CURRENT_TOKEN.swap(token, Ordering::Relaxed);
    let r = f();
    CURRENT_TOKEN.store(prev, Ordering::Relaxed);
    r
}

/// GASNet's fatal error: print `*** FATAL ERROR (proc R): in CALL(): WHAT`
/// and end the job through the conduit's collective exit with code 1 (also
/// from inside a handler, which never resumes); before `gex_Client_Init`
/// this process ends with code 1.
#[cold]
pub(crate) fn fatal(call: &str, what: &str) -> ! {
    let api = try_api();
    let rank = api.map_or_else(|| "?".to_string(), |a| a.client.rank().to_string());
    eprintln!("*** FATAL ERROR (proc {rank}): in {call}(): {what}");
    match api {
        Some(a) => a.client.exit(1),
        None => {
            // SAFETY: fflush(NULL) flushes every output stream; _exit has
            // no preconditions.
            unsafe {
                libc::fflush(std::ptr::null_mut());
                libc::_exit(1)
            }
        }
    }
}

/// A fatal error naming `count` (its value `n`) and `arg` unless `n`
/// entries of `T` at `p` can be one Rust slice: at most `isize::MAX`
/// bytes, not reaching past the end of the address space. Checked before
/// any slice is made of memory a C caller passed (making one of such a
/// length is undefined behaviour even before it is read).
pub(crate) fn check_array<T>(call: &str, arg: &str, count: &str, p: *const T, n: usize) {
    let size = std::mem::size_of::<T>().max(1);
    let fits = n <= isize::MAX as usize / size && (p as usize).checked_add(n * size).is_some();
    if !fits {
        fatal(
            call,
            &format!(
                "{count}={n} is more than an array at {arg} ({p:p}) can hold ({size}-byte entries)"
            ),
        )
    }
}

/// Print GASNet's report of an error code being returned (unless
/// `gex_System_SetVerboseErrors(0)` silenced them), and return it.
#[cold]
pub(crate) fn error_return(call: &str, code: i32, why: &str) -> i32 {
    if !crate::query::verbose_errors() {
        return code;
    }
    eprintln!(
        "GASNet {call} returning an error code: {} ({}): {why}",
        crate::start::error_name(code),
        crate::start::error_desc(code)
    );
    code
}

/// The objects `gex_Client_Init` hands out (their addresses are the
/// handles).
pub(crate) static CLIENT_OBJ: u8 = 1;
pub(crate) static EP_OBJ: u8 = 2;
pub(crate) static TM_OBJ: u8 = 3;
pub(crate) static SEGMENT_OBJ: u8 = 4;
/// The TM-pair `gex_TM_Pair` returns (the only one: one endpoint per
/// process).
pub(crate) static PAIR_OBJ: u8 = 5;

/// The handle of one of the static objects.
pub(crate) fn handle(obj: &'static u8) -> Handle {
    obj as *const u8 as Handle
}

/// Check that `tm` is the team `gex_Client_Init` returned.
#[inline]
pub(crate) fn check_tm(call: &str, tm: Handle) {
    if tm != handle(&TM_OBJ) {
        bad_tm(call, tm)
    }
}

#[cold]
fn bad_tm(call: &str, tm: Handle) -> ! {
    fatal(
        call,
        &format!("tm={tm:p} is not the team returned by gex_Client_Init (GEX_TM_INVALID or a stale handle)"),
    )
}

/// Check `rank` names a rank of the job; returns it as an index.
#[inline]
pub(crate) fn check_rank(api: &Api, call: &str, rank: u32) -> usize {
    let r = rank as usize;
    if r >= api.client.size() {
        fatal(
            call,
            &format!(
                "rank={rank} is not a rank of this job (0..{})",
                api.client.size()
            ),
        )
    }
    r
}

/// `addr` with `nbytes` as an offset in `rank`'s segment; a fatal error
/// naming `arg` when the range leaves it (or no segment is attached).
pub(crate) fn segment_offset(
    a: &Api,
    call: &str,
    arg: &str,
    rank: usize,
    addr: *mut c_void,
    nbytes: usize,
) -> usize {
    let segs = a.segs.borrow();
    let Some(s) = segs.get(rank) else {
        fatal(
            call,
            "the segments must be attached (gex_Segment_Attach) first",
        )
    };
    let d = addr as u64;
    let end = d.checked_add(nbytes as u64);
    if d < s.base || end.is_none_or(|e| e > s.base + s.size) {
        fatal(
            call,
            &format!(
                "{arg}={addr:p} with nbytes={nbytes} is outside rank {rank}'s segment [0x{:x}, 0x{:x})",
                s.base,
                s.base + s.size
            ),
        )
    }
    (d - s.base) as usize
}

/// Put `x` in the first free slot of `v` (or a new one at the end); its
/// index. The tables behind `Ev::Coll` and `Ev::Region` use it.
pub(crate) fn slot_insert<T>(v: &mut Vec<Option<T>>, x: T) -> usize {
    match v.iter().position(Option::is_none) {
        Some(i) => {
            v[i] = Some(x);
            i
        }
        None => {
            v.push(Some(x));
            v.len() - 1
        }
    }
}

/// An explicit event's state.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ev {
    Rma(RawOp),
    /// A collective: its slot in `Api::colls`.
    Coll(usize),
    /// An NBI access region: its slot in `Api::regions`.
    Region(usize),
}

/// Events live in slots; `gex_Event_t` is the slot index plus 2 (0 is
/// GEX_EVENT_INVALID, 1 GEX_EVENT_NO_OP) in its low 32 bits and the slot's
/// generation in the high 32: a slot's generation moves on each time it is
/// freed, so a completed event's handle names no live event even once its
/// slot holds another (on a 32-bit target the generation is not kept).
#[derive(Default)]
pub(crate) struct Events {
    slots: Vec<(u32, Option<Ev>)>,
    free: Vec<usize>,
}

const GEN_SHIFT: u32 = if usize::BITS >= 64 { 32 } else { 0 };

fn encode(slot: usize, gen: u32) -> Handle {
    let g = if GEN_SHIFT > 0 {
        (gen as usize) << GEN_SHIFT
    } else {
        0
    };
    (g | (slot + 2)) as Handle
}

/// The slot and generation a handle of 2 or more names.
fn decode(v: usize) -> (usize, u32) {
    if GEN_SHIFT > 0 {
        ((v & 0xffff_ffff) - 2, (v >> GEN_SHIFT) as u32)
    } else {
        (v - 2, 0)
    }
}

impl Events {
    /// Store `ev`; its handle.
    pub fn insert(&mut self, ev: Ev) -> Handle {
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i].1 = Some(ev);
                i
            }
            None => {
                self.slots.push((0, Some(ev)));
                self.slots.len() - 1
            }
        };
        encode(i, self.slots[i].0)
    }

    /// The live slot `h` names.
    fn slot(&self, h: Handle) -> Option<usize> {
        let v = h as usize;
        if v & 0xffff_ffff < 2 {
            return None;
        }
        let (i, gen) = decode(v);
        match self.slots.get(i) {
            Some((g, Some(_))) if GEN_SHIFT == 0 || *g == gen => Some(i),
            _ => None,
        }
    }

    /// The event behind `h` (`None` for INVALID); a fatal error for
    /// GEX_EVENT_NO_OP (erroneous to test or wait) and for a handle that
    /// names no live event (one already completed, even once its slot was
    /// reused).
    pub fn get(&self, call: &str, h: Handle) -> Option<Ev> {
        let v = h as usize;
        if v == 0 {
            return None;
        }
        if v == crate::types::consts::EVENT_NO_OP {
            fatal(
                call,
                "event=GEX_EVENT_NO_OP is not an event (it is what a call that did not start an \
                 operation returns; passing it to test or wait is erroneous)",
            )
        }
        match self.slot(h) {
            Some(i) => self.slots[i].1,
            None => fatal(
                call,
                &format!("event={h:p} is not a pending event (already completed, or never returned by GASNet)"),
            ),
        }
    }

    /// Free the slot of `h`.
    pub fn remove(&mut self, h: Handle) {
        if let Some(i) = self.slot(h) {
            self.slots[i] = (self.slots[i].0.wrapping_add(1), None);
            self.free.push(i);
        }
    }
}
