//! SVG charts of the estimates report (plotters' SVG backend: text stays text, no fonts).
//!
//! Both chart kinds plot on transformed axes so that one coordinate type serves linear and
//! logarithmic scales: a logarithmic axis carries `log10(value)` (or `log2` for a swept
//! parameter) and its labels print the value back.

use anyhow::{anyhow, Result};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::path::Path;

const SIZE: (u32, u32) = (760, 420);
const PALETTE: [RGBColor; 6] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
];

fn err<E: std::fmt::Display>(path: &Path) -> impl Fn(E) -> anyhow::Error + '_ {
    move |e| anyhow!("{}: {e}", path.display())
}

/// `12345.6` as `12.3K`, `1234567` as `1.23M`: axis labels.
pub fn short(v: f64) -> String {
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    let a = v.abs();
    if a >= 1e6 {
        trim(format!("{:.2}", v / 1e6)) + "M"
    } else if a >= 1e3 {
        trim(format!("{:.1}", v / 1e3)) + "K"
    } else if a >= 10.0 {
        format!("{v:.0}")
    } else if a >= 0.01 || a == 0.0 {
        trim(format!("{v:.2}"))
    } else {
        // Small values (µW in a mW axis): two significant digits, not "0".
        let digits = (-a.log10().floor()) as usize + 1;
        trim(format!("{v:.digits$}"))
    }
}

/// One series of a bar chart: its name and a value per category (`None`: no bar).
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
}

/// Grouped vertical bars: one group per category, one bar per series; `log` puts the
/// value axis on a log10 scale; `marks` draws labelled horizontal lines (targets).
pub fn bars(
    path: &Path,
    title: &str,
    value_label: &str,
    categories: &[String],
    series: &[BarSeries],
    log: bool,
    marks: &[(String, f64)],
) -> Result<()> {
    let e = err(path);
    // A series without a single value takes no room.
    let series: Vec<&BarSeries> = series
        .iter()
        .filter(|s| s.values.iter().any(|v| v.is_some_and(f64::is_finite)))
        .collect();
    let tr = |v: f64| if log { v.max(1e-9).log10() } else { v };
    let all: Vec<f64> = series
        .iter()
        .flat_map(|s| s.values.iter().flatten().copied())
        .chain(marks.iter().map(|m| m.1))
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .collect();
    if all.is_empty() || categories.is_empty() {
        return Err(anyhow!("{}: no values to chart", path.display()));
    }
    let max = all.iter().map(|&v| tr(v)).fold(f64::MIN, f64::max);
    let min = all.iter().map(|&v| tr(v)).fold(f64::MAX, f64::min);
    // Headroom above the tallest bar for the legend (upper left).
    let (y0, y1) = if log {
        (
            min.floor().min(max.floor() - 1.0),
            (max + 0.7).ceil().max(min + 1.0),
        )
    } else {
        (0.0, max * 1.3)
    };
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(&e)?;
    let n = categories.len() as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(70)
        .y_label_area_size(70)
        .build_cartesian_2d(0f64..n, y0..y1)
        .map_err(&e)?;
    let ylab = move |v: &f64| {
        if log {
            short(10f64.powf(*v))
        } else {
            short(*v)
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .y_desc(value_label)
        .y_labels(if log {
            ((y1 - y0) as usize).max(2) + 1
        } else {
            8
        })
        .y_label_formatter(&ylab)
        .draw()
        .map_err(&e)?;
    let k = series.len().max(1) as f64;
    let width = 0.8 / k;
    for (j, s) in series.iter().enumerate() {
        let color = PALETTE[j % PALETTE.len()];
        let rects = s.values.iter().enumerate().filter_map(|(i, v)| {
            let v = (*v)?;
            if !v.is_finite() || (log && v <= 0.0) {
                return None;
            }
            let x = i as f64 + 0.1 + j as f64 * width;
            Some(Rectangle::new(
                [(x, y0), (x + width * 0.92, tr(v))],
                color.filled(),
            ))
        });
        chart
            .draw_series(rects)
            .map_err(&e)?
            .label(s.name.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    for (m, v) in marks {
        let y = tr(*v);
        chart
            .draw_series(LineSeries::new(
                vec![(0.0, y), (n, y)],
                BLACK.stroke_width(1),
            ))
            .map_err(&e)?;
        chart
            .draw_series(std::iter::once(Text::new(
                m.clone(),
                (n - 0.05, y),
                ("sans-serif", 12)
                    .into_font()
                    .color(&BLACK)
                    .pos(Pos::new(HPos::Right, VPos::Bottom)),
            )))
            .map_err(&e)?;
    }
    // Category names under their groups, drawn in pixel space (a numeric axis would put
    // its own ticks between them).
    let label_style = ("sans-serif", 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (i, c) in categories.iter().enumerate() {
        let (px, py) = chart.backend_coord(&(i as f64 + 0.5, y0));
        root.draw(&Text::new(c.clone(), (px, py + 6), label_style.clone()))
            .map_err(&e)?;
    }
    legend(&mut chart).map_err(&e)?;
    root.present().map_err(&e)?;
    Ok(())
}

type Chart<'a> = ChartContext<'a, SVGBackend<'a>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// The series' legend, upper left, on a light background.
fn legend<'a>(chart: &mut Chart<'a>) -> Result<(), DrawingAreaErrorKind<std::io::Error>> {
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperLeft)
        .draw()
}

/// One line of a scaling chart: its name and `(parameter value, figure)` points.
pub struct LineData {
    pub name: String,
    pub points: Vec<(u64, f64)>,
}

/// A log-log chart of figures against a swept parameter (both axes logarithmic: the slope
/// is the scaling exponent, 1 for linear growth).
pub fn scaling(path: &Path, title: &str, param: &str, lines: &[LineData]) -> Result<()> {
    let e = err(path);
    let pts: Vec<(f64, f64)> = lines
        .iter()
        .flat_map(|l| l.points.iter())
        .filter(|(x, y)| *x > 0 && *y > 0.0)
        .map(|&(x, y)| ((x as f64).log2(), y.log10()))
        .collect();
    if pts.len() < 2 {
        return Err(anyhow!(
            "{}: fewer than two points to chart",
            path.display()
        ));
    }
    let x0 = pts.iter().map(|p| p.0).fold(f64::MAX, f64::min);
    let x1 = pts.iter().map(|p| p.0).fold(f64::MIN, f64::max);
    let y0 = pts.iter().map(|p| p.1).fold(f64::MAX, f64::min).floor();
    let y1 = pts
        .iter()
        .map(|p| p.1)
        .fold(f64::MIN, f64::max)
        .ceil()
        .max(y0 + 1.0);
    let pad = ((x1 - x0) * 0.05).max(0.2);
    let root = SVGBackend::new(path, SIZE).into_drawing_area();
    root.fill(&WHITE).map_err(&e)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(70)
        .build_cartesian_2d((x0 - pad)..(x1 + pad), y0..y1)
        .map_err(&e)?;
    let xs: Vec<u64> = {
        let mut v: Vec<u64> = lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let ylab = |v: &f64| short(10f64.powf(*v));
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .x_label_formatter(&|_| String::new())
        .x_desc(format!("{param} (log scale)"))
        .y_desc("estimated count (log scale)")
        .y_labels(((y1 - y0) as usize).max(2) + 1)
        .y_label_formatter(&ylab)
        .draw()
        .map_err(&e)?;
    // The swept values label the x axis, each with a grid line (plotters' numeric key
    // points would fall between them on a log axis).
    let label_style = ("sans-serif", 12)
        .into_font()
        .color(&BLACK)
        .pos(Pos::new(HPos::Center, VPos::Top));
    for &v in &xs {
        let x = (v as f64).log2();
        chart
            .draw_series(LineSeries::new(
                vec![(x, y0), (x, y1)],
                BLACK.mix(0.15).stroke_width(1),
            ))
            .map_err(&e)?;
        let (px, py) = chart.backend_coord(&(x, y0));
        root.draw(&Text::new(v.to_string(), (px, py + 6), label_style.clone()))
            .map_err(&e)?;
    }
    for (j, l) in lines.iter().enumerate() {
        let color = PALETTE[j % PALETTE.len()];
        let data: Vec<(f64, f64)> = l
            .points
            .iter()
            .filter(|(x, y)| *x > 0 && *y > 0.0)
            .map(|&(x, y)| ((x as f64).log2(), y.log10()))
            .collect();
        chart
            .draw_series(LineSeries::new(data.clone(), color.stroke_width(2)))
            .map_err(&e)?
            .label(l.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
            });
        chart
            .draw_series(data.into_iter().map(|p| Circle::new(p, 3, color.filled())))
            .map_err(&e)?;
    }
    legend(&mut chart).map_err(&e)?;
    root.present().map_err(&e)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::short;

    #[test]
    fn axis_labels_keep_their_digits() {
        assert_eq!(short(12_345.6), "12.3K");
        assert_eq!(short(1_234_567.0), "1.23M");
        assert_eq!(short(250.0), "250");
        assert_eq!(short(0.5), "0.5");
        assert_eq!(short(0.0), "0");
        assert_eq!(short(0.001), "0.001");
        assert_eq!(short(0.00051), "0.00051");
    }
}
