//! VIS: `gex_VIS_{Vector,Indexed,Strided}{Put,Get}{NB,NBI,Blocking}` over
//! the conduit's vector, indexed and strided transfers (iovec writes up to
//! the provider's limits, packing beyond them; memory copies within a
//! supernode). Every piece is checked before anything moves.
//!
//! The transfers complete before the call returns: NB returns
//! `GEX_EVENT_INVALID` (allowed for an operation completed synchronously),
//! NBI leaves nothing for `gex_NBI_Wait`, and the metadata arrays may be
//! reused at once.

use crate::am::failed;
use crate::state::{api, fatal, segment_offset, Api};
use crate::team::tm_rank;
use crate::types::{gex_Flags_t, gex_Memvec_t, gex_Rank_t, Handle};
use conduit::client::Error;
use std::ffi::{c_int, c_void};

/// `n` entries at `p`; a fatal error naming `arg` for NULL with `n > 0`.
fn list<'a, T>(call: &str, arg: &str, p: *const T, n: usize) -> &'a [T] {
    if n == 0 {
        return &[];
    }
    if p.is_null() {
        fatal(call, &format!("{arg} is NULL with {n} entries"))
    }
    if n > isize::MAX as usize / std::mem::size_of::<T>().max(1) {
        fatal(call, &format!("{arg}: {n} entries is more than any array"))
    }
    // SAFETY: GASNet-EX requires `n` valid entries at `p`.
    unsafe { std::slice::from_raw_parts(p, n) }
}

/// The local pieces `(address, length)` as one span: its base, its length
/// and each piece's offset in it; a fatal error names a NULL piece, or one
/// that wraps around the address space.
fn span(
    call: &str,
    arg: &str,
    pieces: impl Iterator<Item = (usize, usize)> + Clone,
) -> (usize, usize, Vec<(usize, usize)>) {
    for (i, (a, l)) in pieces.clone().enumerate() {
        if l > 0 && a == 0 {
            fatal(call, &format!("{arg}[{i}] is NULL with {l} bytes"))
        }
        if l > isize::MAX as usize || a.checked_add(l).is_none() {
            fatal(
                call,
                &format!("{arg}[{i}]: {l} bytes at 0x{a:x} leave the address space"),
            )
        }
    }
    let live = pieces.clone().filter(|&(_, l)| l > 0);
    let base = live.clone().map(|(a, _)| a).min().unwrap_or(0);
    let end = live.map(|(a, l)| a.saturating_add(l)).max().unwrap_or(0);
    let offsets = pieces
        .map(|(a, l)| if l == 0 { (0, 0) } else { (a - base, l) })
        .collect();
    (base, end - base, offsets)
}

/// Remote pieces as offsets in `rank`'s segment (a fatal error names a
/// piece that leaves it).
fn remote_pieces(
    a: &Api,
    call: &str,
    arg: &str,
    rank: usize,
    pieces: impl Iterator<Item = (usize, usize)>,
) -> Vec<(usize, usize)> {
    pieces
        .enumerate()
        .map(|(i, (addr, len))| {
            if len == 0 {
                return (0, 0);
            }
            let off = segment_offset(
                a,
                call,
                &format!("{arg}[{i}]"),
                rank,
                addr as *mut c_void,
                len,
            );
            (off, len)
        })
        .collect()
}

fn done(call: &str, r: Result<(), Error>) {
    if let Err(e) = r {
        failed(call, &e)
    }
}

#[allow(clippy::too_many_arguments)]
fn vector(
    call: &str,
    put: bool,
    tm: Handle,
    rank: gex_Rank_t,
    lcount: usize,
    llist: *const gex_Memvec_t,
    rcount: usize,
    rlist: *const gex_Memvec_t,
) {
    let a = api(call);
    let r = tm_rank(a, call, tm, rank);
    let (larg, rarg) = if put {
        ("srclist", "dstlist")
    } else {
        ("dstlist", "srclist")
    };
    let local = list(call, larg, llist, lcount);
    let remote = list(call, rarg, rlist, rcount);
    let (base, len, lp) = span(
        call,
        larg,
        local.iter().map(|m| (m.gex_addr as usize, m.gex_len)),
    );
    let rp = remote_pieces(
        a,
        call,
        rarg,
        r,
        remote.iter().map(|m| (m.gex_addr as usize, m.gex_len)),
    );
    // SAFETY: GASNet-EX requires each local piece readable (put) or
    // writable (get) until completion, which is this call's return.
    done(call, unsafe {
        a.client.raw_vector(r, put, base as *mut u8, len, &lp, &rp)
    })
}

#[allow(clippy::too_many_arguments)]
fn indexed(
    call: &str,
    put: bool,
    tm: Handle,
    rank: gex_Rank_t,
    lcount: usize,
    llist: *const *mut c_void,
    llen: usize,
    rcount: usize,
    rlist: *const *mut c_void,
    rlen: usize,
) {
    let a = api(call);
    let r = tm_rank(a, call, tm, rank);
    let (larg, rarg) = if put {
        ("srclist", "dstlist")
    } else {
        ("dstlist", "srclist")
    };
    let local = list(call, larg, llist, lcount);
    let remote = list(call, rarg, rlist, rcount);
    let (base, len, lp) = span(call, larg, local.iter().map(|&p| (p as usize, llen)));
    let rp = remote_pieces(a, call, rarg, r, remote.iter().map(|&p| (p as usize, rlen)));
    let loff: Vec<usize> = lp.iter().map(|&(o, _)| o).collect();
    let roff: Vec<usize> = rp.iter().map(|&(o, _)| o).collect();
    // SAFETY: as in `vector`.
    done(call, unsafe {
        a.client
            .raw_indexed(r, put, base as *mut u8, len, &loff, llen, &roff, rlen)
    })
}

/// The bytes a strided region spans around its first element: (lowest
/// offset, highest offset + 1), relative to the first element.
fn extent(strides: &[isize], elemsz: usize, count: &[usize]) -> Option<(isize, isize)> {
    let (mut lo, mut hi) = (0isize, isize::try_from(elemsz).ok()?);
    for (s, &c) in strides.iter().zip(count) {
        let d = s.checked_mul(isize::try_from(c).ok()?.checked_sub(1)?)?;
        if d < 0 {
            lo = lo.checked_add(d)?;
        } else {
            hi = hi.checked_add(d)?;
        }
    }
    Some((lo, hi))
}

#[allow(clippy::too_many_arguments)]
fn strided(
    call: &str,
    put: bool,
    tm: Handle,
    rank: gex_Rank_t,
    laddr: *mut c_void,
    lstrides: *const isize,
    raddr: *mut c_void,
    rstrides: *const isize,
    elemsz: usize,
    count: *const usize,
    levels: usize,
) {
    let a = api(call);
    // The specification's no-op cases first: elemsz 0 ignores every other
    // argument; a zero count ignores all but the arrays.
    if elemsz == 0 {
        return;
    }
    let (larg, rarg) = if put { ("src", "dst") } else { ("dst", "src") };
    let ls = list(call, &format!("{larg}strides"), lstrides, levels);
    let rs = list(call, &format!("{rarg}strides"), rstrides, levels);
    let count = list(call, "count", count, levels);
    if count.contains(&0) {
        return;
    }
    let r = tm_rank(a, call, tm, rank);
    let overflow = || -> ! {
        fatal(
            call,
            "the local region's extent overflows (strides x counts)",
        )
    };
    let Some((lo, hi)) = extent(ls, elemsz, count) else {
        overflow()
    };
    let Some(len) = hi.checked_sub(lo).and_then(|l| usize::try_from(l).ok()) else {
        overflow()
    };
    if laddr.is_null() {
        fatal(call, &format!("{larg}addr is NULL"))
    }
    // The local side as a span starting at its lowest byte.
    let base = (laddr as isize).wrapping_add(lo) as *mut u8;
    // The remote first element as an offset (the plan checks the region).
    let roff = segment_offset(a, call, &format!("{rarg}addr"), r, raddr, 0);
    // SAFETY: as in `vector`; the region's bytes lie in base..base+len.
    done(call, unsafe {
        a.client.raw_strided(
            r,
            put,
            base,
            len,
            lo.unsigned_abs(),
            ls,
            roff,
            rs,
            elemsz,
            count,
        )
    })
}

macro_rules! forms {
    ($nb:ident, $nbi:ident, $blocking:ident, $body:ident, ($($arg:ident: $ty:ty),*), $put:expr, ($($pass:expr),*)) => {
        #[doc = concat!("`", stringify!($nb), "` (complete on return: `GEX_EVENT_INVALID`).")]
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $nb($($arg: $ty),*, _flags: gex_Flags_t) -> Handle {
            $body(stringify!($nb), $put, $($pass),*);
            std::ptr::null_mut()
        }
        #[doc = concat!("`", stringify!($nbi), "` (complete on return).")]
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $nbi($($arg: $ty),*, _flags: gex_Flags_t) -> c_int {
            $body(stringify!($nbi), $put, $($pass),*);
            0
        }
        #[doc = concat!("`", stringify!($blocking), "`.")]
        #[no_mangle]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $blocking($($arg: $ty),*, _flags: gex_Flags_t) -> c_int {
            $body(stringify!($blocking), $put, $($pass),*);
            0
        }
    };
}

forms!(gex_VIS_VectorPutNB, gex_VIS_VectorPutNBI, gex_VIS_VectorPutBlocking, vector,
    (tm: Handle, dstrank: gex_Rank_t, dstcount: usize, dstlist: *const gex_Memvec_t,
     srccount: usize, srclist: *const gex_Memvec_t),
    true, (tm, dstrank, srccount, srclist, dstcount, dstlist));
forms!(gex_VIS_VectorGetNB, gex_VIS_VectorGetNBI, gex_VIS_VectorGetBlocking, vector,
    (tm: Handle, dstcount: usize, dstlist: *const gex_Memvec_t, srcrank: gex_Rank_t,
     srccount: usize, srclist: *const gex_Memvec_t),
    false, (tm, srcrank, dstcount, dstlist, srccount, srclist));
forms!(gex_VIS_IndexedPutNB, gex_VIS_IndexedPutNBI, gex_VIS_IndexedPutBlocking, indexed,
    (tm: Handle, dstrank: gex_Rank_t, dstcount: usize, dstlist: *const *mut c_void,
     dstlen: usize, srccount: usize, srclist: *const *mut c_void, srclen: usize),
    true, (tm, dstrank, srccount, srclist, srclen, dstcount, dstlist, dstlen));
forms!(gex_VIS_IndexedGetNB, gex_VIS_IndexedGetNBI, gex_VIS_IndexedGetBlocking, indexed,
    (tm: Handle, dstcount: usize, dstlist: *const *mut c_void, dstlen: usize,
     srcrank: gex_Rank_t, srccount: usize, srclist: *const *mut c_void, srclen: usize),
    false, (tm, srcrank, dstcount, dstlist, dstlen, srccount, srclist, srclen));
forms!(gex_VIS_StridedPutNB, gex_VIS_StridedPutNBI, gex_VIS_StridedPutBlocking, strided,
    (tm: Handle, dstrank: gex_Rank_t, dstaddr: *mut c_void, dststrides: *const isize,
     srcaddr: *mut c_void, srcstrides: *const isize, elemsz: usize, count: *const usize,
     stridelevels: usize),
    true, (tm, dstrank, srcaddr, srcstrides, dstaddr, dststrides, elemsz, count, stridelevels));
forms!(gex_VIS_StridedGetNB, gex_VIS_StridedGetNBI, gex_VIS_StridedGetBlocking, strided,
    (tm: Handle, dstaddr: *mut c_void, dststrides: *const isize, srcrank: gex_Rank_t,
     srcaddr: *mut c_void, srcstrides: *const isize, elemsz: usize, count: *const usize,
     stridelevels: usize),
    false, (tm, srcrank, dstaddr, dststrides, srcaddr, srcstrides, elemsz, count, stridelevels));

/// GASNet-1's strided calls (`gasnet_{put,get}s_{bulk,nb_bulk,nbi_bulk}`,
/// macros in gasnet.h): `count` has `stridelevels + 1` entries, the first
/// the contiguous chunk in bytes. GASNet-EX's conversion: `count[0]`
/// becomes `elemsz` and the rest slide down. `put` 1 or 0; `form` 0 NB,
/// 1 NBI, 2 Blocking. Completes before it returns (`GEX_EVENT_INVALID`).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn gasnetc_VIS_Strided1(
    put: c_int,
    form: c_int,
    node: gex_Rank_t,
    dstaddr: *mut c_void,
    dststrides: *const usize,
    srcaddr: *mut c_void,
    srcstrides: *const usize,
    count: *const usize,
    stridelevels: usize,
) -> Handle {
    let put = put != 0;
    let call = match (put, form) {
        (true, 0) => "gasnet_puts_nb_bulk",
        (true, 1) => "gasnet_puts_nbi_bulk",
        (true, _) => "gasnet_puts_bulk",
        (false, 0) => "gasnet_gets_nb_bulk",
        (false, 1) => "gasnet_gets_nbi_bulk",
        (false, _) => "gasnet_gets_bulk",
    };
    let Some(levels1) = stridelevels.checked_add(1) else {
        fatal(
            call,
            &format!("stridelevels={stridelevels} is more than any array"),
        )
    };
    let c = list(call, "count", count, levels1);
    let tm = crate::legacy::gasnetc_legacy_tm();
    // GASNet-1's strides are size_t, GASNet-EX's ptrdiff_t: the same
    // bits, and a stride beyond isize::MAX reads as negative (a region
    // the checks then find outside the segment or the address space).
    let (ds, ss) = (dststrides.cast::<isize>(), srcstrides.cast::<isize>());
    let rest = c[1..].as_ptr();
    if put {
        strided(
            call,
            true,
            tm,
            node,
            srcaddr,
            ss,
            dstaddr,
            ds,
            c[0],
            rest,
            stridelevels,
        );
    } else {
        strided(
            call,
            false,
            tm,
            node,
            dstaddr,
            ds,
            srcaddr,
            ss,
            c[0],
            rest,
            stridelevels,
        );
    }
    std::ptr::null_mut()
}
