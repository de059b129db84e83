//! The streamed row's timeline: each chunk's copy in, kernel and copy out as bars on its
//! stream's lane, from the pipeline's events, as SVG (`plotters`). Bars that overlap in time on
//! different lanes are copies and kernels running at once.

use ferrocuda::ops::{SpanKind, Timeline};
use plotters::prelude::*;
use std::path::Path;

const COPY_IN: RGBColor = RGBColor(70, 110, 180);
const KERNEL: RGBColor = RGBColor(118, 185, 0);
const COPY_OUT: RGBColor = RGBColor(230, 140, 40);

/// Draws `timeline` (spans on `device`) into an SVG file at `path`.
pub fn write_svg(path: &Path, timeline: &Timeline, device: &str) -> Result<(), String> {
    draw(path, timeline, device).map_err(|e| format!("{}: {e}", path.display()))
}

fn draw(path: &Path, timeline: &Timeline, device: &str) -> Result<(), Box<dyn std::error::Error>> {
    // One lane per stream of every device: stream s is on device s mod devices.
    let devices = timeline.devices.max(1);
    let lanes = (timeline.streams * devices).clamp(1, timeline.chunks.max(1));
    let root = SVGBackend::new(path, (1100, 160 + 60 * lanes as u32)).into_drawing_area();
    root.fill(&WHITE)?;
    let end_ms = timeline
        .spans
        .iter()
        .map(|s| s.end.as_secs_f64() * 1e3)
        .fold(0.0, f64::max)
        .max(1e-3);
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "Pipeline timeline: {} chunks of {} on {lanes} streams ({device})",
                timeline.chunks, timeline.chunk_len
            ),
            ("sans-serif", 18),
        )
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(90)
        .build_cartesian_2d(0.0..end_ms * 1.02, (0..lanes).into_segmented())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(2 * lanes + 1)
        .x_desc("ms from the pipeline's start")
        .y_label_formatter(&|v| match v {
            SegmentValue::CenterOf(i) if devices > 1 => {
                format!("device {} stream {}", i % devices, i / devices)
            }
            SegmentValue::CenterOf(i) => format!("stream {i}"),
            _ => String::new(),
        })
        .draw()?;
    for (label, kind, color) in [
        ("copy in", SpanKind::CopyIn, COPY_IN),
        ("kernel", SpanKind::Kernel, KERNEL),
        ("copy out", SpanKind::CopyOut, COPY_OUT),
    ] {
        let bars = timeline.spans.iter().filter(|s| s.kind == kind).map(|s| {
            Rectangle::new(
                [
                    (s.start.as_secs_f64() * 1e3, SegmentValue::Exact(s.stream)),
                    (s.end.as_secs_f64() * 1e3, SegmentValue::Exact(s.stream + 1)),
                ],
                color.filled(),
            )
        });
        chart
            .draw_series(bars)?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 14, y + 6)], color.filled()));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
