//! The line format of the tagged benchmarks' programs (`mtl_pingpong`, and
//! the conduit's tagged ping-pong when it runs as a program of its own):
//!
//! ```text
//! # anything: a comment
//! lat <bytes> <one-way µs> <round trips>
//! bw <bytes> <MB/s> <messages> <window>
//! bw1 <bytes> <MB/s> <messages> <window>
//! ```
//!
//! one-way = elapsed / round trips / 2 (as `fi_pingpong`'s `usec/xfer`);
//! MB/s = 10^6 bytes per second over `messages` messages of `bytes`, sent
//! `window` at a time: for `bw` into disjoint receive buffers, for `bw1`
//! with every receive of a window into one buffer (the shape of OSU's
//! `osu_bw` and fabtests' `fi_rdm_tagged_bw`). Fields are separated by
//! white space; lines that start with none of `lat`, `bw` and `bw1`
//! (comments, a launcher's or a library's chatter) are skipped, but such a
//! line that does not parse is an error.

use serde::Serialize;

/// What a sample measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Kind {
    /// One-way latency in µs (half a blocking round trip).
    Latency,
    /// Windowed bandwidth in MB/s (10^6 B/s), the receives of a window
    /// into disjoint buffers.
    Bandwidth,
    /// Windowed bandwidth in MB/s, every receive of a window into one
    /// buffer (OSU's `osu_bw`, fabtests' `fi_rdm_tagged_bw`): the
    /// destination stays in cache as `fi_pingpong`'s does.
    BandwidthOneBuffer,
}

impl Kind {
    /// Every kind, in report order.
    pub const ALL: [Kind; 3] = [Kind::Latency, Kind::Bandwidth, Kind::BandwidthOneBuffer];

    /// The word that starts its lines.
    pub fn word(self) -> &'static str {
        match self {
            Kind::Latency => "lat",
            Kind::Bandwidth => "bw",
            Kind::BandwidthOneBuffer => "bw1",
        }
    }
}

/// One figure of one run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Sample {
    /// Latency or bandwidth.
    pub kind: Kind,
    /// Payload bytes.
    pub size: usize,
    /// µs (latency) or MB/s (bandwidth).
    pub value: f64,
    /// Round trips (latency) or messages (bandwidth) measured.
    pub count: usize,
    /// Messages in flight (bandwidth; 1 for latency).
    pub window: usize,
}

/// Parse a program's standard output.
pub fn parse(out: &str) -> Result<Vec<Sample>, String> {
    let mut v = Vec::new();
    for (n, line) in out.lines().enumerate() {
        let w: Vec<&str> = line.split_whitespace().collect();
        let Some(kind) = Kind::ALL.into_iter().find(|k| w.first() == Some(&k.word())) else {
            continue;
        };
        let want = if kind == Kind::Latency { 4 } else { 5 };
        let bad = |why: &str| format!("line {}: {why}: {line:?}", n + 1);
        if w.len() != want {
            return Err(bad(&format!("{want} fields expected")));
        }
        let int = |s: &str| s.parse::<usize>().map_err(|_| bad("not a count"));
        let value: f64 = w[2].parse().map_err(|_| bad("not a number"))?;
        if !value.is_finite() || value <= 0.0 {
            return Err(bad("not a positive figure"));
        }
        let s = Sample {
            kind,
            size: int(w[1])?,
            value,
            count: int(w[3])?,
            window: if kind == Kind::Latency { 1 } else { int(w[4])? },
        };
        if s.count == 0 || s.window == 0 {
            return Err(bad("zero count or window"));
        }
        v.push(s);
    }
    Ok(v)
}

/// The sample of `kind` and `size` (the last one, if several).
pub fn find(samples: &[Sample], kind: Kind, size: usize) -> Option<&Sample> {
    samples
        .iter()
        .rev()
        .find(|s| s.kind == kind && s.size == size)
}

/// Check that every size has a sample of every kind; the error names the
/// missing ones.
pub fn check_complete(samples: &[Sample], sizes: &[usize]) -> Result<(), String> {
    let missing: Vec<String> = sizes
        .iter()
        .flat_map(|&z| {
            Kind::ALL
                .into_iter()
                .filter(move |k| find(samples, *k, z).is_none())
                .map(move |k| format!("{} {z}", k.word()))
        })
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("no figure for {}", missing.join(", ")))
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn parses_latency_and_bandwidth_lines() {
        let out = "# mtl_pingpong: 2 ranks, Open MPI v4.1.4\n\
                   lat 8 5.6487 10000\n\
                   some launcher chatter\n\
                   lat 1048576 935.0408 64\n\
                   \n\
                   bw 8 1.134 10048 64\n\
                   bw\t1048576   1501.391 64 64\n\
                   bw1 8 1.5 10048 64\n\
                   bw1 1048576 1801.5 64 64\n";
        let s = parse(out).unwrap();
        assert_eq!(s.len(), 6);
        assert_eq!(
            s[0],
            Sample {
                kind: Kind::Latency,
                size: 8,
                value: 5.6487,
                count: 10000,
                window: 1
            }
        );
        let bw = find(&s, Kind::Bandwidth, 1 << 20).unwrap();
        assert_eq!((bw.value, bw.count, bw.window), (1501.391, 64, 64));
        let one = find(&s, Kind::BandwidthOneBuffer, 1 << 20).unwrap();
        assert_eq!((one.value, one.count, one.window), (1801.5, 64, 64));
        assert!(check_complete(&s, &[8, 1 << 20]).is_ok());
        let e = check_complete(&s, &[8, 64]).unwrap_err();
        assert_eq!(e, "no figure for lat 64, bw 64, bw1 64");
        let e = check_complete(&s[..5], &[8, 1 << 20]).unwrap_err();
        assert_eq!(e, "no figure for bw1 1048576");
        assert!(parse("").unwrap().is_empty());
    }

    #[test]
    fn rejects_malformed_figure_lines() {
        for bad in [
            "lat 8 1.0",
            "lat 8 1.0 10 3",
            "bw 8 1.0 10",
            "lat x 1.0 10",
            "lat 8 fast 10",
            "lat 8 -1.0 10",
            "lat 8 nan 10",
            "lat 8 0 10",
            "bw 8 1.0 10 0",
            "bw1 8 1.0 10",
            "bw1 8 0 10 4",
            "lat 8 1.0 0",
        ] {
            let e = parse(&format!("# ok\n{bad}\n")).unwrap_err();
            assert!(e.starts_with("line 2: "), "{bad}: {e}");
            assert!(e.contains(bad), "{bad}: {e}");
        }
        // `latency` is not `lat`: skipped like any other word.
        assert!(parse("latency 8 1.0 10\nbwx 1 2 3 4\nbw2 1 2 3 4\n")
            .unwrap()
            .is_empty());
    }
}
