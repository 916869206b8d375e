//! The plot's layout and number formatting.

use super::*;
use crate::report::{RawInfo, Report, Row};

fn row(test: &str, size: Option<usize>, unit: &str, median: f64, raw: Option<f64>) -> Row {
    let s = |m: f64| Summary {
        median: m,
        min: m * 0.9,
        max: m * 1.2,
        q1: m * 0.95,
        q3: m * 1.1,
        n: 3,
    };
    Row {
        test: test.into(),
        size,
        unit: unit.into(),
        path: None,
        ours: s(median),
        raw: raw.map(s),
        raw_what: raw.map(|_| "fi_pingpong".into()),
        ratio: raw.map(|r| median / r),
        paired_ratio: None,
        ours_reps: vec![median; 3],
        raw_reps: raw.map_or(Vec::new(), |r| vec![r; 3]),
        mtl: None,
        mtl_ratio: None,
        mtl_paired_ratio: None,
        mtl_reps: Vec::new(),
    }
}

fn report(rows: Vec<Row>) -> Report {
    Report {
        provider: "shm".into(),
        shared_memory: false,
        ranks: 2,
        iters: 500,
        reps: 3,
        max_medium: 8192,
        long_inline_threshold: 8280,
        load_start: [0.0; 3],
        load_end: [0.0; 3],
        other_cpu_pct: 0.0,
        pingpong: RawInfo {
            ran: true,
            how: "test".into(),
        },
        pingpong_start_up: Vec::new(),
        tagged: None,
        rows,
        memory: Vec::new(),
    }
}

fn synthetic() -> Report {
    let sizes = [8usize, 64, 512, 4096, 65536, 1 << 20, 4 << 20];
    let mut rows = vec![row("am_short_rtt", Some(8), "us", 1.5, Some(1.2))];
    let fabric_us = |z: usize| 0.8 + z as f64 / 2500.0;
    for (t, k) in [("put_latency", 1.3), ("get_latency", 1.1)] {
        for &z in &sizes {
            rows.push(row(t, Some(z), "us", k * fabric_us(z), Some(fabric_us(z))));
        }
    }
    let fabric_mbs = |z: usize| z as f64 / fabric_us(z) / 2.0;
    for (t, k, max) in [
        ("am_medium_flood", 3.0, 8192),
        ("am_long_flood", 2.0, usize::MAX),
        ("put_nbi_bw", 1.5, usize::MAX),
        ("get_nbi_bw", 1.2, usize::MAX),
    ] {
        for &z in sizes.iter().filter(|&&z| z <= max) {
            let raw = fabric_mbs(z);
            rows.push(row(t, Some(z), "MB/s", k * raw, Some(raw)));
        }
    }
    rows.push(row("barrier", None, "us", 0.8, None));
    report(rows)
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("gex-bench-plot-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn svg_and_png_of_a_synthetic_report() {
    let dir = tmp("both");
    let r = synthetic();
    let svg_t = Target::new(dir.join("b.svg").to_str().unwrap()).unwrap();
    let png_t = Target::new(dir.join("b.PNG").to_str().unwrap()).unwrap();
    assert_eq!((svg_t.format, png_t.format), (Format::Svg, Format::Png));
    write(&r, &svg_t).expect("SVG written");
    write(&r, &png_t).expect("PNG written");
    let svg = std::fs::read_to_string(&svg_t.path).unwrap();
    let png_bytes = std::fs::read(&png_t.path).unwrap();
    // GEX_PLOT_KEEP=1 keeps the two files, to look at.
    if std::env::var_os("GEX_PLOT_KEEP").is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    }

    assert!(svg.trim_start().starts_with("<svg"), "{}", &svg[..80]);
    assert!(svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("<polyline") || svg.contains("<path"));
    for want in [
        "put_latency",
        "am_long_flood",
        "fi_pingpong (2 x one-way)",
        "fi_pingpong bandwidth",
        "provider shm, 2 ranks",
        "barrier (no size): 0.8 µs",
        "latency (µs)",
        "4M",
    ] {
        assert!(svg.contains(want), "no {want:?} in the SVG");
    }

    let dec = png::Decoder::new(std::io::Cursor::new(png_bytes));
    let mut reader = dec.read_info().expect("PNG header decodes");
    let mut buf = vec![0; reader.output_buffer_size().expect("buffer size")];
    let info = reader.next_frame(&mut buf).expect("PNG image decodes");
    assert_eq!((info.width, info.height), SIZE);
    assert!(info.width > 0 && info.height > 0);
    // Not blank: white background, some dark ink (text, lines).
    let px = &buf[..info.buffer_size()];
    assert!(px.chunks(3).any(|p| p == [255, 255, 255]));
    assert!(px.chunks(3).filter(|p| p.iter().all(|&c| c < 100)).count() > 1000);
}

#[test]
fn empty_panels_say_so() {
    let mut r = report(vec![row("barrier", None, "us", 0.8, None)]);
    let svg = String::from_utf8(render(&r, Format::Svg).unwrap()).unwrap();
    assert!(svg.contains("no latency figures with a message size"));
    assert!(svg.contains("barrier (no size): 0.8 µs"));
    assert!(svg.contains("no bandwidth figures"));
    r.rows.clear();
    assert!(render(&r, Format::Png).is_ok());
    // One size only, no raw figures, a zero and a NaN: still a chart.
    r.rows = vec![
        row("put_latency", Some(8), "us", 2.0, None),
        row("get_latency", Some(8), "us", 0.0, None),
        row("put_nbi_bw", Some(4096), "MB/s", f64::NAN, Some(f64::NAN)),
        row("get_nbi_bw", Some(0), "MB/s", 5.0, None),
    ];
    let svg = String::from_utf8(render(&r, Format::Svg).unwrap()).unwrap();
    assert!(svg.contains("put_latency") && !svg.contains("fi_pingpong"));
    assert!(svg.contains("no bandwidth figures"));
}

#[test]
fn targets_by_extension() {
    assert_eq!(Target::new("a/b.svg").unwrap().format, Format::Svg);
    assert_eq!(Target::new("x.Png").unwrap().format, Format::Png);
    for bad in ["out.jpg", "out", "svg", "out.svg.gz"] {
        let e = Target::new(bad).unwrap_err();
        assert!(e.contains(".svg or .png"), "{e}");
    }
    assert!(Target::new("x.svg").unwrap().check_dir().is_ok());
    assert!(Target::new("/nonexistent-dir-gex/x.svg")
        .unwrap()
        .check_dir()
        .is_err());
    let r = report(Vec::new());
    let t = Target::new("/nonexistent-dir-gex/x.svg").unwrap();
    assert!(write(&r, &t).unwrap_err().contains("cannot write"));
}

#[test]
fn labels() {
    let all: Vec<f64> = (3..23).map(|e| 2f64.powi(e)).collect();
    let t = size_ticks(&all, 4.0, 8e6, 780.0);
    assert!(t.len() < all.len() && t.len() >= 8 && t[0] == 8.0, "{t:?}");
    let t = size_ticks(&[8.0, 4096.0, 65536.0], 4.0, 1e5, 780.0);
    assert_eq!(t, vec![8.0, 4096.0, 65536.0]);
    assert_eq!(fmt_size(8.0), "8");
    assert_eq!(fmt_size(4096.0), "4k");
    assert_eq!(fmt_size(6144.0), "6k");
    assert_eq!(fmt_size(4194304.0), "4M");
    assert_eq!(fmt_size(1000.0), "1000");
    assert_eq!(fmt_num(1000.0), "1000");
    assert_eq!(fmt_num(0.5), "0.5");
    assert_eq!(fmt_num(2.0), "2");
    assert_eq!(fmt_num(1.2345), "1.23");
    assert_eq!(fmt_num(12345.6), "12346");
}
