//! GASNet's VIS formatting tools (`gasnett_format_memveclist`,
//! `_addrlist`, `_strides`, `_putsgets` and their `_bufsz`): a VIS
//! operation's metadata as text, for a client's diagnostics (GASNet's
//! testvis prints them when it finds a wrong byte). Each writes at most
//! its `_bufsz` bytes, the terminating NUL included, so a buffer of that
//! size always holds the text (cut short with "..." where it would not
//! fit).

use crate::types::gex_Memvec_t;
use std::ffi::{c_char, c_void};

/// `gasnett_memveclist_stats_t`: what a vector list spans.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct gasnett_memveclist_stats_t {
    /// The smallest piece's length.
    pub minsz: usize,
    /// The largest piece's length.
    pub maxsz: usize,
    /// The pieces' total length.
    pub totalsz: usize,
    /// The lowest address of a non-empty piece.
    pub minaddr: *mut c_void,
    /// The highest address of a non-empty piece (its last byte).
    pub maxaddr: *mut c_void,
}

/// `gasnett_addrlist_stats_t`: what an indexed list spans.
#[repr(C)]
#[allow(non_camel_case_types)]
pub struct gasnett_addrlist_stats_t {
    /// The lowest chunk address.
    pub minaddr: *mut c_void,
    /// The highest chunk's last byte.
    pub maxaddr: *mut c_void,
}

/// `n` entries at `p` (none for NULL or 0).
fn entries<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        return &[];
    }
    crate::state::check_array("gasnett_format_*", "the list", "its count", p, n);
    // SAFETY: the caller passes `n` valid entries at `p`, as GASNet's
    // formatters require (`check_array` kept them within one slice).
    unsafe { std::slice::from_raw_parts(p, n) }
}

/// Copy `text` into the `cap`-byte buffer `buf`, NUL-terminated, cut with
/// "..." if it does not fit.
fn emit(buf: *mut c_char, cap: usize, text: &str) {
    if buf.is_null() || cap == 0 {
        return;
    }
    let mut bytes = text.as_bytes().to_vec();
    if bytes.len() >= cap {
        bytes.truncate(cap.saturating_sub(4));
        bytes.extend_from_slice(&b"..."[..3.min(cap - 1 - bytes.len())]);
    }
    bytes.push(0);
    // SAFETY: the caller's buffer holds `cap` bytes (the `_bufsz` of the
    // same arguments); `bytes.len() <= cap`.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast(), buf, bytes.len()) };
}

/// `head`, then "list=[" with `items` separated by ", ", a new line every
/// `per_line` of them, and "]".
fn listing(head: String, items: impl Iterator<Item = String>, per_line: usize) -> String {
    let mut s = head + "\nlist=[";
    for (i, item) in items.enumerate() {
        if i > 0 {
            s.push_str(if i % per_line == 0 { ",\n      " } else { ", " });
        }
        s.push_str(&item);
    }
    s.push(']');
    s
}

/// `gasnett_format_memveclist_bufsz`.
#[no_mangle]
pub extern "C" fn gasnett_format_memveclist_bufsz(count: usize) -> usize {
    200usize.saturating_add(count.saturating_mul(50))
}

/// `gasnett_format_memveclist`: `count` pieces `{addr, len}` (a
/// `gasnet_memvec_t` or `gex_Memvec_t` list) as text in `buf`.
#[no_mangle]
pub extern "C" fn gasnett_format_memveclist(
    buf: *mut c_char,
    count: usize,
    list: *const c_void,
) -> gasnett_memveclist_stats_t {
    let list: Vec<(usize, usize)> = entries(list.cast::<gex_Memvec_t>(), count)
        .iter()
        .map(|m| (m.gex_addr as usize, m.gex_len))
        .collect();
    let live = || list.iter().filter(|&&(_, l)| l > 0);
    let stats = gasnett_memveclist_stats_t {
        minsz: list.iter().map(|&(_, l)| l).min().unwrap_or(0),
        maxsz: list.iter().map(|&(_, l)| l).max().unwrap_or(0),
        // Wrapping, as GASNet's C tools compute (and never a panic).
        totalsz: list.iter().fold(0usize, |t, &(_, l)| t.wrapping_add(l)),
        minaddr: live().map(|&(a, _)| a).min().unwrap_or(0) as *mut c_void,
        maxaddr: live()
            .map(|&(a, l)| a.wrapping_add(l - 1))
            .max()
            .unwrap_or(0) as *mut c_void,
    };
    let head = format!(
        "{} entries, totalsz={}, bounds=[{:p}...{:p}]",
        count, stats.totalsz, stats.minaddr, stats.maxaddr
    );
    let items = list.iter().map(|&(a, l)| format!("{{0x{a:x},{l:5}}}"));
    emit(
        buf,
        gasnett_format_memveclist_bufsz(count),
        &listing(head, items, 4),
    );
    stats
}

/// `gasnett_format_addrlist_bufsz`.
#[no_mangle]
pub extern "C" fn gasnett_format_addrlist_bufsz(count: usize) -> usize {
    200usize.saturating_add(count.saturating_mul(25))
}

/// `gasnett_format_addrlist`: `count` chunk addresses of `len` bytes each
/// as text in `buf`.
#[no_mangle]
pub extern "C" fn gasnett_format_addrlist(
    buf: *mut c_char,
    count: usize,
    list: *const *mut c_void,
    len: usize,
) -> gasnett_addrlist_stats_t {
    let list = entries(list, count);
    let lo = list.iter().map(|&p| p as usize).min().unwrap_or(0);
    let hi = list.iter().map(|&p| p as usize).max().unwrap_or(0);
    let stats = gasnett_addrlist_stats_t {
        minaddr: lo as *mut c_void,
        maxaddr: hi.wrapping_add(len.saturating_sub(1)) as *mut c_void,
    };
    let head = format!(
        "{} entries, totalsz={}, len={}, bounds=[{:p}...{:p}]",
        count,
        count.saturating_mul(len),
        len,
        stats.minaddr,
        stats.maxaddr
    );
    let items = list.iter().map(|&p| format!("{p:p}"));
    emit(
        buf,
        gasnett_format_addrlist_bufsz(count),
        &listing(head, items, 8),
    );
    stats
}

/// `gasnett_format_strides_bufsz`.
#[no_mangle]
pub extern "C" fn gasnett_format_strides_bufsz(count: usize) -> usize {
    10usize.saturating_add(count.saturating_mul(30))
}

fn strides_text(list: &[usize]) -> String {
    let items: Vec<String> = list.iter().map(|v| v.to_string()).collect();
    format!("[{}]", items.join(", "))
}

/// `gasnett_format_strides`: `count` values as "[a, b, ...]" in `buf`.
#[no_mangle]
pub extern "C" fn gasnett_format_strides(buf: *mut c_char, count: usize, list: *const usize) {
    let text = strides_text(entries(list, count));
    emit(buf, gasnett_format_strides_bufsz(count), &text);
}

/// `gasnett_format_putsgets_bufsz`.
#[no_mangle]
pub extern "C" fn gasnett_format_putsgets_bufsz(stridelevels: usize) -> usize {
    500usize.saturating_add(stridelevels.saturating_mul(150))
}

/// `gasnett_format_putsgets`: a GASNet-1 strided transfer (`count` has
/// `stridelevels + 1` entries, the first in bytes) as text in `buf`; the
/// data bytes it moves. `pstats` is GASNet's internal statistics record:
/// not written here (pass NULL).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn gasnett_format_putsgets(
    buf: *mut c_char,
    _pstats: *mut c_void,
    node: u32,
    dstaddr: *mut c_void,
    dststrides: *const usize,
    srcaddr: *mut c_void,
    srcstrides: *const usize,
    count: *const usize,
    stridelevels: usize,
) -> usize {
    let c = entries(count, stridelevels.saturating_add(1));
    let (ds, ss) = (
        entries(dststrides, stridelevels),
        entries(srcstrides, stridelevels),
    );
    let total = if c.is_empty() {
        0
    } else {
        c.iter().fold(1usize, |t, &x| t.saturating_mul(x))
    };
    // What each side spans from its first byte.
    let extent = |st: &[usize]| -> usize {
        if c.contains(&0) || c.is_empty() {
            return 0;
        }
        st.iter().zip(&c[1..]).fold(c[0], |e, (&s, &n)| {
            e.saturating_add(s.saturating_mul(n - 1))
        })
    };
    let text = format!(
        "({total} data bytes) node={node} stridelevels={stridelevels} count={}\n\
         dst: dstaddr={dstaddr:p} dststrides={} extent={}\n\
         src: srcaddr={srcaddr:p} srcstrides={} extent={}",
        strides_text(c),
        strides_text(ds),
        extent(ds),
        strides_text(ss),
        extent(ss)
    );
    emit(buf, gasnett_format_putsgets_bufsz(stridelevels), &text);
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(buf: &[c_char]) -> String {
        let end = buf.iter().position(|&b| b == 0).expect("NUL-terminated");
        buf[..end].iter().map(|&b| b as u8 as char).collect()
    }

    #[test]
    fn a_memvec_list_fits_its_bufsz_and_reports_its_span() {
        let list: Vec<gex_Memvec_t> = (0..40)
            .map(|i| gex_Memvec_t {
                gex_addr: (0x1000 + i * 64) as *mut c_void,
                gex_len: 7 + i,
            })
            .collect();
        let mut buf = vec![1 as c_char; gasnett_format_memveclist_bufsz(list.len())];
        let st = gasnett_format_memveclist(buf.as_mut_ptr(), list.len(), list.as_ptr().cast());
        assert_eq!(st.totalsz, (7..47).sum::<usize>());
        assert_eq!((st.minsz, st.maxsz), (7, 46));
        assert_eq!(st.minaddr as usize, 0x1000);
        assert_eq!(st.maxaddr as usize, 0x1000 + 39 * 64 + 46 - 1);
        let t = text(&buf);
        assert!(t.starts_with("40 entries, totalsz=1060,"), "{t}");
        assert!(t.contains("{0x1040,    8}"), "{t}");
    }

    #[test]
    fn sizes_and_bounds_past_the_address_space_wrap_as_in_c() {
        let big = 64usize;
        let list = [
            gex_Memvec_t {
                gex_addr: 0usize.wrapping_sub(16) as *mut c_void,
                gex_len: 32,
            },
            gex_Memvec_t {
                gex_addr: big as *mut c_void,
                gex_len: usize::MAX,
            },
        ];
        let mut buf = vec![0 as c_char; gasnett_format_memveclist_bufsz(2)];
        let st = gasnett_format_memveclist(buf.as_mut_ptr(), 2, list.as_ptr().cast());
        assert_eq!(st.totalsz, 31);
        assert_eq!(st.maxsz, usize::MAX);
        assert_eq!(st.maxaddr as usize, big - 2);
        let addrs = [usize::MAX as *mut c_void];
        let st = gasnett_format_addrlist(buf.as_mut_ptr(), 1, addrs.as_ptr(), 8);
        assert_eq!(st.maxaddr as usize, 6);
    }

    #[test]
    fn text_longer_than_the_buffer_is_cut_and_terminated() {
        let mut buf = [1 as c_char; 12];
        emit(buf.as_mut_ptr(), buf.len(), "0123456789abcdef");
        assert_eq!(text(&buf), "01234567...");
    }

    #[test]
    fn a_strided_description_counts_its_bytes() {
        let (ds, ss, c) = ([72usize, 360], [56usize, 336], [40usize, 4, 3]);
        let mut buf = vec![0 as c_char; gasnett_format_putsgets_bufsz(2)];
        let n = gasnett_format_putsgets(
            buf.as_mut_ptr(),
            std::ptr::null_mut(),
            1,
            std::ptr::null_mut(),
            ds.as_ptr(),
            std::ptr::null_mut(),
            ss.as_ptr(),
            c.as_ptr(),
            2,
        );
        assert_eq!(n, 480);
        let t = text(&buf);
        assert!(t.contains("count=[40, 4, 3]"), "{t}");
        assert!(t.contains("dststrides=[72, 360] extent=976"), "{t}");
    }
}
