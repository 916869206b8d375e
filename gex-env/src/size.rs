//! Sizes with binary suffixes, as GASNet accepts them: `4096`, `64K`, `64KB`,
//! `1M`, `1.5G`, `2T` (case-insensitive; K = 1024).

/// Parse a size. The result must be a whole number of bytes and fit in `u64`.
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    if t.is_empty() {
        return Err("empty".into());
    }
    let lower = t.to_ascii_lowercase();
    let body = lower.strip_suffix('b').unwrap_or(&lower);
    let (num, mult): (&str, u64) = match body.chars().last() {
        Some('k') => (&body[..body.len() - 1], 1 << 10),
        Some('m') => (&body[..body.len() - 1], 1 << 20),
        Some('g') => (&body[..body.len() - 1], 1 << 30),
        Some('t') => (&body[..body.len() - 1], 1 << 40),
        _ => (body, 1),
    };
    let num = num.trim();
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return Err(format!("{s:?} is not a number"));
    }
    if num.contains('.') {
        let f: f64 = num
            .parse()
            .map_err(|_| format!("{num:?} is not a number"))?;
        let bytes = f * mult as f64;
        if bytes.fract() != 0.0 {
            return Err(format!(
                "{} is not a whole number of bytes",
                s.escape_debug()
            ));
        }
        if bytes >= u64::MAX as f64 {
            return Err(format!("{} is too large", s.escape_debug()));
        }
        Ok(bytes as u64)
    } else {
        let n: u64 = num
            .parse()
            .map_err(|_| format!("{} is too large", s.escape_debug()))?;
        n.checked_mul(mult)
            .ok_or_else(|| format!("{} is too large", s.escape_debug()))
    }
}

/// Format a byte count the short way (`64K`, `1M`, `1536`).
pub fn format_size(n: u64) -> String {
    for (suffix, shift) in [("T", 40), ("G", 30), ("M", 20), ("K", 10)] {
        let unit = 1u64 << shift;
        if n >= unit && n & (unit - 1) == 0 {
            return format!("{}{}", n / unit, suffix);
        }
    }
    n.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suffixes() {
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("64K"), Ok(65536));
        assert_eq!(parse_size("64kb"), Ok(65536));
        assert_eq!(parse_size("1M"), Ok(1 << 20));
        assert_eq!(parse_size("1.5M"), Ok(3 << 19));
        assert_eq!(parse_size("2g"), Ok(2 << 30));
        assert_eq!(parse_size(" 3T "), Ok(3 << 40));
    }

    #[test]
    fn rejects() {
        assert!(parse_size("").is_err());
        assert!(parse_size("K").is_err());
        assert!(parse_size("-1").is_err());
        assert!(parse_size("1.3").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("20000000T").is_err());
        assert!(parse_size("1x").is_err());
    }

    #[test]
    fn format_round_trips() {
        for n in [1u64, 4096, 65536, 1 << 20, 3 << 30, 1536] {
            assert_eq!(parse_size(&format_size(n)), Ok(n));
        }
        assert_eq!(format_size(65536), "64K");
    }
}
