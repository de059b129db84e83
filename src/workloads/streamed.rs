//! The main job's streamed row: Black-Scholes over more options than a device memory limit holds
//! at once (the seed's section 3.2). One launch over all of them where they fit (without the
//! limit) against [`ops::Pipeline`] under it: host-to-host time and peak device memory of
//! each, the pipeline's copy and kernel spans per stream, and on a GPU the host↔device bandwidth
//! it achieved as a share of what a page-locked copy measures.

use super::finance::{BlackScholes, RATE, VOLATILITY};
use super::inputs::Verdict;
use super::workload::Scale;
use crate::kernels::finance::black_scholes as black_scholes_kernel;
use crate::ops::{Chunk, Pipeline, Timeline};
use crate::{launch, Device, Error, Event, Module, Result};
use std::time::{Duration, Instant};

/// Bytes per option crossing between host and device: three inputs and two outputs of f32.
const BYTES_PER_OPTION: usize = 20;

/// Options and the device memory limit of each scale: the options need 3 (full, quick) or 5
/// (tiny) times the limit.
pub fn streamed_size(scale: Scale) -> (usize, usize) {
    scale.pick((10_000_000, 64 << 20), (1 << 20, 6 << 20), (4099, 16 << 10))
}

/// One way of running it: host-to-host time and the device's high-water mark.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamedRun {
    /// Seconds from host inputs to host outputs.
    pub seconds: f64,
    /// Peak device memory, bytes.
    pub peak_bytes: usize,
}

/// The streamed row.
#[derive(Clone, Debug)]
pub struct Streamed {
    /// Options priced.
    pub options: usize,
    /// The device memory limit the pipeline ran under, bytes.
    pub limit: usize,
    /// What one launch over all options said under the limit (an out-of-memory error).
    pub one_shot_under_limit: String,
    /// One launch over all options without the limit: uploads, kernel, downloads.
    pub one_shot: StreamedRun,
    /// The pipeline under the limit.
    pub pipelined: StreamedRun,
    /// Its chunks and spans.
    pub timeline: Timeline,
    /// The pipeline's device time over the sum of its copy and kernel spans (below 1: they
    /// overlapped); on a GPU only (elsewhere work runs when it is queued).
    pub overlap: Option<f64>,
    /// Host↔device bandwidth of page-locked copies measured here (bytes/s, mean of both
    /// directions); on a GPU only.
    pub pinned_bandwidth: Option<f64>,
    /// The pipeline's bytes moved per second over [`Streamed::pinned_bandwidth`].
    pub bandwidth_share: Option<f64>,
    /// The pipeline's prices against the one launch's (bit for bit) and the f64 reference.
    pub verdict: Verdict,
}

/// Runs the streamed row on `kernels`' device.
///
/// # Errors
/// Allocation, copy and launch errors (not the expected out-of-memory of the one launch under
/// the limit).
pub fn run_streamed(kernels: &Module, scale: Scale) -> Result<Streamed> {
    let (options, limit) = streamed_size(scale);
    let data = BlackScholes::with_options(options);
    let device = kernels.device();

    let capped = device.with_memory_limit(Some(limit));
    let one_shot_under_limit = match one_shot(&capped.load(kernels.ptx())?, &data) {
        Err(error @ Error::OutOfMemory { .. }) => error.to_string(),
        Err(other) => return Err(other),
        Ok(_) => format!("{options} options fitted under {limit} bytes"),
    };

    let free = device.with_memory_limit(None);
    let (one_shot_prices, one_shot) = one_shot(&free.load(kernels.ptx())?, &data)?;

    let capped_kernels = capped.load(kernels.ptx())?;
    capped.reset_peak_memory();
    let (mut call, mut put) = (vec![0.0f32; options], vec![0.0f32; options]);
    let start = Instant::now();
    let timeline = Pipeline::new(&capped_kernels).timeline(true).run(
        &[&data.spot, &data.strike, &data.years],
        &mut [&mut call, &mut put],
        price_chunk,
    )?;
    let pipelined = StreamedRun {
        seconds: start.elapsed().as_secs_f64(),
        peak_bytes: capped.peak_memory(),
    };

    let verdict = if (&call, &put) != (&one_shot_prices.0, &one_shot_prices.1) {
        Err("the pipeline's prices differ from one launch's".into())
    } else {
        data.check(&call, &put)
    };
    let real_gpu = device.is_gpu() && !device.properties().is_emulator();
    let (busy, elapsed) = timeline.busy_and_elapsed();
    let overlap = (real_gpu && !busy.is_zero()).then(|| elapsed.as_secs_f64() / busy.as_secs_f64());
    let pinned_bandwidth = match real_gpu {
        true => Some(pinned_bandwidth(device, scale)?),
        false => None,
    };
    let moved = (BYTES_PER_OPTION * options) as f64;
    Ok(Streamed {
        options,
        limit,
        one_shot_under_limit,
        one_shot,
        bandwidth_share: pinned_bandwidth.map(|b| moved / pipelined.seconds / b),
        pipelined,
        timeline,
        overlap,
        pinned_bandwidth,
        verdict,
    })
}

/// Calls and puts.
type Prices = (Vec<f32>, Vec<f32>);

/// The pipeline's body: Black-Scholes over one chunk, with the kernels of the chunk's device.
fn price_chunk(chunk: Chunk<'_, f32>) -> Result<()> {
    let blocks = chunk.len().div_ceil(256);
    let [s, k, t] = chunk.inputs else {
        unreachable!("three inputs")
    };
    let [c, p] = chunk.outputs else {
        unreachable!("two outputs")
    };
    launch!(
        chunk.kernels,
        black_scholes_kernel[blocks, 256, chunk.stream](s, k, t, RATE, VOLATILITY, c, p)
    )
}

/// Uploads the inputs, launches once over all options, copies the prices back.
fn one_shot(kernels: &Module, data: &BlackScholes) -> Result<(Prices, StreamedRun)> {
    let device = kernels.device();
    device.reset_peak_memory();
    let n = data.spot.len();
    let start = Instant::now();
    let spot = device.upload(&data.spot)?;
    let strike = device.upload(&data.strike)?;
    let years = device.upload(&data.years)?;
    let mut call = device.alloc_zeroed::<f32>(n)?;
    let mut put = device.alloc_zeroed::<f32>(n)?;
    let blocks = n.div_ceil(256);
    launch!(
        kernels,
        black_scholes_kernel[blocks, 256](&spot, &strike, &years, RATE, VOLATILITY, &mut call, &mut put)
    )?;
    let prices = (call.to_vec()?, put.to_vec()?);
    let run = StreamedRun {
        seconds: start.elapsed().as_secs_f64(),
        peak_bytes: device.peak_memory(),
    };
    Ok((prices, run))
}

/// Bytes per second of page-locked copies to and from the device (the median of five of each
/// direction, timed by events), averaged.
fn pinned_bandwidth(device: &Device, scale: Scale) -> Result<f64> {
    let words = scale.pick(64 << 20, 16 << 20, 1 << 16);
    let stream = device.new_stream()?;
    let mut on_device = device.alloc_zeroed::<u32>(words)?;
    let mut host = Some(device.alloc_pinned::<u32>(words)?);
    let (mut start, mut end) = (device.new_event()?, device.new_event()?);
    let mut per_direction = [Vec::new(), Vec::new()];
    for _ in 0..5 {
        for (direction, times) in per_direction.iter_mut().enumerate() {
            let buffer = host.take().expect("the buffer is back after each copy");
            stream.record(&mut start)?;
            let pending = match direction {
                0 => stream.upload_async(buffer, &mut on_device)?,
                _ => stream.download_async(&on_device, buffer)?,
            };
            stream.record(&mut end)?;
            host = Some(pending.wait()?);
            times.push(Event::elapsed(&start, &end)?);
        }
    }
    let rate = |times: &mut Vec<Duration>| {
        times.sort();
        (4 * words) as f64 / times[times.len() / 2].as_secs_f64()
    };
    let [up, down] = &mut per_direction;
    Ok((rate(up) + rate(down)) / 2.0)
}

/// One pipelined run of [`StreamedDevices`].
#[derive(Clone, Debug)]
pub struct SpreadRun {
    /// Devices the chunks were spread over.
    pub devices: usize,
    /// Seconds from host inputs to host outputs (a GPU's only mean something).
    pub seconds: f64,
    /// Its chunks, and each device's chunks and copies ([`Timeline::per_device`]).
    pub timeline: Timeline,
}

/// The streamed row's pipeline on one GPU and spread over several (`ops::Pipeline::across`):
/// the same options, each device under the row's memory limit.
#[derive(Clone, Debug)]
pub struct StreamedDevices {
    /// Options priced.
    pub options: usize,
    /// The memory limit of each device, bytes.
    pub limit: usize,
    /// On the first GPU alone, then on all of them.
    pub runs: Vec<SpreadRun>,
    /// The spread prices against one GPU's (bit for bit) and the f64 reference.
    pub verdict: Verdict,
}

/// Runs the streamed row's pipeline on the first of `gpus` (the same kernels loaded on each
/// GPU), then over all of them.
///
/// # Errors
/// [`Error::InvalidInput`] for fewer than two modules; allocation, copy and launch errors.
pub fn run_streamed_devices(gpus: &[Module], scale: Scale) -> Result<StreamedDevices> {
    if gpus.len() < 2 {
        return Err(Error::InvalidInput {
            op: "run_streamed_devices",
            detail: format!("{} GPU given; the comparison needs two or more", gpus.len()),
        });
    }
    let (options, limit) = streamed_size(scale);
    let data = BlackScholes::with_options(options);
    let capped = gpus
        .iter()
        .map(|k| k.device().with_memory_limit(Some(limit)).load(k.ptx()))
        .collect::<Result<Vec<_>>>()?;
    let mut runs = Vec::new();
    let mut prices: Vec<Prices> = Vec::new();
    for devices in [1, capped.len()] {
        let (mut call, mut put) = (vec![0.0f32; options], vec![0.0f32; options]);
        let start = Instant::now();
        let timeline = Pipeline::across(&capped[..devices]).run(
            &[&data.spot, &data.strike, &data.years],
            &mut [&mut call, &mut put],
            price_chunk,
        )?;
        runs.push(SpreadRun {
            devices,
            seconds: start.elapsed().as_secs_f64(),
            timeline,
        });
        prices.push((call, put));
    }
    let verdict = match &prices[..] {
        [alone, spread] if alone != spread => Err(format!(
            "the prices on {} GPUs differ from one GPU's",
            capped.len()
        )),
        [_, (call, put)] => data.check(call, put),
        _ => unreachable!("two runs"),
    };
    Ok(StreamedDevices {
        options,
        limit,
        runs,
        verdict,
    })
}
