//! The profile as a text table, one row per kernel: what `ferrocuda profile` prints and what a
//! benchmark of a user's kernel prints on the emulator (`ferrocuda::bench`, feature `criterion`).

use super::gpus::Gpu;
use super::rows::KernelRow;

/// The table of `rows` (each with the label of its first column: a workload, or `-`) on `gpu`,
/// under a line saying what was counted and what is estimated. Occupancy from a kernel's PTX
/// register declarations rather than ptxas's count is a lower bound, shown as `≥`.
pub fn table<'a>(gpu: &Gpu, rows: impl IntoIterator<Item = (&'a str, &'a KernelRow)>) -> String {
    let mut out = format!(
        "Counted on the PTX emulator (PTX warp instructions, Nsight Compute's definitions); \
         occupancy and time *estimated* for {} (docs/profile.md).\n",
        gpu.board
    );
    let header = [
        "workload",
        "kernel",
        "launches",
        "warp instr",
        "SIMT",
        "branch eff",
        "ld sect/req",
        "st sect/req",
        "shared wf/req",
        "occupancy",
        "est. time",
    ];
    let mut table: Vec<Vec<String>> = vec![header.map(String::from).to_vec()];
    for (label, k) in rows {
        let c = &k.counters;
        // Without ptxas's count, the PTX's declared registers over-count: occupancy is at least.
        let occupancy = match (k.occupancy, k.registers_from_ptxas) {
            (Some(o), true) => format!("{:.0}% ({})", o.fraction * 100.0, o.limiter.name()),
            (Some(o), false) => format!("≥{:.0}% (PTX regs)", o.fraction * 100.0),
            (None, true) => "none fits".into(),
            (None, false) => "? (PTX regs)".into(),
        };
        table.push(vec![
            label.to_string(),
            k.kernel.clone(),
            k.launches.to_string(),
            c.warp_instructions.to_string(),
            percent(c.simt_efficiency()),
            percent(c.branch_efficiency()),
            fixed(c.load_sectors_per_request(), 1),
            fixed(c.store_sectors_per_request(), 1),
            fixed(c.shared_wavefronts_per_request(), 2),
            occupancy,
            format!("{} ({})", time(k.estimate.seconds), k.estimate.bound()),
        ]);
    }
    let widths: Vec<usize> = (0..header.len())
        .map(|i| {
            table
                .iter()
                .map(|r| r[i].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (cell, &w))| match i {
                0 | 1 => format!("{cell:<w$}"),
                _ => format!("{cell:>w$}"),
            })
            .collect();
        out += &cells.join("  ");
        out.push('\n');
    }
    out
}

fn fixed(value: Option<f64>, digits: usize) -> String {
    value.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn percent(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))
}

/// Seconds in ns, µs or ms, as fits.
fn time(seconds: f64) -> String {
    if seconds < 1e-6 {
        format!("{:.0} ns", seconds * 1e9)
    } else if seconds < 1e-3 {
        format!("{:.1} µs", seconds * 1e6)
    } else {
        format!("{:.2} ms", seconds * 1e3)
    }
}
