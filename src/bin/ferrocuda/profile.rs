//! `ferrocuda profile`: every main-job workload run once on the PTX emulator with its counters
//! on (`FERROCUDA_EMU_PROFILE`), each result checked, and per kernel: warp instructions, SIMT
//! and branch efficiency, sectors per request, shared-memory wavefronts per request,
//! theoretical occupancy on `--gpu` and an estimated time there. `--from FILE` prints the same
//! table for the launches a user's own program recorded. See docs/profile.md.

use ferrocuda::profile::{self, Gpu, KernelRow, LaunchRecord, PROFILE_ENV};
use ferrocuda::workloads::{self, cuda_c, Scale};
use ferrocuda::{Device, Module, Ptx};
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
    // Ours: the library module's and the tensor-core module's (sm_80) reports, one per line.
    let ours_report = format!(
        "{}\n{}",
        ferrocuda::KERNELS_PTXAS_REPORT,
        ferrocuda::TENSOR_KERNELS_PTXAS_REPORT
    );
    let twins = cuda_c::compile(&device);
    let mut notes = Vec::new();
    // Their registers as ptxas counts them, as ours are; else their PTX's declarations.
    let twins_report = match &twins {
        Ok(ptx) => ptxas_report(ptx, &device).unwrap_or_else(|why| {
            notes.push(format!(
                "CUDA C twins' occupancy is a lower bound (≥, from their PTX's register \
                 declarations): {why}"
            ));
            String::new()
        }),
        Err(_) => String::new(),
    };
    let twins = twins.and_then(|ptx| device.load(ptx).map_err(|e| e.to_string()));
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
        // Each module with its own ptxas report: the CUDA C kernels have our kernels' names.
        let mut modules: Vec<(String, &Module, &str)> =
            vec![(name.clone(), &kernels, &ours_report)];
        if let Ok(twins) = &twins {
            if cuda_c::runs(twins, workload.kernels()) {
                modules.push((format!("{name}, CUDA C"), twins, &twins_report));
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

/// ptxas's resource report of `ptx` (NVRTC's PTX for `device`'s GPU), assembled for that GPU's
/// architecture, in the table form [`profile::rows`] reads; or why there is none.
fn ptxas_report(ptx: &Ptx, device: &Device) -> Result<String, String> {
    let (major, minor) = device
        .properties()
        .compute_capability
        .ok_or("the GPU's compute capability is unknown")?;
    let arch = format!("sm_{major}{minor}");
    let ptxas = ferrocuda_builder::find_ptxas(&arch)
        .ok_or_else(|| format!("no ptxas that assembles for {arch} was found (`make setup`)"))?;
    let path = std::env::temp_dir().join(format!("ferrocuda-cuda-c-{}.ptx", std::process::id()));
    std::fs::write(&path, ptx.source()).map_err(|e| format!("{}: {e}", path.display()))?;
    let report = ferrocuda_builder::assemble(&ptxas, &path, &arch);
    let _ = std::fs::remove_file(&path);
    Ok(report.map_err(|e| e.to_string())?.to_string())
}

fn print_table(gpu: &Gpu, rows: &[Row]) {
    print!(
        "{}",
        profile::table(gpu, rows.iter().map(|r| (r.workload.as_str(), &r.kernel)))
    );
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
