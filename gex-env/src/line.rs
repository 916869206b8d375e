//! Messages to stderr written whole: `eprintln!` writes each piece of its
//! format (literal text, each argument, the newline) with a `write` of its
//! own, so the lines of ranks that share the launcher's stderr interleave
//! mid-line. [`eprintln_whole!`](crate::eprintln_whole) formats the line
//! first and writes it with one `write_all` (one `write` for a line that
//! fits a pipe's atomic size).

/// Write `line` and a newline to stderr in one `write_all` (errors are
/// ignored, as `eprintln!` would panic on them).
#[doc(hidden)]
pub fn write_stderr_line(mut line: String) {
    line.push('\n');
    let _ = std::io::Write::write_all(&mut std::io::stderr().lock(), line.as_bytes());
}

/// `eprintln!` whose line reaches stderr in one write (see the module
/// `line`): `gex_env::eprintln_whole!("rank {r}: {e}")`.
#[macro_export]
macro_rules! eprintln_whole {
    () => {
        $crate::line::write_stderr_line(::std::string::String::new())
    };
    ($($arg:tt)*) => {
        $crate::line::write_stderr_line(::std::format!($($arg)*))
    };
}

/// Write `text` to stdout and flush it, for a program's results: unlike
/// `print!`, which panics when stdout is closed or full (`prog | head`,
/// `prog > /dev/full`), the failure comes back to the caller, which can
/// end the program with a message. A closed pipe is
/// [`std::io::ErrorKind::BrokenPipe`]: the reader wanted no more, which
/// callers usually treat as success.
pub fn write_stdout(text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_like_eprintln() {
        // Compiles with and without arguments; the output goes to the
        // test's stderr.
        crate::eprintln_whole!();
        let x = 3;
        crate::eprintln_whole!("x = {x}, {}", x + 1);
    }
}
