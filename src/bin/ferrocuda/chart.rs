//! The main job's bar chart: each workload's speedup over one CPU thread, on the executor and on
//! the GPU, as SVG (`plotters`).

use plotters::prelude::*;
use std::path::Path;

/// One workload's bars: speedups over the single-threaded loop (`None`: not measured).
pub struct Bars {
    /// Workload and size.
    pub label: String,
    /// CPU 1 thread ÷ CPU executor.
    pub executor: Option<f64>,
    /// CPU 1 thread ÷ GPU.
    pub gpu: Option<f64>,
}

const EXECUTOR_COLOR: RGBColor = RGBColor(70, 110, 180);
const GPU_COLOR: RGBColor = RGBColor(118, 185, 0);

/// Draws `bars` on a log scale (1× is the single thread) into an SVG file at `path`.
pub fn write_svg(path: &Path, bars: &[Bars], gpu: Option<&str>) -> Result<(), String> {
    draw(path, bars, gpu).map_err(|e| format!("{}: {e}", path.display()))
}

fn draw(path: &Path, bars: &[Bars], gpu: Option<&str>) -> Result<(), Box<dyn std::error::Error>> {
    let n = bars.len().max(1) as u32;
    let root = SVGBackend::new(path, (1100, 140 + 48 * n)).into_drawing_area();
    root.fill(&WHITE)?;
    let values: Vec<f64> = bars
        .iter()
        .flat_map(|b| [b.executor, b.gpu])
        .flatten()
        .filter(|v| v.is_finite() && *v > 0.0)
        .collect();
    let high = values.iter().copied().fold(2.0, f64::max) * 2.0;
    let low = values.iter().copied().fold(0.5, f64::min) / 2.0;
    let caption = match gpu {
        Some(gpu) => format!("Speedup over one CPU thread (GPU: {gpu})"),
        None => "Speedup over one CPU thread (no GPU on this machine)".to_string(),
    };
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(360)
        .build_cartesian_2d((low..high).log_scale(), (0..bars.len()).into_segmented())?;
    let labels: Vec<&str> = bars.iter().map(|b| b.label.as_str()).collect();
    chart
        .configure_mesh()
        .disable_y_mesh()
        // A label per workload (plotters shows about ten by default).
        .y_labels(2 * bars.len() + 1)
        .x_desc("speedup (×, log scale)")
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) => labels.get(*i).map_or(String::new(), |l| l.to_string()),
            _ => String::new(),
        })
        .draw()?;
    for (series, color, pick) in [
        ("CPU all cores (executor)", EXECUTOR_COLOR, 0usize),
        ("GPU", GPU_COLOR, 1),
    ] {
        let rectangles = bars.iter().enumerate().filter_map(|(i, b)| {
            let value = [b.executor, b.gpu][pick]?;
            let (top, bottom) = if pick == 0 {
                (SegmentValue::Exact(i), SegmentValue::CenterOf(i))
            } else {
                (SegmentValue::CenterOf(i), SegmentValue::Exact(i + 1))
            };
            Some(Rectangle::new(
                [(1.0, top), (value, bottom)],
                color.filled(),
            ))
        });
        chart
            .draw_series(rectangles)?
            .label(series)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
        let texts = bars.iter().enumerate().filter_map(|(i, b)| {
            let value = [b.executor, b.gpu][pick]?;
            let at = if pick == 0 {
                SegmentValue::Exact(i)
            } else {
                SegmentValue::CenterOf(i)
            };
            Some(Text::new(
                format!(" {}", crate::run::show_speedup(value)),
                (value.max(1.0), at),
                ("sans-serif", 13).into_font(),
            ))
        });
        chart.draw_series(texts)?;
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
