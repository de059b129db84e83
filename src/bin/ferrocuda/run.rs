//! `ferrocuda run`, the main job: the seed's table of CPU against GPU, measured on this machine.
//!
//! Each workload of [`ferrocuda::workloads`] runs as a plain single-threaded loop, as its kernels on
//! the CPU executor (all cores) and, when there is one, on the GPU. Every result is checked
//! against the workload's reference before its time counts; times are medians of repeated runs
//! with the data already on the device.

use crate::chart;
use ferrocuda::workloads::{self, cuda_c, DeviceRun, Recipe, Scale, Verdict, Workload};
use ferrocuda::{Device, Module, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

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
    /// On a GPU: bytes moved per second over the measured copy bandwidth.
    gpu_bandwidth_share: Option<f64>,
}

impl Row {
    /// Bytes per second the GPU run moved.
    fn gpu_rate(&self) -> Option<f64> {
        Some(self.bytes as f64 / self.gpu.as_ref()?.seconds?)
    }
}

/// One cell: the median time and how it was obtained, or why there is none.
#[derive(Serialize, Clone)]
struct Measured {
    /// Median seconds per run; `None` if the run failed or its result was wrong.
    seconds: Option<f64>,
    runs: usize,
    /// `None` when verified; else what was wrong (a wrong result or an error).
    failure: Option<String>,
}

impl Row {
    fn speedup(&self, of: &Measured) -> Option<f64> {
        Some(self.single_thread.seconds? / of.seconds?)
    }

    /// Our GPU time over CUDA C's: below 1, ours is faster.
    fn ours_over_cuda_c(&self) -> Option<f64> {
        Some(self.gpu.as_ref()?.seconds? / self.cuda_c.as_ref()?.seconds?)
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
        print_table(&report);
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

/// How long to warm up before a measurement, how long to keep repeating it, and how often at
/// most.
fn budget(scale: Scale) -> (Duration, Duration, usize) {
    match scale {
        Scale::Full => (Duration::from_millis(200), Duration::from_secs(2), 15),
        _ => (Duration::from_millis(20), Duration::from_millis(400), 7),
    }
}

/// The median of timed runs: at least three, more while the budget lasts, after untimed runs for
/// the warm-up time (the verified run before it warms the caches; on a virtual machine the
/// executor's second core took about 50 ms of back-to-back launches to run at full speed: a
/// 1M-element dot product 0.75 ms per launch until then, 0.4 ms after). Every column gets the
/// same warm-up.
fn repeat(scale: Scale, mut timed: impl FnMut() -> Result<Duration>) -> Result<(Duration, usize)> {
    let (warm_up, time_budget, most) = budget(scale);
    let start = Instant::now();
    while start.elapsed() < warm_up {
        timed()?;
    }
    let start = Instant::now();
    let mut times = Vec::new();
    while times.len() < 3 || (times.len() < most && start.elapsed() < time_budget) {
        times.push(timed()?);
    }
    times.sort();
    Ok((times[times.len() / 2], times.len()))
}

fn measured(result: Result<(Duration, usize)>, verdict: Verdict) -> Measured {
    match (verdict, result) {
        (Err(wrong), _) => Measured {
            seconds: None,
            runs: 1,
            failure: Some(format!("wrong result: {wrong}")),
        },
        (Ok(()), Err(error)) => Measured {
            seconds: None,
            runs: 0,
            failure: Some(error.to_string()),
        },
        (Ok(()), Ok((median, runs))) => Measured {
            seconds: Some(median.as_secs_f64()),
            runs,
            failure: None,
        },
    }
}

fn measure_loop(workload: &mut dyn Workload, scale: Scale) -> Measured {
    workload.run_loop();
    let verdict = workload.check_loop();
    let result = match verdict {
        Ok(()) => repeat(scale, || {
            let start = Instant::now();
            workload.run_loop();
            Ok(start.elapsed())
        }),
        Err(_) => Ok((Duration::ZERO, 0)),
    };
    measured(result, verdict)
}

/// Runs `workload` once on the PTX emulator and checks the result, without timing it: a cell
/// with no seconds and no failure when it was right.
fn verify_device(workload: &dyn Workload, kernels: &Module) -> Measured {
    let verdict = (|| -> Result<Verdict> {
        let mut on_device = workload.on_device(kernels)?;
        on_device.run()?;
        on_device.check()
    })();
    match verdict {
        Ok(Ok(())) => Measured {
            seconds: None,
            runs: 1,
            failure: None,
        },
        Ok(Err(wrong)) => measured(Ok((Duration::ZERO, 0)), Err(wrong)),
        Err(error) => measured(Err(error), Ok(())),
    }
}

fn measure_device(workload: &dyn Workload, kernels: &Module, scale: Scale) -> Measured {
    let device = kernels.device();
    let verified = (|| -> Result<(Box<dyn DeviceRun + '_>, Verdict)> {
        let mut on_device = workload.on_device(kernels)?;
        on_device.run()?;
        let verdict = on_device.check()?;
        Ok((on_device, verdict))
    })();
    match verified {
        Err(error) => measured(Err(error), Ok(())),
        Ok((_, Err(wrong))) => measured(Ok((Duration::ZERO, 0)), Err(wrong)),
        Ok((mut on_device, Ok(()))) => measured(
            repeat(scale, || Ok(device.time(|| on_device.run())?.1)),
            Ok(()),
        ),
    }
}

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

fn print_table(report: &Report) {
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
    for row in &report.rows {
        for (column, m) in [
            ("CPU 1 thread", Some(&row.single_thread)),
            ("CPU all cores", Some(&row.executor)),
            ("GPU", row.gpu.as_ref()),
            ("CUDA C", row.cuda_c.as_ref()),
        ] {
            if let Some(failure) = m.and_then(|m| m.failure.as_ref()) {
                println!("{} ({column}): {failure}", row.workload);
            }
        }
    }
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
