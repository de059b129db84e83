//! How the main job measures a cell: every result checked against the workload's reference
//! first, then the median of repeated runs.

use ferrocuda::workloads::cublas::Cublas;
use ferrocuda::workloads::{DeviceRun, Scale, Verdict, Workload};
use ferrocuda::{Module, Result};
use serde::Serialize;
use std::fmt::Display;
use std::time::{Duration, Instant};

/// One cell: the median time and how it was obtained, or why there is none.
#[derive(Serialize, Clone)]
pub(super) struct Measured {
    /// Median seconds per run; `None` if the run failed or its result was wrong.
    pub(super) seconds: Option<f64>,
    pub(super) runs: usize,
    /// `None` when verified; else what was wrong (a wrong result or an error).
    pub(super) failure: Option<String>,
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
fn repeat<E>(
    scale: Scale,
    mut timed: impl FnMut() -> std::result::Result<Duration, E>,
) -> std::result::Result<(Duration, usize), E> {
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

fn measured(
    result: std::result::Result<(Duration, usize), impl Display>,
    verdict: Verdict,
) -> Measured {
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

pub(super) fn measure_loop(workload: &mut dyn Workload, scale: Scale) -> Measured {
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
    measured(result.map_err(|e: ferrocuda::Error| e), verdict)
}

/// Runs `workload` once on the PTX emulator and checks the result, without timing it: a cell
/// with no seconds and no failure when it was right.
pub(super) fn verify_device(workload: &dyn Workload, kernels: &Module) -> Measured {
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
        Ok(Err(wrong)) => measured(Ok::<_, String>((Duration::ZERO, 0)), Err(wrong)),
        Err(error) => measured(Err(error), Ok(())),
    }
}

pub(super) fn measure_device(workload: &dyn Workload, kernels: &Module, scale: Scale) -> Measured {
    let device = kernels.device();
    let verified = (|| -> Result<(Box<dyn DeviceRun + '_>, Verdict)> {
        let mut on_device = workload.on_device(kernels)?;
        on_device.run()?;
        let verdict = on_device.check()?;
        Ok((on_device, verdict))
    })();
    match verified {
        Err(error) => measured(Err(error), Ok(())),
        Ok((_, Err(wrong))) => measured(Ok::<_, String>((Duration::ZERO, 0)), Err(wrong)),
        Ok((mut on_device, Ok(()))) => measured(
            repeat(scale, || -> Result<Duration> {
                Ok(device.time(|| on_device.run())?.1)
            }),
            Ok(()),
        ),
    }
}

/// cuBLAS's product of `gemm`'s inputs, checked as ours is and timed on the same default stream
/// between the same kind of events.
pub(super) fn measure_cublas(
    gemm: &dyn ferrocuda::workloads::cublas::Gemm,
    cublas: &Cublas,
    scale: Scale,
) -> Measured {
    let verified = (|| -> std::result::Result<_, String> {
        let mut product = gemm.product(cublas)?;
        product.run()?;
        let verdict = gemm.check(&product.result()?);
        Ok((product, verdict))
    })();
    match verified {
        Err(error) => measured(Err(error), Ok(())),
        Ok((_, Err(wrong))) => measured(Ok::<_, String>((Duration::ZERO, 0)), Err(wrong)),
        Ok((mut product, Ok(()))) => measured(repeat(scale, || product.time()), Ok(())),
    }
}
