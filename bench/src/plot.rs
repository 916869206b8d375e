//! `--plot FILE`: the report's figures as a chart, SVG or PNG by the file's
//! extension.
//!
//! Two panels, one above the other: latency (µs, log scale) and bandwidth
//! (MB/s, log scale), both against the message size (bytes, log2 scale).
//! Every test with a size is one line through the medians of its
//! repetitions, with a min .. max bar at each size; the raw fabric's figure
//! (`fi_pingpong`, where it ran) is a dashed black line. The lines of a
//! panel are nudged a few pixels apart sideways so that the bars of one
//! size stay apart. Rows without a size (the barrier) are named in the
//! latency panel's legend. Each legend has its own column right of its
//! plot, so it never covers data; a panel without figures says so.
//!
//! Text is drawn with DejaVu Sans compiled in from `bench/assets/` (no
//! system fonts or fontconfig needed); the bitmap is encoded with `png`.

mod chart;

use crate::report::{Report, Row};
use crate::stats::Summary;
use chart::draw;
use plotters::prelude::*;
use std::error::Error;
use std::path::{Path, PathBuf};

/// The chart's size in pixels (the SVG's too).
const SIZE: (u32, u32) = (1200, 1000);

/// The family the embedded font is registered as.
const FONT: &str = "sans-serif";
/// DejaVu Sans, cut down to the characters a chart needs (see
/// `bench/assets/README.md`).
static FONT_DATA: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");

/// An image format `--plot` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics (`.svg`).
    Svg,
    /// Portable network graphics (`.png`).
    Png,
}

/// Where `--plot` writes, and in which format.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The file.
    pub path: PathBuf,
    /// Its format, from its extension.
    pub format: Format,
}

impl Format {
    /// The format a file name's extension asks for (`.svg` or `.png`, any
    /// case); the error says why not.
    pub fn of(path: &str) -> Result<Format, String> {
        let ext = Path::new(path)
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("svg") => Ok(Format::Svg),
            Some("png") => Ok(Format::Png),
            _ => Err(
                "the file name must end in .svg or .png (its extension picks the format)".into(),
            ),
        }
    }
}

impl Target {
    /// The target for `path`, in the format its extension picks (the
    /// error says why there is none; clap adds the option and the value).
    pub fn new(path: &str) -> Result<Target, String> {
        Ok(Target {
            path: PathBuf::from(path),
            format: Format::of(path)?,
        })
    }

    /// Whether the file's directory exists, so that a long run does not
    /// end unable to write its chart.
    pub fn check_dir(&self) -> Result<(), String> {
        match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() && !d.is_dir() => Err(format!(
                "--plot {}: directory {} does not exist",
                self.path.display(),
                d.display()
            )),
            _ => Ok(()),
        }
    }
}

/// Render `report` in the target's format and write it to the target's
/// file.
pub fn write(report: &Report, target: &Target) -> Result<(), String> {
    let bytes = render(report, target.format)?;
    std::fs::write(&target.path, bytes)
        .map_err(|e| format!("cannot write {}: {e}", target.path.display()))
}

/// The chart of `report` as the bytes of an SVG or PNG file.
pub fn render(report: &Report, format: Format) -> Result<Vec<u8>, String> {
    register_font()?;
    let fail = |e: Box<dyn Error>| format!("cannot draw the chart: {e}");
    match format {
        Format::Svg => {
            let mut svg = String::new();
            {
                let root = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
                draw(&root, report).map_err(fail)?;
                root.present().map_err(|e| fail(e.into()))?;
            }
            Ok(svg.into_bytes())
        }
        Format::Png => {
            let mut rgb = vec![0u8; SIZE.0 as usize * SIZE.1 as usize * 3];
            {
                let root = BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area();
                draw(&root, report).map_err(fail)?;
                root.present().map_err(|e| fail(e.into()))?;
            }
            encode_png(&rgb, SIZE).map_err(|e| format!("cannot encode the PNG: {e}"))
        }
    }
}

/// Make the embedded font plotters' `sans-serif` (once per process).
fn register_font() -> Result<(), String> {
    static DONE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let ok = *DONE
        .get_or_init(|| plotters::style::register_font(FONT, FontStyle::Normal, FONT_DATA).is_ok());
    if ok {
        Ok(())
    } else {
        Err("the embedded chart font does not load".into())
    }
}

/// An 8-bit RGB image as a PNG file.
fn encode_png(rgb: &[u8], (w, h): (u32, u32)) -> Result<Vec<u8>, png::EncodingError> {
    let mut out = Vec::new();
    let mut enc = png::Encoder::new(&mut out, w, h);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header()?;
    w.write_image_data(rgb)?;
    w.finish()?;
    Ok(out)
}

/// One test's figures by size, smallest first.
struct Line<'a> {
    test: &'a str,
    points: Vec<(f64, Summary)>,
}

/// What one panel shows.
struct Panel<'a> {
    caption: &'static str,
    y_desc: &'static str,
    /// Said when there is nothing to draw.
    empty: &'static str,
    raw_label: &'static str,
    lines: Vec<Line<'a>>,
    /// The raw fabric's median by size (the median of the rows' when
    /// several rows carry one for the same size).
    raw: Vec<(f64, f64)>,
    /// Legend lines about figures without a size.
    notes: Vec<String>,
}

/// Whether a value can stand on a log scale.
fn usable(v: f64) -> bool {
    v.is_finite() && v > 0.0
}

impl<'a> Panel<'a> {
    /// The panel of the rows in `unit` that have a (positive) size.
    fn of(rows: &'a [Row], unit: &str) -> Panel<'a> {
        let (caption, y_desc, empty, raw_label) = if unit == "us" {
            (
                "Latency (lower is better)",
                "latency (µs)",
                "no latency figures with a message size in this report",
                "fi_pingpong (2 x one-way)",
            )
        } else {
            (
                "Bandwidth (higher is better)",
                "bandwidth (MB/s, 10^6 B/s)",
                "no bandwidth figures in this report",
                "fi_pingpong bandwidth (1 in flight)",
            )
        };
        let mut lines: Vec<Line<'a>> = Vec::new();
        let mut raw_by_size: Vec<(usize, Vec<f64>)> = Vec::new();
        let mut notes = Vec::new();
        for r in rows.iter().filter(|r| r.unit == unit) {
            let Some(size) = r.size.filter(|&s| s > 0) else {
                if r.size.is_none() && usable(r.ours.median) {
                    notes.push(format!(
                        "{} (no size): {} {}",
                        r.test,
                        fmt_num(r.ours.median),
                        if unit == "us" { "µs" } else { unit }
                    ));
                }
                continue;
            };
            if usable(r.ours.median) {
                let i = match lines.iter().position(|l| l.test == r.test) {
                    Some(i) => i,
                    None => {
                        lines.push(Line {
                            test: &r.test,
                            points: Vec::new(),
                        });
                        lines.len() - 1
                    }
                };
                lines[i].points.push((size as f64, r.ours));
            }
            // The tagged rows' raw figure is fi_pingpong's one-way latency,
            // drawn as its own line (`fi_pingpong_lat`), not the dashed
            // round trip of the others.
            if let Some(raw) = r.raw.filter(|x| {
                usable(x.median) && !r.test.starts_with("tagged_") && !r.test.starts_with("mtl_")
            }) {
                match raw_by_size.iter_mut().find(|(s, _)| *s == size) {
                    Some((_, v)) => v.push(raw.median),
                    None => raw_by_size.push((size, vec![raw.median])),
                }
            }
        }
        for l in &mut lines {
            l.points.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        raw_by_size.sort_by_key(|(s, _)| *s);
        let raw = raw_by_size
            .into_iter()
            .filter_map(|(s, v)| Summary::of(&v).map(|m| (s as f64, m.median)))
            .collect();
        Panel {
            caption,
            y_desc,
            empty,
            raw_label,
            lines,
            raw,
            notes,
        }
    }

    /// Every size with a figure, smallest first.
    fn sizes(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .collect();
        v.extend(self.raw.iter().map(|p| p.0));
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    }

    /// The x and y ranges that hold every point and bar, with a margin.
    fn ranges(&self) -> Option<((f64, f64), (f64, f64))> {
        let mut x = (f64::INFINITY, f64::NEG_INFINITY);
        let mut y = (f64::INFINITY, f64::NEG_INFINITY);
        let mut take = |px: f64, ys: &[f64]| {
            x = (x.0.min(px), x.1.max(px));
            for &v in ys.iter().filter(|v| usable(**v)) {
                y = (y.0.min(v), y.1.max(v));
            }
        };
        for l in &self.lines {
            for (px, s) in &l.points {
                take(*px, &[s.min, s.median, s.max]);
            }
        }
        for (px, v) in &self.raw {
            take(*px, &[*v]);
        }
        (x.0 <= x.1 && y.0 <= y.1).then(|| ((x.0 / 1.6, x.1 * 1.6), (y.0 / 1.6, y.1 * 1.6)))
    }
}

/// The sizes to label on an axis from `x0` to `x1` that is `px` pixels
/// wide: the measured sizes, skipping any closer than about 48 pixels to
/// the last one kept.
fn size_ticks(sizes: &[f64], x0: f64, x1: f64, px: f64) -> Vec<f64> {
    let min_gap = (x1 / x0).log2() * 48.0 / px;
    let mut ticks: Vec<f64> = Vec::new();
    for &s in sizes {
        if ticks.last().is_none_or(|&t| (s / t).log2() >= min_gap) {
            ticks.push(s);
        }
    }
    ticks
}

/// `4096` -> `4k`, `1048576` -> `1M`: the sizes `--sizes` takes.
fn fmt_size(v: f64) -> String {
    let b = v.round() as u64;
    for (unit, suffix) in [(1u64 << 30, "G"), (1 << 20, "M"), (1 << 10, "k")] {
        if b >= unit && b % unit == 0 {
            return format!("{}{suffix}", b / unit);
        }
    }
    b.to_string()
}

/// Three significant digits, no trailing zeros.
fn fmt_num(v: f64) -> String {
    if !v.is_finite() || v == 0.0 {
        return format!("{v}");
    }
    let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod test;
