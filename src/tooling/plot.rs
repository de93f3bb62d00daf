//! SVG plots of the heuristics benchmark (`tessera bench --suite gap`), drawn with
//! `plotters`' SVG backend (text is emitted as SVG `<text>`; no system fonts needed).

use plotters::prelude::*;
use std::path::Path;

fn err<E: std::fmt::Debug>(path: &Path) -> impl Fn(E) -> String + '_ {
    move |e| format!("{}: plotting failed: {e:?}", path.display())
}

/// Deterministic jitter in `[-0.5, 0.5)` for the `i`-th point.
fn jitter(i: usize) -> f64 {
    let h = (i as u64).wrapping_add(0x9e37_79b9).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    ((h >> 40) % 1000) as f64 / 1000.0 - 0.5
}

fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn color(i: usize) -> RGBColor {
    // Okabe-Ito, distinguishable for colour-blind readers; then Palette99.
    const OI: [RGBColor; 8] = [
        RGBColor(0, 114, 178),
        RGBColor(213, 94, 0),
        RGBColor(0, 158, 115),
        RGBColor(204, 121, 167),
        RGBColor(230, 159, 0),
        RGBColor(86, 180, 233),
        RGBColor(120, 120, 120),
        RGBColor(240, 228, 66),
    ];
    if i < OI.len() {
        OI[i]
    } else {
        let c = Palette99::pick(i).to_rgba();
        RGBColor(c.0, c.1, c.2)
    }
}

/// Strip chart with box (quartiles, median, mean) of the placed-groups gap, one column per
/// heuristic; `series` = (solver, gaps as fractions).
pub fn gap_distribution(path: &Path, title: &str, series: &[(String, Vec<f64>)]) -> Result<(), String> {
    let n = series.len().max(1);
    let all: Vec<f64> = series.iter().flat_map(|(_, v)| v.iter().map(|g| g * 100.0)).collect();
    let lo = all.iter().cloned().fold(0.0f64, f64::min);
    let hi = all.iter().cloned().fold(10.0f64, f64::max);
    let pad = (hi - lo) * 0.06;
    let (ymin, ymax) = (lo - pad, hi + pad);
    let width = (220 + 150 * n as u32).max(640);
    let root = SVGBackend::new(path, (width, 520)).into_drawing_area();
    root.fill(&WHITE).map_err(err(path))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), ymin..ymax)
        .map_err(err(path))?;
    let names: Vec<String> = series.iter().map(|(s, _)| s.clone()).collect();
    let label = move |x: &f64| {
        let r = x.round();
        if (x - r).abs() < 1e-6 && r >= 0.0 && (r as usize) < names.len() {
            names[r as usize].clone()
        } else {
            String::new()
        }
    };
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n + 1)
        .x_label_formatter(&label)
        .y_desc("placed-groups gap to exact (%)")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err(path))?;
    // The zero line: equal to exact.
    chart.draw_series(LineSeries::new(vec![(-0.5, 0.0), (n as f64 - 0.5, 0.0)], BLACK.stroke_width(1))).map_err(err(path))?;
    for (i, (_, gaps)) in series.iter().enumerate() {
        let c = color(i);
        let x = i as f64;
        let mut s: Vec<f64> = gaps.iter().map(|g| g * 100.0).collect();
        s.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        if s.is_empty() {
            continue;
        }
        let (q1, med, q3) = (quantile(&s, 0.25), quantile(&s, 0.5), quantile(&s, 0.75));
        let mean = s.iter().sum::<f64>() / s.len() as f64;
        chart.draw_series(std::iter::once(Rectangle::new([(x - 0.32, q1), (x + 0.32, q3)], c.mix(0.15).filled()))).map_err(err(path))?;
        chart.draw_series(std::iter::once(Rectangle::new([(x - 0.32, q1), (x + 0.32, q3)], c.stroke_width(1)))).map_err(err(path))?;
        chart
            .draw_series(gaps.iter().enumerate().map(|(k, g)| Circle::new((x + 0.5 * jitter(k), g * 100.0), 3, c.mix(0.45).filled())))
            .map_err(err(path))?;
        chart.draw_series(LineSeries::new(vec![(x - 0.36, med), (x + 0.36, med)], c.stroke_width(3))).map_err(err(path))?;
        chart.draw_series(std::iter::once(TriangleMarker::new((x + 0.40, mean), 6, BLACK.filled()))).map_err(err(path))?;
        chart
            .draw_series(std::iter::once(Text::new(
                format!("n={} mean {:.1}%", s.len(), mean),
                (x - 0.40, ymax - (ymax - ymin) * 0.02),
                ("sans-serif", 13).into_font().color(&BLACK),
            )))
            .map_err(err(path))?;
    }
    root.present().map_err(err(path))?;
    Ok(())
}

/// Solve time (ms, log scale) against cluster size (nodes, log scale), one colour per
/// solver: every solve as a point, the median per cluster size joined by a line.
/// `series` = (solver, [(nodes, ms)]).
pub fn time_vs_nodes(path: &Path, title: &str, series: &[(String, Vec<(f64, f64)>)]) -> Result<(), String> {
    let pts = || series.iter().flat_map(|(_, v)| v.iter().copied());
    let xmax = pts().map(|p| p.0).fold(4.0f64, f64::max) * 1.6;
    let ymin = pts().map(|p| p.1).fold(f64::INFINITY, f64::min).clamp(1e-4, 1.0) / 2.0;
    let ymax = pts().map(|p| p.1).fold(1.0f64, f64::max) * 3.0;
    let root = SVGBackend::new(path, (1020, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(err(path))?;
    // The legend goes to the right of the plot, so that it never hides points.
    let (plot_area, legend_area) = root.split_horizontally(820);
    let mut chart = ChartBuilder::on(&plot_area)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(44)
        .y_label_area_size(70)
        .build_cartesian_2d((0.7f64..xmax).log_scale(), (ymin..ymax).log_scale())
        .map_err(err(path))?;
    chart
        .configure_mesh()
        .x_desc("cluster size (nodes, log scale)")
        .y_desc("solve time (ms, log scale)")
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&|y| if *y >= 1.0 { format!("{y:.0}") } else { format!("{y}") })
        .label_style(("sans-serif", 14))
        .draw()
        .map_err(err(path))?;
    let k = series.len().max(1) as f64;
    for (i, (name, v)) in series.iter().enumerate() {
        let c = color(i);
        // Solvers side by side at the same cluster size.
        let shift = 1.0 + 0.05 * (i as f64 - (k - 1.0) / 2.0);
        chart.draw_series(v.iter().map(|&(x, y)| Circle::new((x * shift, y.max(ymin)), 2, c.mix(0.35).filled()))).map_err(err(path))?;
        let mut by_size: std::collections::BTreeMap<u64, Vec<f64>> = Default::default();
        for &(x, y) in v {
            by_size.entry(x as u64).or_default().push(y);
        }
        let medians: Vec<(f64, f64)> = by_size
            .into_iter()
            .map(|(x, mut ys)| {
                ys.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
                (x as f64 * shift, quantile(&ys, 0.5).max(ymin))
            })
            .collect();
        chart.draw_series(LineSeries::new(medians, c.stroke_width(2))).map_err(err(path))?;
        let y = 60 + 24 * i as i32;
        legend_area.draw(&PathElement::new(vec![(8, y), (36, y)], c.stroke_width(3))).map_err(err(path))?;
        legend_area.draw(&Circle::new((22, y), 3, c.filled())).map_err(err(path))?;
        legend_area.draw(&Text::new(name.clone(), (44, y - 7), ("sans-serif", 14).into_font().color(&BLACK))).map_err(err(path))?;
    }
    legend_area
        .draw(&Text::new("points: solves;", (8, 60 + 24 * series.len() as i32 + 10), ("sans-serif", 12).into_font().color(&BLACK)))
        .map_err(err(path))?;
    legend_area
        .draw(&Text::new("lines: median per size", (8, 60 + 24 * series.len() as i32 + 26), ("sans-serif", 12).into_font().color(&BLACK)))
        .map_err(err(path))?;
    root.present().map_err(err(path))?;
    Ok(())
}
