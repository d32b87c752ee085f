//! The load chart: server calls per second over time, one line per policy,
//! the outage shaded and the capacity drawn (SVG, with `plotters`).

use super::report::fmt_secs;
use super::scenario::Scenario;
use super::stats::Summary;
use crate::error::CliError;
use plotters::prelude::*;
use retrycore::duration::human;
use std::path::Path;

/// Distinct line colours (Tableau 10).
const COLORS: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0xba, 0xb0, 0xac),
];

fn err(path: &Path, e: impl std::fmt::Display) -> CliError {
    CliError::output(format!("cannot write chart {}: {e}", path.display()))
}

/// Writes the chart to `path`.
pub fn write_svg(path: &Path, scn: &Scenario, summaries: &[Summary]) -> Result<(), CliError> {
    let step_s = scn.step as f64 / 1e9;
    let x_max = scn.duration as f64 / 1e9;
    let visible = (scn.duration / scn.step) as usize;
    let series: Vec<Vec<(f64, f64)>> = summaries
        .iter()
        .map(|s| {
            s.run
                .calls
                .iter()
                .take(visible)
                .enumerate()
                .map(|(i, &c)| (i as f64 * step_s, f64::from(c) / step_s))
                .collect()
        })
        .collect();
    let peak = series.iter().flatten().map(|p| p.1).fold(scn.capacity, f64::max);
    // A log scale keeps a 64× storm and a calm line readable on one chart.
    let y_min = 10f64.powf((scn.capacity / 50.0).max(1.0).log10().floor());
    let y_max = 10f64.powf((peak * 1.5).log10().ceil());

    let root = SVGBackend::new(path, (1200, 720)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(path, e))?;
    let title = match scn.outage {
        Some(o) => format!(
            "Load on the server: {} clients, capacity {}/s, down {}–{} ({})",
            scn.clients,
            scn.capacity.round(),
            fmt_secs(o.start),
            fmt_secs(o.end),
            o.mode.name()
        ),
        None => format!("Load on the server: {} clients, capacity {}/s", scn.clients, scn.capacity.round()),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(80)
        .build_cartesian_2d(0f64..x_max, (y_min..y_max).log_scale())
        .map_err(|e| err(path, e))?;
    chart
        .configure_mesh()
        .x_desc("time (s)")
        .y_desc(format!("server calls per second ({} steps, log scale)", human(scn.step)))
        .x_labels(13)
        .y_label_formatter(&|y| {
            if *y >= 1000.0 {
                format!("{}k", (*y / 1000.0).round())
            } else {
                format!("{}", y.round())
            }
        })
        .light_line_style(RGBColor(0xee, 0xee, 0xee))
        .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
        .label_style(("sans-serif", 14))
        .axis_desc_style(("sans-serif", 15))
        .draw()
        .map_err(|e| err(path, e))?;
    if let Some(o) = scn.outage {
        let (a, b) = (o.start as f64 / 1e9, (o.end as f64 / 1e9).min(x_max));
        chart
            .draw_series(std::iter::once(Rectangle::new([(a, y_min), (b, y_max)], RGBColor(0xfb, 0xe3, 0xe3).filled())))
            .map_err(|e| err(path, e))?
            .label(format!("server down ({})", o.mode.name()))
            .legend(|(x, y)| Rectangle::new([(x, y - 6), (x + 18, y + 6)], RGBColor(0xfb, 0xe3, 0xe3).filled()));
    }
    chart
        .draw_series(DashedLineSeries::new(
            vec![(0.0, scn.capacity), (x_max, scn.capacity)],
            6,
            4,
            BLACK.stroke_width(1),
        ))
        .map_err(|e| err(path, e))?
        .label(format!("capacity ({}/s)", scn.capacity.round()))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.stroke_width(1)));
    for (i, (s, pts)) in summaries.iter().zip(&series).enumerate() {
        let color = COLORS[i % COLORS.len()];
        let style = color.stroke_width(2);
        let label = if s.layers > 1 {
            format!("{} ({:.1} calls/req)", s.name, s.amplification)
        } else {
            format!("{} ({:.2} calls/req)", s.name, s.amplification)
        };
        // Zero is below a log axis: draw empty steps at its floor.
        let pts: Vec<(f64, f64)> = pts.iter().map(|&(x, y)| (x, y.max(y_min))).collect();
        chart
            .draw_series(LineSeries::new(pts, style))
            .map_err(|e| err(path, e))?
            .label(label)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], color.stroke_width(3)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.9))
        .border_style(RGBColor(0xbb, 0xbb, 0xbb))
        .label_font(("sans-serif", 14))
        .draw()
        .map_err(|e| err(path, e))?;
    root.present().map_err(|e| err(path, e))?;
    Ok(())
}
