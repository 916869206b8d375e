//! `gasnet_tools.h`: timers and small utilities (the atomics are inline in
//! the header).

use std::ffi::{c_char, c_int, CStr, CString};
use std::sync::OnceLock;
use std::time::Instant;

fn epoch() -> Instant {
    static E: OnceLock<Instant> = OnceLock::new();
    *E.get_or_init(Instant::now)
}

/// `gasnett_ticks_now`: nanoseconds of a monotonic clock (one tick = 1 ns).
#[no_mangle]
pub extern "C" fn gasnett_ticks_now() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

/// `gasnett_ticks_to_ns`.
#[no_mangle]
pub extern "C" fn gasnett_ticks_to_ns(t: u64) -> u64 {
    t
}

/// `gasnett_ticks_to_us`.
#[no_mangle]
pub extern "C" fn gasnett_ticks_to_us(t: u64) -> u64 {
    t / 1000
}

/// `gasnett_tick_granularityus`: the smallest non-zero difference of two
/// readings, in microseconds (measured once).
#[no_mangle]
pub extern "C" fn gasnett_tick_granularityus() -> f64 {
    static G: OnceLock<f64> = OnceLock::new();
    *G.get_or_init(|| {
        let mut best = u64::MAX;
        for _ in 0..100 {
            let a = gasnett_ticks_now();
            let mut b = gasnett_ticks_now();
            while b == a {
                b = gasnett_ticks_now();
            }
            best = best.min(b - a);
        }
        best as f64 / 1000.0
    })
}

/// `gasnett_tick_overheadus`: the cost of one reading, in microseconds
/// (measured once).
#[no_mangle]
pub extern "C" fn gasnett_tick_overheadus() -> f64 {
    static O: OnceLock<f64> = OnceLock::new();
    *O.get_or_init(|| {
        const N: u64 = 10_000;
        let a = gasnett_ticks_now();
        for _ in 0..N {
            std::hint::black_box(gasnett_ticks_now());
        }
        (gasnett_ticks_now() - a) as f64 / N as f64 / 1000.0
    })
}

/// `gasnett_checksum`: a 64-bit FNV-1a hash of the bytes.
#[no_mangle]
pub extern "C" fn gasnett_checksum(p: *const std::ffi::c_void, numbytes: c_int) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    if p.is_null() || numbytes <= 0 {
        return h;
    }
    // SAFETY: the caller passes numbytes readable bytes at p.
    let b = unsafe { std::slice::from_raw_parts(p as *const u8, numbytes as usize) };
    for &x in b {
        h ^= u64::from(x);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// `gasnett_cpu_count`.
#[no_mangle]
pub extern "C" fn gasnett_cpu_count() -> c_int {
    std::thread::available_parallelism().map_or(1, |n| n.get() as c_int)
}

/// A variable's value, `None` when unset or empty (the conduit's rule:
/// an empty variable counts as unset).
fn set_value(key: &str) -> Option<String> {
    std::env::var(key).ok().filter(|v| !v.trim().is_empty())
}

/// `GASNET_VERBOSEENV` set to a true value (`gex_env::parse_bool`'s words:
/// `no`, `false`, `off` and `0` are off, as for the conduit).
fn verbose() -> bool {
    set_value("GASNET_VERBOSEENV").is_some_and(|v| gex_env::parse_bool(&v) == Some(true))
}

/// `gasnett_getenv_yesno_withdefault`: Y/YES/1/TRUE/ON (any case) is 1,
/// N/NO/0/FALSE/OFF is 0, unset or empty is the default; anything else is
/// a fatal error naming the variable.
#[no_mangle]
pub extern "C" fn gasnett_getenv_yesno_withdefault(key: *const c_char, default: c_int) -> c_int {
    if key.is_null() {
        crate::state::fatal("gasnett_getenv_yesno_withdefault", "keyname is NULL")
    }
    // SAFETY: keyname is a NUL-terminated string.
    let k = unsafe { CStr::from_ptr(key) }
        .to_string_lossy()
        .into_owned();
    let v = set_value(&k);
    let r = match v.as_deref().map(gex_env::parse_bool) {
        None => default,
        Some(Some(b)) => c_int::from(b),
        Some(None) => crate::state::fatal(
            "gasnett_getenv_yesno_withdefault",
            &format!(
                "{k}={}: accepted are Y, YES, 1, TRUE, ON, N, NO, 0, FALSE, OFF",
                v.unwrap_or_default()
            ),
        ),
    };
    if verbose() {
        eprintln!(
            "ENV parameter: {k} = {} {}",
            if r != 0 { "YES" } else { "NO" },
            if v.is_none() { "  (default)" } else { "" }
        );
    }
    r
}

/// `gasnett_gethostname`.
#[no_mangle]
pub extern "C" fn gasnett_gethostname() -> *const c_char {
    static H: OnceLock<CString> = OnceLock::new();
    H.get_or_init(|| {
        let mut buf = [0u8; 256];
        // SAFETY: gethostname writes at most buf.len() bytes into buf.
        let r = unsafe { libc::gethostname(buf.as_mut_ptr() as *mut c_char, buf.len()) };
        let n = if r == 0 {
            buf.iter().position(|&b| b == 0).unwrap_or(buf.len())
        } else {
            0
        };
        CString::new(&buf[..n]).unwrap_or_default()
    })
    .as_ptr()
}

/// `gasnett_nsleep`.
#[no_mangle]
pub extern "C" fn gasnett_nsleep(ns: u64) {
    std::thread::sleep(std::time::Duration::from_nanos(ns));
}

/// `gasnett_sched_yield`.
#[no_mangle]
pub extern "C" fn gasnett_sched_yield() -> c_int {
    std::thread::yield_now();
    0
}

/// `gasnett_killmyprocess`: end this process now with `exitcode`, output
/// flushed, without the job's exit protocol (the launcher ends the others).
#[no_mangle]
pub extern "C" fn gasnett_killmyprocess(exitcode: c_int) -> ! {
    // SAFETY: fflush(NULL) flushes every stream; _exit has no
    // preconditions.
    unsafe {
        libc::fflush(std::ptr::null_mut());
        libc::_exit(exitcode)
    }
}

/// `gasnett_fatalerror`: print `*** FATAL ERROR: msg` and abort.
#[no_mangle]
pub extern "C" fn gasnett_fatalerror(msg: *const c_char) -> ! {
    let m = if msg.is_null() {
        std::borrow::Cow::Borrowed("(null)")
    } else {
        // SAFETY: a non-NULL msg is a NUL-terminated string (GASNet).
        unsafe { CStr::from_ptr(msg) }.to_string_lossy()
    };
    eprintln!("*** FATAL ERROR: {m}");
    // SAFETY: fflush(NULL) flushes every stream.
    unsafe { libc::fflush(std::ptr::null_mut()) };
    std::process::abort()
}

/// `gasnett_print_backtrace`: this library prints no backtraces; 1 (not
/// printed).
#[no_mangle]
pub extern "C" fn gasnett_print_backtrace(_fd: c_int) -> c_int {
    1
}

/// `gasnett_reghandler`: `signal(2)` (handlers as addresses, so
/// `SIG_IGN` and `SIG_DFL` pass through).
#[no_mangle]
pub extern "C" fn gasnett_reghandler(
    sigtocatch: c_int,
    handler: libc::sighandler_t,
) -> libc::sighandler_t {
    // SAFETY: installs the handler the caller gives, as signal(2) does
    // for it.
    unsafe { libc::signal(sigtocatch, handler) }
}

/// `gasnett_verboseenv`: whether GASNET_VERBOSEENV asks for reports.
#[no_mangle]
pub extern "C" fn gasnett_verboseenv() -> c_int {
    c_int::from(verbose())
}

/// `gasnett_performance_warning_str`: "" (a release build: no debugging,
/// tracing or statistics that would slow it).
#[no_mangle]
pub extern "C" fn gasnett_performance_warning_str() -> *const c_char {
    c"".as_ptr()
}

/// Parse `s` as GASNet does: decimal or 0x hexadecimal, optionally
/// followed by a K, M, G or T suffix (powers of 1024) when
/// `mem_size_multiplier` is non-zero; unsuffixed memory sizes are
/// multiplied by it.
pub fn parse_int(s: &str, mem_size_multiplier: u64) -> Result<i64, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some(c @ ('K' | 'M' | 'G' | 'T')) if mem_size_multiplier != 0 => {
            let m = match c {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => 1 << 40,
            };
            (&t[..t.len() - 1], m)
        }
        _ => (t, mem_size_multiplier.max(1)),
    };
    let num = num.trim();
    let (neg, digits) = match num.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, num),
    };
    let v = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i64::from_str_radix(h, 16)
    } else {
        digits.parse::<i64>()
    }
    .map_err(|_| {
        format!(
            "\"{s}\" is not an integer (decimal or 0x hex{})",
            if mem_size_multiplier != 0 {
                ", optionally with a K, M, G or T suffix"
            } else {
                ""
            }
        )
    })?;
    let v = v
        .checked_mul(mult as i64)
        .ok_or_else(|| format!("\"{s}\" is too large"))?;
    Ok(if neg { -v } else { v })
}

/// `gasnett_parse_int`; an unparsable string is a fatal error naming it.
#[no_mangle]
pub extern "C" fn gasnett_parse_int(s: *const c_char, mem_size_multiplier: u64) -> i64 {
    if s.is_null() {
        crate::state::fatal("gasnett_parse_int", "str is NULL")
    }
    // SAFETY: str is a NUL-terminated string.
    let t = unsafe { CStr::from_ptr(s) }.to_string_lossy();
    match parse_int(&t, mem_size_multiplier) {
        Ok(v) => v,
        Err(e) => crate::state::fatal("gasnett_parse_int", &e),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_int;

    #[test]
    fn parses_as_gasnet_does() {
        assert_eq!(parse_int("42", 0), Ok(42));
        assert_eq!(parse_int("0x10", 0), Ok(16));
        assert_eq!(parse_int("-7", 0), Ok(-7));
        assert_eq!(parse_int("4K", 1), Ok(4096));
        assert_eq!(parse_int("2m", 1), Ok(2 << 20));
        assert_eq!(parse_int("3", 1 << 20), Ok(3 << 20));
        assert_eq!(parse_int("1G", 1), Ok(1 << 30));
        assert!(parse_int("4K", 0)
            .unwrap_err()
            .contains("\"4K\" is not an integer"));
        assert!(parse_int("abc", 1).is_err());
    }
}
