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

use crate::report::{Report, Row};
use crate::stats::Summary;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::error::Error;
use std::path::{Path, PathBuf};

/// The chart's size in pixels (the SVG's too).
const SIZE: (u32, u32) = (1200, 1000);
/// Width of the legend column right of each panel's plot.
const LEGEND_W: u32 = 320;
/// Sideways distance between the lines of a panel at the same size.
const DODGE_PX: f64 = 6.0;
/// The family the embedded font is registered as.
const FONT: &str = "sans-serif";
/// DejaVu Sans, cut down to the characters a chart needs (see
/// `bench/assets/README.md`).
static FONT_DATA: &[u8] = include_bytes!("../assets/DejaVuSans-subset.ttf");

/// Line colours of our tests, in report order (Okabe–Ito, distinguishable
/// with the common colour-vision deficiencies).
const COLOURS: [RGBColor; 6] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
];
/// The raw fabric's line.
const RAW: RGBColor = RGBColor(0, 0, 0);
const GREY: RGBColor = RGBColor(90, 90, 90);

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

/// The marker of our `i`-th line: a filled circle, triangle or square,
/// then the same hollow (lines that coincide stay told apart).
fn marker<'a, DB: DrawingBackend + 'a, C: Clone + 'a>(
    i: usize,
    at: C,
    c: RGBColor,
) -> DynElement<'a, DB, C> {
    let style = if (i / 3) % 2 == 0 {
        c.filled()
    } else {
        c.stroke_width(2)
    };
    let e = EmptyElement::at(at);
    match i % 3 {
        0 => (e + Circle::new((0, 0), 4, style)).into_dyn(),
        1 => (e + TriangleMarker::new((0, 0), 6, style)).into_dyn(),
        _ => (e + Rectangle::new([(-4, -4), (4, 4)], style)).into_dyn(),
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

type Res = Result<(), Box<dyn Error>>;

/// The whole chart: title, latency panel above, bandwidth panel below.
fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, report: &Report) -> Res
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE)?;
    let title = format!(
        "gex-bench: provider {}, {} ranks (median of {} reps, {} iters)",
        report.provider, report.ranks, report.reps, report.iters
    );
    let body = root.margin(8, 0, 0, 0).titled(&title, (FONT, 24))?;
    let (_, h) = body.dim_in_pixel();
    let (top, bottom) = body.split_vertically(h / 2);
    draw_panel(&top, &Panel::of(&report.rows, "us"))?;
    draw_panel(&bottom, &Panel::of(&report.rows, "MB/s"))?;
    Ok(())
}

/// One panel: its plot (or a note that it has nothing), then its legend.
fn draw_panel<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel) -> Res
where
    DB::ErrorType: 'static,
{
    let (w, h) = area.dim_in_pixel();
    let (plot_area, legend) = area.split_horizontally(w.saturating_sub(LEGEND_W));
    let Some(((x0, x1), (y0, y1))) = p.ranges() else {
        let plot_area = plot_area.titled(p.caption, (FONT, 20))?;
        let (pw, ph) = plot_area.dim_in_pixel();
        plot_area.draw(&Rectangle::new(
            [(70, 10), (pw as i32 - 20, ph as i32 - 50)],
            GREY.stroke_width(1),
        ))?;
        let style = TextStyle::from((FONT, 18).into_font())
            .color(&GREY)
            .pos(Pos::new(HPos::Center, VPos::Center));
        plot_area.draw_text(p.empty, &style, (pw as i32 / 2 + 25, ph as i32 / 2 - 20))?;
        return draw_legend(&legend, p, h);
    };
    // Size ticks at the measured sizes (thinned out where they would
    // crowd), light lines at every power of two.
    let plot_px = f64::from(plot_area.dim_in_pixel().0.saturating_sub(100).max(100));
    let x_axis = (x0..x1)
        .log_scale()
        .base(2.0)
        .with_key_points(size_ticks(&p.sizes(), x0, x1, plot_px))
        .with_light_points(
            (0..64)
                .map(|e| 2f64.powi(e))
                .filter(|v| (x0..=x1).contains(v)),
        );
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(p.caption, (FONT, 20))
        .margin(10)
        .margin_right(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x_axis, (y0..y1).log_scale())?;
    chart
        .configure_mesh()
        .x_desc("message size (bytes)")
        .y_desc(p.y_desc)
        .x_labels(12)
        .y_labels(12)
        .x_label_formatter(&|v| fmt_size(*v))
        .y_label_formatter(&|v| fmt_num(*v))
        .label_style((FONT, 14))
        .axis_desc_style((FONT, 16))
        .bold_line_style(RGBColor(225, 225, 225))
        .light_line_style(RGBColor(245, 245, 245))
        .draw()?;

    // Lines sit DODGE_PX apart sideways, so that the bars of one size do
    // not cover each other (the raw line stays on the true size).
    let px_per_octave = f64::from(chart.plotting_area().dim_in_pixel().0) / (x1 / x0).log2();
    let n = p.lines.len() as f64;
    for (i, l) in p.lines.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        let shift = 2f64.powf((i as f64 - (n - 1.0) / 2.0) * DODGE_PX / px_per_octave);
        let pts: Vec<(f64, Summary)> = l.points.iter().map(|(x, s)| (x * shift, *s)).collect();
        chart.draw_series(pts.iter().map(|(x, s)| {
            ErrorBar::new_vertical(*x, s.min, s.median, s.max, c.stroke_width(1), 8)
        }))?;
        chart.draw_series(LineSeries::new(
            pts.iter().map(|(x, s)| (*x, s.median)),
            c.stroke_width(2),
        ))?;
        for (x, s) in &pts {
            chart.plotting_area().draw(&marker(i, (*x, s.median), c))?;
        }
    }
    if !p.raw.is_empty() {
        chart.draw_series(DashedLineSeries::new(
            p.raw.iter().copied(),
            8,
            5,
            RAW.stroke_width(2),
        ))?;
        chart.draw_series(
            p.raw
                .iter()
                .map(|&(x, y)| Cross::new((x, y), 5, RAW.stroke_width(2))),
        )?;
    }
    draw_legend(&legend, p, h)
}

/// The legend column: a sample and a name per line, then notes.
fn draw_legend<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, p: &Panel, h: u32) -> Res
where
    DB::ErrorType: 'static,
{
    let text = TextStyle::from((FONT, 15).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    let note = TextStyle::from((FONT, 14).into_font())
        .color(&GREY)
        .pos(Pos::new(HPos::Left, VPos::Center));
    let step = 24;
    // Level with the top of the plot (below the caption).
    let mut y = 50;
    for (i, l) in p.lines.iter().enumerate() {
        let c = COLOURS[i % COLOURS.len()];
        area.draw(&PathElement::new([(8, y), (44, y)], c.stroke_width(2)))?;
        area.draw(&marker(i, (26, y), c))?;
        area.draw_text(l.test, &text, (54, y))?;
        y += step;
    }
    if !p.raw.is_empty() {
        area.draw(&DashedPathElement::new(
            [(8, y), (44, y)],
            8,
            5,
            RAW.stroke_width(2),
        ))?;
        area.draw(&Cross::new((26, y), 5, RAW.stroke_width(2)))?;
        area.draw_text(p.raw_label, &text, (54, y))?;
        y += step;
    }
    if !p.lines.is_empty() {
        y += step / 2;
        for n in [
            "points: median of the reps",
            "bars: min .. max of the reps",
            "lines are nudged a few pixels sideways",
            "so that bars of one size stay apart",
        ] {
            area.draw_text(n, &note, (8, y))?;
            y += step - 4;
        }
    }
    for n in &p.notes {
        if y + step > h as i32 {
            break;
        }
        area.draw_text(n, &note, (8, y))?;
        y += step - 4;
    }
    Ok(())
}

#[cfg(test)]
mod test;
