//! `ferrocuda run`, the main job: the seed's table of CPU against GPU, measured on this machine.
//!
//! Each workload of [`ferrocuda::workloads`] runs as a plain single-threaded loop, as its kernels on
//! the CPU executor (all cores) and, when there is one, on the GPU. Every result is checked
//! against the workload's reference before its time counts; times are medians of repeated runs
//! with the data already on the device.

mod measure;
mod table;

use crate::chart;
use ferrocuda::workloads::cublas::Cublas;
use ferrocuda::workloads::{self, cuda_c, Recipe, Scale};
use ferrocuda::{Device, Module, Result};
use indicatif::{ProgressBar, ProgressStyle};
use measure::{measure_cublas, measure_device, measure_loop, verify_device, Measured};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
pub(crate) use table::{show_speedup, show_time};

/// What the command line asked for.
pub struct Options {
    /// How large the inputs are.
    pub scale: Scale,
    /// Print JSON instead of the table.
    pub json: bool,
    /// Only the workloads whose name contains this.
    pub only: Option<String>,
    /// Where the chart and the JSON are written.
    pub out_dir: PathBuf,
}

/// The whole run, as `--json` prints it.
#[derive(Serialize)]
struct Report {
    scale: &'static str,
    cpu: String,
    gpu: Option<String>,
    /// Whether the GPU is the PTX emulator: its results are checked, its times not taken (an
    /// interpreter's times say nothing about a GPU's), so it has no speedups or bandwidth.
    gpu_emulated: bool,
    /// Why there is no GPU column, when there is none.
    gpu_absent: Option<String>,
    /// Why there is no CUDA C column (no GPU, no NVRTC, a compile error), when there is none.
    /// On the PTX emulator the column's results are checked but not timed, as the GPU's.
    cuda_c_absent: Option<String>,
    /// Why there is no cuBLAS column (no GPU, the emulator, no libcublas), when there is none.
    cublas_absent: Option<String>,
    /// The GPU's measured device-to-device copy bandwidth in bytes per second (bytes read plus
    /// bytes written): the limit of memory-bound kernels.
    gpu_copy_bandwidth: Option<f64>,
    rows: Vec<Row>,
    /// The streamed row (`--only` may leave it out).
    streamed: Option<crate::streamed::StreamedRow>,
}

/// One workload's line of the table.
#[derive(Serialize)]
struct Row {
    workload: &'static str,
    size: String,
    bytes: u64,
    flops: u64,
    single_thread: Measured,
    executor: Measured,
    gpu: Option<Measured>,
    /// The project's CUDA C version of the workload on the same GPU, through the same checked
    /// launch, buffers and reference check, when it has one and NVRTC is there.
    cuda_c: Option<Measured>,
    /// Whether the workload has a CUDA C version at all.
    has_cuda_c: bool,
    /// cuBLAS's product of the same inputs on the same GPU, checked as ours is: the ceiling of
    /// the matrix rows (`cublasGemmEx`, f32 accumulation and output).
    cublas: Option<Measured>,
    /// On a GPU: bytes moved per second over the measured copy bandwidth.
    gpu_bandwidth_share: Option<f64>,
}

impl Row {
    /// Bytes per second the GPU run moved.
    fn gpu_rate(&self) -> Option<f64> {
        Some(self.bytes as f64 / self.gpu.as_ref()?.seconds?)
    }
}

impl Row {
    fn speedup(&self, of: &Measured) -> Option<f64> {
        Some(self.single_thread.seconds? / of.seconds?)
    }

    /// Our GPU time over CUDA C's: below 1, ours is faster.
    fn ours_over_cuda_c(&self) -> Option<f64> {
        Some(self.gpu.as_ref()?.seconds? / self.cuda_c.as_ref()?.seconds?)
    }

    /// cuBLAS's GPU time over ours: our share of cuBLAS's rate.
    fn share_of_cublas(&self) -> Option<f64> {
        Some(self.cublas.as_ref()?.seconds? / self.gpu.as_ref()?.seconds?)
    }
}

/// Runs the main job and says how it went: success only if every result was right.
pub fn main_job(options: Options) -> ExitCode {
    match run(&options) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::FAILURE
        }
    }
}

fn run(options: &Options) -> Result<bool> {
    let scale = options.scale;
    let cpu = Device::cpu();
    let cpu_kernels = cpu.load(&ferrocuda::KERNELS)?;
    let choice = Device::best();
    let (ferrocuda_kernels, gpu_absent) = if choice.device.is_gpu() {
        (Some(choice.device.load(&ferrocuda::KERNELS)?), None)
    } else {
        (None, Some(first_sentence(&choice.reason)))
    };

    let gpu_emulated = choice.device.properties().is_emulator();
    // ferrocuda's CUDA C versions, compiled by NVRTC for the same GPU, or why not. On the PTX
    // emulator they are checked like ours, not timed.
    let (cuda_c_kernels, cuda_c_absent) = match &ferrocuda_kernels {
        Some(kernels) => match cuda_c::load(kernels.device()) {
            Ok(module) => (Some(module), None),
            Err(why) => (None, Some(why)),
        },
        None => (None, Some("no GPU".to_string())),
    };
    // cuBLAS on the same GPU, for the matrix rows' ceiling, or why not.
    let (cublas, cublas_absent) = match &ferrocuda_kernels {
        Some(kernels) => match Cublas::new(kernels.device()) {
            Ok(cublas) => (Some(cublas), None),
            Err(why) => (None, Some(why)),
        },
        None => (None, Some("no GPU".to_string())),
    };
    let gpu_copy_bandwidth = match &ferrocuda_kernels {
        Some(kernels) if !gpu_emulated => Some(copy_bandwidth(kernels.device(), scale)?),
        _ => None,
    };
    let recipes = selected(workloads::all(scale), options.only.as_deref());
    if let Some(only) = &options.only {
        if recipes.is_empty() && !crate::streamed::wanted(Some(only)) {
            eprintln!("error: no workload's name contains {only:?}");
            return Ok(false);
        }
    }
    let columns = 2 + u64::from(ferrocuda_kernels.is_some()) + u64::from(cuda_c_kernels.is_some());
    let progress = ProgressBar::new(recipes.len() as u64 * columns);
    progress.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} {elapsed} {msg}")
            .expect("a valid template"),
    );
    if options.json {
        progress.set_draw_target(indicatif::ProgressDrawTarget::hidden());
    }
    let mut rows = Vec::new();
    for recipe in &recipes {
        // Each workload draws its inputs only now, and drops them before the next one's.
        progress.set_message(format!("{}: drawing the inputs", recipe.name()));
        let mut workload = recipe.build();
        let title = format!("{} ({})", recipe.name(), workload.size());
        let say = |column: &str| progress.set_message(format!("{title}: {column}"));
        say("CPU 1 thread");
        let single_thread = measure_loop(workload.as_mut(), scale);
        progress.inc(1);
        say("CPU executor");
        let executor = measure_device(workload.as_ref(), &cpu_kernels, scale);
        progress.inc(1);
        // The emulator's results are checked, its times not taken.
        let on_gpu = |kernels: &Module| match gpu_emulated {
            true => verify_device(workload.as_ref(), kernels),
            false => measure_device(workload.as_ref(), kernels, scale),
        };
        let gpu = ferrocuda_kernels.as_ref().map(|kernels| {
            say("GPU");
            let measured = on_gpu(kernels);
            progress.inc(1);
            measured
        });
        let has_cuda_c = !workload.kernels().is_empty();
        let cuda_c = cuda_c_kernels.as_ref().and_then(|kernels| {
            say("CUDA C");
            let measured = cuda_c::runs(kernels, workload.kernels()).then(|| on_gpu(kernels));
            progress.inc(1);
            measured
        });
        let cublas = cublas.as_ref().zip(workload.gemm()).map(|(cublas, gemm)| {
            say("cuBLAS");
            measure_cublas(gemm, cublas, scale)
        });
        let work = workload.work();
        rows.push(Row {
            workload: recipe.name(),
            size: workload.size(),
            bytes: work.bytes,
            flops: work.flops,
            single_thread,
            gpu_bandwidth_share: None,
            executor,
            gpu,
            cuda_c,
            has_cuda_c,
            cublas,
        });
    }
    let streamed = crate::streamed::wanted(options.only.as_deref()).then(|| {
        progress.set_message(format!(
            "{}: one launch and the pipeline",
            crate::streamed::NAME
        ));
        let cuda_c = cuda_c_kernels
            .as_ref()
            .ok_or(cuda_c_absent.as_deref().unwrap_or(""));
        crate::streamed::measure(&cpu_kernels, ferrocuda_kernels.as_ref(), cuda_c, scale)
    });
    progress.finish_and_clear();

    for row in &mut rows {
        row.gpu_bandwidth_share = row.gpu_rate().zip(gpu_copy_bandwidth).map(|(r, c)| r / c);
    }
    let report = Report {
        scale: scale.pick("full", "quick", "tiny"),
        cpu: cpu.to_string(),
        gpu: ferrocuda_kernels.as_ref().map(|k| k.device().to_string()),
        gpu_emulated,
        gpu_absent,
        cuda_c_absent,
        cublas_absent,
        gpu_copy_bandwidth,
        rows,
        streamed,
    };
    let all_right = report.rows.iter().all(|row| {
        [
            Some(&row.single_thread),
            Some(&row.executor),
            row.gpu.as_ref(),
            row.cuda_c.as_ref(),
            row.cublas.as_ref(),
        ]
        .into_iter()
        .flatten()
        .all(|m| m.failure.is_none())
    }) && report.streamed.as_ref().is_none_or(|s| s.is_right());
    let json = serde_json::to_string_pretty(&report).expect("the report serialises");
    let written = write_outputs(&options.out_dir, &report, &json);
    if options.json {
        println!("{json}");
    } else {
        table::print_table(&report);
        if let Some(streamed) = &report.streamed {
            streamed.print();
        }
        match &written {
            Ok(chart) => println!("\nchart of the speedups: {}", chart.display()),
            Err(error) => println!("\nthe chart could not be written: {error}"),
        }
    }
    if !all_right {
        eprintln!(
            "error: some results were wrong or failed (see above): their times are not shown"
        );
    }
    Ok(all_right && written.is_ok())
}

/// The recipes whose name contains `only` (all of them without it), still not built: a workload
/// left out never draws its inputs.
fn selected(recipes: Vec<Recipe>, only: Option<&str>) -> Vec<Recipe> {
    recipes
        .into_iter()
        .filter(|recipe| only.is_none_or(|only| recipe.name().contains(only)))
        .collect()
}

/// The first sentence of `text`, without a parenthesised list of details: the GPU column's
/// reason in one line (`ferrocuda doctor` gives the whole story).
fn first_sentence(text: &str) -> String {
    let sentence = text.split(". ").next().unwrap_or(text);
    match (sentence.find(" ("), sentence.rfind(')')) {
        (Some(open), Some(close)) if close > open => {
            format!("{}{}", &sentence[..open], &sentence[close + 1..])
        }
        _ => sentence.to_string(),
    }
}

/// The device's copy bandwidth: bytes read plus written per second by a device-to-device copy of
/// 256 MiB (1 MiB at test sizes), the median of ten.
fn copy_bandwidth(device: &Device, scale: Scale) -> Result<f64> {
    let words = scale.pick(64 << 20, 64 << 20, 1 << 18);
    let src = device.alloc_zeroed::<u32>(words)?;
    let mut dst = device.alloc_zeroed::<u32>(words)?;
    dst.copy_from_buffer(&src)?;
    let mut times = Vec::new();
    for _ in 0..10 {
        times.push(device.time(|| dst.copy_from_buffer(&src))?.1);
    }
    times.sort();
    Ok(2.0 * 4.0 * words as f64 / times[times.len() / 2].as_secs_f64())
}

/// Writes `results.json` and `speedups.svg` into `dir`; returns the chart's path.
fn write_outputs(dir: &Path, report: &Report, json: &str) -> std::result::Result<PathBuf, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let json_path = dir.join("results.json");
    std::fs::write(&json_path, json).map_err(|e| format!("{}: {e}", json_path.display()))?;
    let bars: Vec<chart::Bars> = report
        .rows
        .iter()
        .map(|row| chart::Bars {
            label: format!("{} ({})", row.workload, row.size),
            executor: row.speedup(&row.executor),
            gpu: row.gpu.as_ref().and_then(|g| row.speedup(g)),
        })
        .collect();
    let chart_path = dir.join("speedups.svg");
    // The emulator has no bars (no times), and is not named as the GPU the chart compares with.
    let gpu = report.gpu.as_deref().filter(|_| !report.gpu_emulated);
    chart::write_svg(&chart_path, &bars, gpu)?;
    if let Some(streamed) = report.streamed.as_ref().filter(|s| s.is_right()) {
        streamed.write_timeline(dir)?;
    }
    Ok(chart_path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    /// The main job's recipes, each noting its name in the returned list when it is built.
    fn counting(scale: Scale) -> (Vec<Recipe>, Rc<RefCell<Vec<&'static str>>>) {
        let built = Rc::new(RefCell::new(Vec::new()));
        let recipes = workloads::all(scale)
            .into_iter()
            .map(|recipe| {
                let (name, built) = (recipe.name(), Rc::clone(&built));
                Recipe::new(name, move || {
                    built.borrow_mut().push(name);
                    recipe.build()
                })
            })
            .collect();
        (recipes, built)
    }

    fn names(recipes: &[Recipe]) -> Vec<&'static str> {
        recipes.iter().map(Recipe::name).collect()
    }

    #[test]
    fn only_builds_the_selected_workloads_and_only_when_they_run() {
        // Full scale: building any workload here would draw tens of megabytes in a debug build.
        let (recipes, built) = counting(Scale::Full);
        let chosen = selected(recipes, Some("group-by, few"));
        assert_eq!(names(&chosen), ["group-by, few keys"]);
        assert!(built.borrow().is_empty(), "{:?}", built.borrow());

        // As `run` does, at the size its tests use: the selected one is built, once, for real.
        let (recipes, built) = counting(Scale::Tiny);
        for recipe in selected(recipes, Some("group-by, few")) {
            let mut workload = recipe.build();
            workload.run_loop();
            assert_eq!(workload.check_loop(), Ok(()));
            assert!(workload.size().contains("16 keys"), "{}", workload.size());
        }
        assert_eq!(*built.borrow(), ["group-by, few keys"]);
    }

    #[test]
    fn only_selects_by_a_part_of_the_name_and_nothing_for_no_match() {
        let every = names(&workloads::all(Scale::Full));
        assert_eq!(every.len(), 15, "{every:?}");
        let group_bys = vec!["group-by, few keys", "group-by, many keys"];
        for (only, want) in [
            (None, every),
            (Some("group-by"), group_bys),
            (Some("no such workload"), vec![]),
        ] {
            let (recipes, built) = counting(Scale::Full);
            assert_eq!(names(&selected(recipes, only)), want, "{only:?}");
            assert!(built.borrow().is_empty(), "{:?}", built.borrow());
        }
    }
}
