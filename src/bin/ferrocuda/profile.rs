//! `ferrocuda profile`: every main-job workload run once on the PTX emulator with its counters
//! on (`FERROCUDA_EMU_PROFILE`), each result checked, and per kernel: warp instructions, SIMT
//! and branch efficiency, sectors per request, shared-memory wavefronts per request,
//! theoretical occupancy on `--gpu` and an estimated time there. `--from FILE` prints the same
//! table for the launches a user's own program recorded. See docs/profile.md.

use ferrocuda::profile::{self, Gpu, KernelRow, LaunchRecord, PROFILE_ENV};
use ferrocuda::workloads::{self, cuda_c, Scale};
use ferrocuda::{Device, Module};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What `ferrocuda profile` was asked.
pub struct Options {
    pub gpu: String,
    pub only: Option<String>,
    pub json: bool,
    pub from: Option<PathBuf>,
}

/// One table row: a kernel of a workload (or of the user's program).
struct Row {
    workload: String,
    kernel: KernelRow,
}

pub fn main(options: Options) -> ExitCode {
    match run(&options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: &Options) -> Result<(), String> {
    let gpu = profile::gpu(&options.gpu)?;
    let (rows, notes) = match &options.from {
        Some(path) => {
            let records = profile::read(path)?;
            let kernels = profile::rows(&records, gpu, ferrocuda::KERNELS_PTXAS_REPORT);
            let rows = kernels
                .into_iter()
                .filter(|k| wanted(&k.kernel, options.only.as_deref()))
                .map(|kernel| Row {
                    workload: "-".into(),
                    kernel,
                })
                .collect();
            (rows, Vec::new())
        }
        None => profile_workloads(gpu, options.only.as_deref())?,
    };
    if options.json {
        print_json(gpu, &rows);
    } else {
        print_table(gpu, &rows);
        for note in notes {
            println!("{note}");
        }
    }
    Ok(())
}

fn wanted(name: &str, only: Option<&str>) -> bool {
    only.is_none_or(|only| name.contains(only))
}

/// Runs each workload (and its CUDA C twin where NVRTC is there) once on the emulator.
fn profile_workloads(gpu: &Gpu, only: Option<&str>) -> Result<(Vec<Row>, Vec<String>), String> {
    // Read by the emulator's libcuda.so at its first launch: set before any CUDA call, while
    // this process has no other thread.
    let file = std::env::temp_dir().join(format!("ferrocuda-profile-{}.jsonl", std::process::id()));
    std::fs::write(&file, "").map_err(|e| format!("{}: {e}", file.display()))?;
    std::env::set_var(PROFILE_ENV, &file);
    let outcome = profile_with(gpu, only, &file);
    let _ = std::fs::remove_file(&file);
    outcome
}

fn profile_with(
    gpu: &Gpu,
    only: Option<&str>,
    file: &Path,
) -> Result<(Vec<Row>, Vec<String>), String> {
    let device = Device::best().device;
    if !device.properties().is_emulator() {
        return Err(format!(
            "`ferrocuda profile` counts on the PTX emulator, and the device is {device}: build it \
             (`cargo build -p ferrocuda-ptx-emu-driver`) and set \
             FERROCUDA_LIBCUDA=$PWD/target/debug/libferrocuda_emu_cuda.so"
        ));
    }
    let kernels = device
        .load(&ferrocuda::KERNELS)
        .map_err(|e| e.to_string())?;
    let twins = cuda_c::load(&device);
    let mut notes = Vec::new();
    if let Err(why) = &twins {
        notes.push(format!("CUDA C twins not profiled: {why}"));
    }
    let recipes: Vec<_> = workloads::all(Scale::Quick)
        .into_iter()
        .filter(|r| wanted(r.name(), only))
        .collect();
    if recipes.is_empty() {
        return Err(format!(
            "no workload's name contains {:?}",
            only.unwrap_or("")
        ));
    }
    let mut rows = Vec::new();
    let mut offset = 0;
    for recipe in &recipes {
        let workload = recipe.build();
        let name = format!("{} ({})", recipe.name(), workload.size());
        // ptxas's report is of our kernels: the CUDA C ones (same names) take the emulator's
        // register count from their PTX.
        let mut modules: Vec<(String, &Module, &str)> =
            vec![(name.clone(), &kernels, ferrocuda::KERNELS_PTXAS_REPORT)];
        if let Ok(twins) = &twins {
            if cuda_c::runs(twins, workload.kernels()) {
                modules.push((format!("{name}, CUDA C"), twins, ""));
            }
        }
        for (label, module, report) in modules {
            let mut on_device = workload.on_device(module).map_err(|e| e.to_string())?;
            on_device.run().map_err(|e| format!("{label}: {e}"))?;
            on_device
                .check()
                .map_err(|e| format!("{label}: {e}"))?
                .map_err(|wrong| format!("{label}: wrong result: {wrong}"))?;
            let records: Vec<LaunchRecord>;
            (records, offset) = profile::read_from(file, offset)?;
            for kernel in profile::rows(&records, gpu, report) {
                rows.push(Row {
                    workload: label.clone(),
                    kernel,
                });
            }
        }
    }
    Ok((rows, notes))
}

fn fixed(value: Option<f64>, digits: usize) -> String {
    value.map_or("-".into(), |v| format!("{v:.digits$}"))
}

fn percent(value: Option<f64>) -> String {
    value.map_or("-".into(), |v| format!("{:.0}%", v * 100.0))
}

/// Seconds in µs or ms, as fits.
fn time(seconds: f64) -> String {
    if seconds < 1e-3 {
        format!("{:.1} µs", seconds * 1e6)
    } else {
        format!("{:.2} ms", seconds * 1e3)
    }
}

fn print_table(gpu: &Gpu, rows: &[Row]) {
    println!(
        "Counted on the PTX emulator (PTX warp instructions, Nsight Compute's definitions); \
         occupancy and time *estimated* for {} (docs/profile.md).",
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
    for row in rows {
        let (k, c) = (&row.kernel, &row.kernel.counters);
        // Without ptxas's count, the PTX's declared registers over-count: occupancy is at least.
        let occupancy = match (k.occupancy, k.registers_from_ptxas) {
            (Some(o), true) => format!("{:.0}% ({})", o.fraction * 100.0, o.limiter.name()),
            (Some(o), false) => format!("≥{:.0}% (PTX regs)", o.fraction * 100.0),
            (None, true) => "none fits".into(),
            (None, false) => "? (PTX regs)".into(),
        };
        table.push(vec![
            row.workload.clone(),
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
        println!("{}", cells.join("  "));
    }
}

fn print_json(gpu: &Gpu, rows: &[Row]) {
    let rows: Vec<_> = rows
        .iter()
        .map(|row| {
            let (k, c) = (&row.kernel, &row.kernel.counters);
            let (requested, moved) = c.global_bytes();
            json!({
                "workload": row.workload,
                "kernel": k.kernel,
                "launches": k.launches,
                "warp_instructions": c.warp_instructions,
                "simt_efficiency": c.simt_efficiency(),
                "branch_efficiency": c.branch_efficiency(),
                "global_load_sectors_per_request": c.load_sectors_per_request(),
                "global_store_sectors_per_request": c.store_sectors_per_request(),
                "shared_wavefronts_per_request": c.shared_wavefronts_per_request(),
                "theoretical_occupancy": k.occupancy.map(|o| o.fraction),
                "occupancy_limiter": k.occupancy.map(|o| o.limiter.name()),
                "estimated_seconds": k.estimate.seconds,
                "estimate_bound": k.estimate.bound(),
                "registers": k.registers,
                "registers_from_ptxas": k.registers_from_ptxas,
                "global_bytes_requested": requested,
                "global_bytes_moved": moved,
                "counters": c,
            })
        })
        .collect();
    let report = json!({"gpu": gpu.name, "rows": rows});
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("JSON of numbers and strings")
    );
}
