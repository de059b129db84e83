//! The main job's table, as `ferrocuda run` prints it.

use super::measure::Measured;
use super::{Report, Row};

pub(crate) fn show_time(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.2} s")
    } else if seconds >= 1e-3 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.1} µs", seconds * 1e6)
    }
}

/// `12.3×`, or two significant digits below 1 (`0.031×`).
pub(crate) fn show_speedup(speedup: f64) -> String {
    if speedup >= 1.0 {
        format!("{speedup:.1}×")
    } else {
        let decimals = (-speedup.log10().floor()) as usize + 1;
        format!("{speedup:.decimals$}×")
    }
}

fn cell(m: &Measured) -> String {
    match (m.seconds, &m.failure) {
        (Some(s), _) => show_time(s),
        // Verified, not timed: the PTX emulator's cell.
        (None, None) => "✓ emulated".into(),
        (None, Some(f)) if f.starts_with("wrong") => "WRONG".into(),
        _ => "FAILED".into(),
    }
}

/// The CUDA C cell: its time, "—" for a workload without a CUDA C version, else why there is
/// no column ("no GPU", "NVRTC not found: ...", shortened to its first words).
fn cuda_c_cell(row: &Row, absent: Option<&str>) -> String {
    match (&row.cuda_c, absent) {
        (Some(m), _) => cell(m),
        (None, Some(why)) if row.has_cuda_c => why.split(" (").next().unwrap_or(why).to_string(),
        _ => "—".into(),
    }
}

pub(super) fn print_table(report: &Report) {
    println!(
        "ferrocuda: CPU against GPU on this machine ({} sizes)",
        report.scale
    );
    println!("CPU 1 thread: a plain Rust loop; CPU all cores: the same kernels as the GPU, on the");
    println!("executor ({}).", report.cpu);
    match (&report.gpu, &report.gpu_absent) {
        (Some(gpu), _) if report.gpu_emulated => println!(
            "GPU: {gpu}, emulated: the PTX ran through the driver API and its results were \
             checked, but an interpreter's times say nothing about a GPU's, so none are shown; \
             speedup = CPU 1 thread ÷ CPU all cores."
        ),
        (Some(gpu), _) => println!("GPU: {gpu}; speedup = CPU 1 thread ÷ GPU."),
        (None, reason) => {
            println!(
                "GPU: none, {}; speedup = CPU 1 thread ÷ CPU all cores. `ferrocuda doctor` says more.",
                reason.as_deref().unwrap_or("no GPU")
            );
        }
    }
    match &report.cuda_c_absent {
        None if report.gpu_emulated => println!(
            "CUDA C: ferrocuda's own CUDA C versions (NVRTC, accurate math) on the same emulated GPU: results checked, no times."
        ),
        None => println!(
            "CUDA C: ferrocuda's own CUDA C versions (NVRTC, accurate math) on the same GPU; ours ÷ CUDA C below 1 means ours is faster."
        ),
        Some(why) => println!("CUDA C: none, {why}."),
    }
    println!(
        "Every time is the median of runs whose first result was checked against a reference.\n"
    );
    let header = [
        "workload",
        "size",
        "CPU 1 thread",
        "CPU all cores (executor)",
        "GPU",
        "speedup",
        "CUDA C",
        "ours ÷ CUDA C",
    ];
    let mut lines = vec![header.map(String::from).to_vec()];
    for row in &report.rows {
        let gpu = row.gpu.as_ref();
        let speedup = match gpu {
            Some(g) if !report.gpu_emulated => row.speedup(g),
            _ => row.speedup(&row.executor),
        };
        lines.push(vec![
            row.workload.to_string(),
            row.size.clone(),
            cell(&row.single_thread),
            cell(&row.executor),
            gpu.map_or_else(|| "no GPU".into(), cell),
            speedup.map_or_else(|| "—".into(), show_speedup),
            cuda_c_cell(row, report.cuda_c_absent.as_deref()),
            row.ours_over_cuda_c()
                .map_or_else(|| "—".into(), |r| format!("{r:.2}")),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (i, line) in lines.iter().enumerate() {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(c, (text, &w))| {
                let pad = w - text.chars().count();
                if c < 2 {
                    format!("{text}{}", " ".repeat(pad))
                } else {
                    format!("{}{text}", " ".repeat(pad))
                }
            })
            .collect();
        println!("| {} |", cells.join(" | "));
        if i == 0 {
            let rule: Vec<String> = widths.iter().map(|&w| "-".repeat(w)).collect();
            println!("|-{}-|", rule.join("-|-"));
        }
    }
    if let Some(limit) = report.gpu_copy_bandwidth {
        println!(
            "\nGPU against its limits (copy bandwidth measured here: {:.0} GB/s):",
            limit / 1e9
        );
        for row in &report.rows {
            let (Some(rate), Some(seconds)) =
                (row.gpu_rate(), row.gpu.as_ref().and_then(|g| g.seconds))
            else {
                continue;
            };
            let mut line = format!(
                "  {:<28} {:>8.0} GB/s = {:>5.1}% of copy bandwidth",
                row.workload,
                rate / 1e9,
                100.0 * rate / limit
            );
            if row.flops > 0 {
                line += &format!(", {:.1} GFLOP/s", row.flops as f64 / seconds / 1e9);
            }
            println!("{line}");
        }
    }
    print_cublas(report);
    for row in &report.rows {
        for (column, m) in [
            ("CPU 1 thread", Some(&row.single_thread)),
            ("CPU all cores", Some(&row.executor)),
            ("GPU", row.gpu.as_ref()),
            ("CUDA C", row.cuda_c.as_ref()),
            ("cuBLAS", row.cublas.as_ref()),
        ] {
            if let Some(failure) = m.and_then(|m| m.failure.as_ref()) {
                println!("{} ({column}): {failure}", row.workload);
            }
        }
    }
}

/// The matrix rows against cuBLAS on the same GPU, or why there is no cuBLAS (said only where
/// there is a GPU: without one the header has said so).
fn print_cublas(report: &Report) {
    let rows: Vec<&Row> = report.rows.iter().filter(|r| r.cublas.is_some()).collect();
    match &report.cublas_absent {
        Some(why) if report.gpu.is_some() => {
            println!("\ncuBLAS: none, {why}: the matrix rows have no ceiling.")
        }
        _ if rows.is_empty() => {}
        _ => {
            println!(
                "\nGPU against cuBLAS (cublasGemmEx on the same inputs, f32 accumulation and \
                 output; the goal of the f16 tensor-core row is ≥ 70%):"
            );
            for row in rows {
                let cublas = row.cublas.as_ref().map_or_else(String::new, cell);
                let share = row
                    .share_of_cublas()
                    .map_or_else(|| "—".into(), |s| format!("{:.0}%", 100.0 * s));
                println!(
                    "  {:<34} cuBLAS {cublas:>10}, ours {:>10}: ours at {share} of cuBLAS's rate",
                    row.workload,
                    row.gpu.as_ref().map_or_else(|| "—".into(), cell),
                );
            }
        }
    }
}
