//! `ferrocuda doctor`: the driver, each GPU, the embedded PTX, the kernel toolchain, and a verdict,
//! each with ✓ or ✗ and the fix for every ✗. `--json` prints the same [`Report`] as JSON.
//!
//! Every fact comes from the library's API (`DriverInfo`, `Device::properties`,
//! `Device::memory_info`, `Device::check_ptx`, `KERNEL_BUILD`), so a program can ask the same.

use ferrocuda::ptx::version_text;
use ferrocuda::{Device, DriverInfo, Error, PtxCheck, DEVICE_ENV, KERNELS, KERNEL_BUILD};
use serde::Serialize;
use std::process::ExitCode;

mod text;

/// Prints the report (text or JSON). Exit code 1 only when the device kernels would run on
/// cannot load them.
pub fn main(json: bool) -> ExitCode {
    let report = Report::gather();
    if json {
        match serde_json::to_string_pretty(&report) {
            Ok(text) => println!("{text}"),
            Err(e) => {
                eprintln!("error: cannot write the report as JSON: {e}");
                return ExitCode::FAILURE;
            }
        }
    } else {
        print!("{}", report.text());
    }
    if report.verdict.kernels_run {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Everything doctor found.
#[derive(Serialize)]
pub struct Report {
    /// The NVIDIA driver.
    pub driver: DriverReport,
    /// Each GPU the driver reports.
    pub gpus: Vec<GpuReport>,
    /// Why there are no GPUs to list although the driver is there.
    pub gpus_problem: Option<Problem>,
    /// The CPU executor, always available.
    pub cpu: CpuReport,
    /// The PTX `build.rs` embedded, and what each GPU makes of it.
    pub ptx: PtxReport,
    /// The kernel toolchain of this build.
    pub toolchain: ToolchainReport,
    /// Where kernels will run.
    pub verdict: Verdict,
}

/// Something that does not work, and what to do.
#[derive(Serialize)]
pub struct Problem {
    /// What is wrong.
    pub error: String,
    /// How to fix it.
    pub fix: String,
}

/// The NVIDIA driver (`libcuda`).
#[derive(Serialize)]
pub struct DriverReport {
    /// Whether `libcuda` loaded.
    pub found: bool,
    /// The file it was loaded from, when the system tells.
    pub library: Option<String>,
    /// The library names tried, in order.
    pub tried: Vec<String>,
    /// The newest CUDA version it supports, e.g. "13.0".
    pub cuda_version: Option<String>,
    /// Why it cannot be used.
    pub problem: Option<Problem>,
}

/// One GPU.
#[derive(Serialize)]
pub struct GpuReport {
    /// The driver's device number.
    pub ordinal: usize,
    /// What it is, if it could be opened.
    pub facts: Option<GpuFacts>,
    /// Why it cannot be used.
    pub problem: Option<Problem>,
}

/// Properties and memory of a GPU.
#[derive(Serialize)]
pub struct GpuFacts {
    /// e.g. "NVIDIA H200".
    pub name: String,
    /// Whether it is the PTX emulator (ptx-emu/driver), not hardware.
    pub emulated: bool,
    /// e.g. "9.0".
    pub compute_capability: String,
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Free device memory, bytes.
    pub memory_free_bytes: Option<usize>,
    /// All device memory, bytes.
    pub memory_total_bytes: Option<usize>,
    /// Most threads in one block.
    pub max_threads_per_block: u32,
    /// Most shared memory one block may have (without opting in to more), bytes.
    pub max_shared_memory_per_block_bytes: u32,
}

/// The CPU executor.
#[derive(Serialize)]
pub struct CpuReport {
    /// e.g. "CPU executor (16 threads)".
    pub name: String,
    /// Worker threads.
    pub threads: u32,
    /// The host's available memory, bytes.
    pub memory_available_bytes: Option<usize>,
    /// The host's memory, bytes.
    pub memory_total_bytes: Option<usize>,
    /// Why the memory is unknown.
    pub memory_problem: Option<String>,
}

/// The embedded PTX.
#[derive(Serialize)]
pub struct PtxReport {
    /// The module's name.
    pub module: String,
    /// `.version`, e.g. "6.0".
    pub isa_version: String,
    /// `.target`, e.g. "sm_70".
    pub target: Option<String>,
    /// Its kernels (`.entry`).
    pub kernels: Vec<String>,
    /// The oldest CUDA version whose driver knows the ISA version.
    pub needs_cuda: String,
    /// The oldest GPU it runs on, e.g. "7.0".
    pub needs_compute_capability: String,
    /// What each usable GPU makes of it.
    pub on_gpus: Vec<PtxOnGpu>,
}

/// The PTX on one GPU.
#[derive(Serialize)]
pub struct PtxOnGpu {
    /// The GPU.
    pub ordinal: usize,
    /// Whether the driver's CUDA version knows the PTX ISA version (null: unknown).
    pub driver_new_enough: Option<bool>,
    /// Whether the GPU is at least the PTX's target (null: unknown).
    pub gpu_new_enough: Option<bool>,
    /// Whether the driver actually loaded (JIT-compiled) it.
    pub loaded: bool,
    /// The JIT's info log when it loaded.
    pub jit_info_log: Option<String>,
    /// Why it did not load (the error includes the JIT's error log).
    pub problem: Option<Problem>,
}

/// The kernel toolchain of this build.
#[derive(Serialize)]
pub struct ToolchainReport {
    /// The rustc that compiled the kernels.
    pub rustc: String,
    /// Its version line.
    pub rustc_version: String,
    /// How ferrocuda-builder found it.
    pub found_by: String,
    /// The architecture the PTX was built for.
    pub arch: String,
    /// Whether ptxas checked the PTX at build time.
    pub ptxas_checked: bool,
    /// That ptxas's CUDA release.
    pub ptxas_version: Option<String>,
    /// Its path.
    pub ptxas_path: Option<String>,
    /// What to do without ptxas.
    pub problem: Option<Problem>,
}

/// Where kernels will run.
#[derive(Serialize)]
pub struct Verdict {
    /// The device `Device::best()` picks.
    pub device: String,
    /// Whether that is a GPU.
    pub on_gpu: bool,
    /// Whether that GPU is the PTX emulator.
    pub emulated: bool,
    /// Whether kernels can run there (false only when the GPU picked cannot load the PTX).
    pub kernels_run: bool,
    /// One line: "kernels will run on ..." or "kernels will run on the CPU because ...".
    pub message: String,
    /// What to do when kernels cannot run.
    pub fix: Option<String>,
}

const NO_DRIVER_FIX: &str = "install the NVIDIA driver for your GPU (Debian/Ubuntu: `sudo \
    apt-get install nvidia-driver` or `sudo ubuntu-drivers install`; else from nvidia.com); no \
    CUDA toolkit is needed. If it is installed, put the folder holding libcuda.so.1 on \
    LD_LIBRARY_PATH; in a container, start it with the GPU passed in (`--gpus all`). Until then \
    kernels run on the CPU executor";

const NO_GPU_FIX: &str = "check that `nvidia-smi` lists the GPU; CUDA_VISIBLE_DEVICES may hide \
    it; in a container, start it with the GPU passed in (`--gpus all`)";

impl Report {
    /// Asks the driver, each GPU, the CPU executor and the build what they are.
    pub fn gather() -> Report {
        let driver = driver_report();
        let mut gpus = Vec::new();
        let mut gpus_problem = None;
        let mut devices = Vec::new();
        if driver.found {
            match Device::gpu_count() {
                Ok(0) => {
                    gpus_problem = Some(Problem {
                        error: "the driver reports no CUDA GPU".into(),
                        fix: NO_GPU_FIX.into(),
                    })
                }
                Ok(count) => {
                    for ordinal in 0..count {
                        let (report, device) = gpu_report(ordinal);
                        gpus.push(report);
                        devices.extend(device);
                    }
                }
                Err(error) => {
                    gpus_problem = Some(Problem {
                        error: error.to_string(),
                        fix: NO_GPU_FIX.into(),
                    })
                }
            }
        }
        let checks: Vec<(usize, PtxCheck)> = devices
            .iter()
            .map(|(ordinal, device)| (*ordinal, device.check_ptx(&KERNELS)))
            .collect();
        let ptx = ptx_report(&checks);
        let verdict = verdict(&driver, &checks);
        Report {
            driver,
            gpus,
            gpus_problem,
            cpu: cpu_report(),
            ptx,
            toolchain: toolchain_report(),
            verdict,
        }
    }
}

fn driver_report() -> DriverReport {
    let tried = DriverInfo::library_candidates();
    match DriverInfo::query() {
        Ok(info) => DriverReport {
            found: true,
            library: info.library.map(|p| p.display().to_string()),
            tried,
            cuda_version: Some(version_text(Some(info.cuda_version))),
            problem: None,
        },
        Err(error) => {
            let no_driver = matches!(error, Error::NoDriver { .. });
            DriverReport {
                found: !no_driver,
                library: None,
                cuda_version: None,
                problem: Some(Problem {
                    error: match &error {
                        Error::NoDriver { detail } => format!("no NVIDIA driver: {detail}"),
                        other => other.to_string(),
                    },
                    fix: if no_driver {
                        NO_DRIVER_FIX.into()
                    } else {
                        "reinstall the NVIDIA driver; `nvidia-smi` should list the GPU".into()
                    },
                }),
                tried,
            }
        }
    }
}

/// GPU `ordinal`'s report, and the device if it can be used.
fn gpu_report(ordinal: usize) -> (GpuReport, Option<(usize, Device)>) {
    match Device::cuda(ordinal) {
        Ok(device) => {
            let p = device.properties();
            let memory = device.memory_info().ok();
            let (major, minor) = p.compute_capability.unwrap_or((0, 0));
            let facts = GpuFacts {
                name: p.name.clone(),
                emulated: p.is_emulator(),
                compute_capability: format!("{major}.{minor}"),
                sm_count: p.multiprocessors,
                memory_free_bytes: memory.map(|(free, _)| free),
                memory_total_bytes: memory.map(|(_, total)| total),
                max_threads_per_block: p.max_threads_per_block,
                max_shared_memory_per_block_bytes: p.max_shared_memory_per_block,
            };
            let report = GpuReport {
                ordinal,
                facts: Some(facts),
                problem: None,
            };
            (report, Some((ordinal, device)))
        }
        Err(error) => (
            GpuReport {
                ordinal,
                facts: None,
                problem: Some(Problem {
                    error: error.to_string(),
                    fix: format!(
                        "{NO_GPU_FIX}; another process may hold the GPU in exclusive mode \
                         (`nvidia-smi -q -d COMPUTE`)"
                    ),
                }),
            },
            None,
        ),
    }
}

fn cpu_report() -> CpuReport {
    let cpu = Device::cpu();
    let memory = cpu.memory_info();
    CpuReport {
        name: cpu.to_string(),
        threads: cpu.properties().multiprocessors,
        memory_available_bytes: memory.as_ref().ok().map(|(free, _)| *free),
        memory_total_bytes: memory.as_ref().ok().map(|(_, total)| *total),
        memory_problem: memory.err().map(|e| e.to_string()),
    }
}

fn ptx_report(checks: &[(usize, PtxCheck)]) -> PtxReport {
    let info = KERNELS.info();
    PtxReport {
        module: KERNELS.name().into(),
        isa_version: info.version_string(),
        target: info.target.clone(),
        kernels: info.entries.iter().map(|e| e.name.clone()).collect(),
        needs_cuda: version_text(info.min_cuda_version()),
        needs_compute_capability: version_text(info.target_compute_capability()),
        on_gpus: checks
            .iter()
            .map(|(ordinal, check)| {
                let (loaded, jit_info_log, problem) = match &check.load {
                    Some(Ok(log)) => (true, Some(log.clone()), None),
                    Some(Err(error)) => (
                        false,
                        None,
                        Some(Problem {
                            error: error.to_string(),
                            fix: "update the NVIDIA driver, or build the kernels for an older \
                                  GPU (`ferrocuda_builder::PtxBuilder::arch`); the CPU executor runs \
                                  them meanwhile (FERROCUDA_DEVICE=cpu)"
                                .into(),
                        }),
                    ),
                    None => (false, None, None),
                };
                PtxOnGpu {
                    ordinal: *ordinal,
                    driver_new_enough: check.driver_new_enough(),
                    gpu_new_enough: check.gpu_new_enough(),
                    loaded,
                    jit_info_log,
                    problem,
                }
            })
            .collect(),
    }
}

fn toolchain_report() -> ToolchainReport {
    let build = KERNEL_BUILD;
    ToolchainReport {
        rustc: build.rustc.into(),
        rustc_version: build.rustc_version.into(),
        found_by: build.toolchain_source.into(),
        arch: build.arch.into(),
        ptxas_checked: build.ptxas.is_some(),
        ptxas_version: build.ptxas.map(|p| p.version.into()),
        ptxas_path: build.ptxas.map(|p| p.path.into()),
        problem: build.ptxas.is_none().then(|| Problem {
            error: format!(
                "no ptxas checked the PTX at build time: invalid PTX would only show when a \
                 driver loads it ({})",
                ferrocuda::KERNELS_PTXAS_REPORT
                    .lines()
                    .next()
                    .unwrap_or("no report")
                    .trim_end_matches('.')
            ),
            fix: "run `make setup` (it installs ptxas from PyPI's nvidia-cuda-nvcc-cu12) or set \
                  FERROCUDA_PTXAS, then rebuild"
                .into(),
        }),
    }
}

/// Where kernels will run: the device `Device::best()` picks (honouring FERROCUDA_DEVICE), and
/// whether it loads the PTX.
fn verdict(driver: &DriverReport, checks: &[(usize, PtxCheck)]) -> Verdict {
    let choice = Device::best();
    let device = choice.device;
    if device.is_gpu() {
        let ordinal = match device.kind() {
            ferrocuda::DeviceKind::Cuda { ordinal } => ordinal,
            ferrocuda::DeviceKind::Cpu => 0,
        };
        let failed = checks
            .iter()
            .find(|(o, _)| *o == ordinal)
            .and_then(|(_, check)| check.load.as_ref())
            .and_then(|load| load.as_ref().err());
        let emulated = device.properties().is_emulator();
        return match failed {
            None => Verdict {
                message: if emulated {
                    format!("kernels will run on {device}, the PTX emulator (no GPU)")
                } else {
                    format!("kernels will run on {device}")
                },
                device: device.to_string(),
                on_gpu: true,
                emulated,
                kernels_run: true,
                fix: None,
            },
            Some(error) => Verdict {
                message: format!(
                    "kernels will not run: {device} is picked but cannot load the PTX ({error})"
                ),
                device: device.to_string(),
                on_gpu: true,
                emulated,
                kernels_run: false,
                fix: Some(format!(
                    "fix the PTX problem above, or run on the CPU executor meanwhile \
                     ({DEVICE_ENV}=cpu)"
                )),
            },
        };
    }
    let because = if std::env::var_os(DEVICE_ENV).is_some() {
        choice.reason
    } else if !driver.found {
        "there is no NVIDIA driver (libcuda could not be loaded)".into()
    } else {
        choice.reason
    };
    Verdict {
        message: format!("kernels will run on the CPU because {because}"),
        device: device.to_string(),
        on_gpu: false,
        emulated: false,
        kernels_run: true,
        fix: None,
    }
}
