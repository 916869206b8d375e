//! Drawing the chart: the title, each panel's plot (or its note that it
//! has nothing) and its legend column, in the colours and markers of the
//! lines.

use super::{fmt_num, fmt_size, size_ticks, Panel, FONT};
use crate::report::Report;
use crate::stats::Summary;
use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::error::Error;

/// Width of the legend column right of each panel's plot.
const LEGEND_W: u32 = 320;
/// Sideways distance between the lines of a panel at the same size.
const DODGE_PX: f64 = 6.0;

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

type Res = Result<(), Box<dyn Error>>;

/// The whole chart: title, latency panel above, bandwidth panel below.
pub(super) fn draw<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, report: &Report) -> Res
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
