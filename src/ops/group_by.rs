//! Group-by aggregation: per-key count, sum, min, max and mean of `(key, value)` rows.

use super::checks::check_len;
use super::launch::{grid_stride_blocks, THREADS_1D};
use crate::kernels::group_by::{
    group_by_finish, group_by_global, group_by_owned, group_by_owned_finish, group_by_shared,
    OWNED_STATE_PER_KEY, SHARED_BYTES_PER_KEY,
};
use crate::{launch, DeviceBuffer, Error, InputData, LaunchConfig, Module, Result};

/// Threads per block of [`group_by_shared`]: with its 33–36 registers (ptxas for sm_70–sm_90)
/// and up to 48 KiB of shared memory per block, 3 such blocks (1536 threads) fit an H100/H200
/// multiprocessor and 2 a V100's; blocks of 1024 threads would fit only one by registers.
const SHARED_THREADS: u32 = 512;

/// Blocks of [`group_by_shared`] per multiprocessor: each block adds every key it saw to the
/// global state once at its end, so the grid is kept to what runs at once (2 blocks of 48 KiB fit
/// any GPU from sm_70 on), not more.
const SHARED_BLOCKS_PER_SM: u32 = 2;

/// Per-key aggregates of rows `(key, value)` with keys in `0..num_keys`, from [`group_by`]: one
/// element per key in each buffer, on the device of the `kernels` that computed them (so that
/// further kernels, or a benchmark, can use them in place). `buffer.to_vec()` brings one to the
/// host; [`mean`](GroupStats::mean) computes the means there.
///
/// A key no row has: count 0, sum 0, min `+∞`, max `−∞`, mean NaN. NaN values are counted and
/// make their key's sum and mean NaN; min and max ignore them (as [`f32::min`]), and are `+∞` and
/// `−∞` for a key whose values are all NaN.
pub struct GroupStats {
    /// Rows per key.
    pub count: DeviceBuffer<u32>,
    /// Sum of each key's values. Accumulated in f32 by atomic additions whose order depends on
    /// scheduling: it may change in the last bits from run to run.
    pub sum: DeviceBuffer<f32>,
    /// Smallest value per key (exact).
    pub min: DeviceBuffer<f32>,
    /// Largest value per key (exact).
    pub max: DeviceBuffer<f32>,
}

impl std::fmt::Debug for GroupStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroupStats")
            .field("num_keys", &self.num_keys())
            .field("device", self.count.device())
            .finish_non_exhaustive()
    }
}

impl GroupStats {
    /// Number of keys, `num_keys` of the [`group_by`] call.
    pub fn num_keys(&self) -> usize {
        self.count.len()
    }

    /// `sum / count` per key, on the host (NaN for a key without rows).
    ///
    /// # Errors
    /// Copying `count` and `sum` from the device failed.
    pub fn mean(&self) -> Result<Vec<f32>> {
        let count = self.count.to_vec()?;
        let sum = self.sum.to_vec()?;
        Ok(sum
            .iter()
            .zip(&count)
            .map(|(&s, &n)| s / n as f32)
            .collect())
    }
}

/// The most keys [`group_by`] aggregates in shared memory on this device (3072 for the 48 KiB a
/// block gets without opting in, on every GPU and on the CPU executor); more keys use global
/// atomics. Past this, a block's private copy would not fit.
pub fn group_by_shared_max_keys(kernels: &Module) -> usize {
    kernels.device().properties().max_shared_memory_per_block as usize / SHARED_BYTES_PER_KEY
}

/// Count, sum, min and max of `values` per key, for rows `(keys[i], values[i])` with keys in
/// `0..num_keys`, returned as device buffers ([`GroupStats`]).
///
/// Up to [`group_by_shared_max_keys`] keys (3072), [`group_by_shared`] aggregates each block's
/// rows in shared memory and adds them to the result once per block; beyond, on a GPU,
/// [`group_by_global`] updates the result with device-wide atomics per row, and on the CPU
/// executor [`group_by_owned`] splits the keys between one block per worker thread, each
/// reading every row and updating its own keys with block-scope atomics (a device-scope atomic
/// is a locked instruction there, which serialises the cache misses of the updates).
/// [`group_by_finish`] then converts min and max to f32.
///
/// Every key must be below `num_keys`. A row whose key is not makes the call fail (after
/// the aggregation kernel, which counts such rows instead of touching memory out of range); the
/// error says how many rows and the largest key, and no [`GroupStats`] is returned.
///
/// ```
/// use ferrocuda::{ops, Device};
/// let kernels = Device::cpu().load(&ferrocuda::KERNELS)?;
/// let keys = [2u32, 0, 2, 2];
/// let values = [1.0f32, -5.0, 3.0, 2.0];
/// let stats = ops::group_by(&kernels, &keys, &values, 3)?;
/// assert_eq!(stats.count.to_vec()?, [1, 0, 3]);
/// assert_eq!(stats.sum.to_vec()?, [-5.0, 0.0, 6.0]);
/// assert_eq!(stats.min.to_vec()?, [-5.0, f32::INFINITY, 1.0]);
/// assert_eq!(stats.max.to_vec()?, [-5.0, f32::NEG_INFINITY, 3.0]);
/// assert_eq!(stats.mean()?[2], 2.0);
/// assert!(stats.mean()?[1].is_nan());
/// # Ok::<(), ferrocuda::Error>(())
/// ```
///
/// No rows is not an error: every key is then one without rows.
///
/// # Errors
/// [`Error::InvalidInput`] if `keys` and `values` differ in length, `num_keys` is 0, there are
/// more than `u32::MAX` rows (counts are u32), or a key is `≥ num_keys`; allocation and launch
/// errors.
pub fn group_by(
    kernels: &Module,
    keys: &(impl InputData<u32> + ?Sized),
    values: &(impl InputData<f32> + ?Sized),
    num_keys: usize,
) -> Result<GroupStats> {
    const OP: &str = "group_by";
    let rows = keys.len();
    check_len(
        OP,
        "values",
        values.len(),
        rows,
        "one value per key in keys",
    )?;
    if num_keys == 0 {
        return Err(Error::InvalidInput {
            op: OP,
            detail: "num_keys is 0: no key would be in range".into(),
        });
    }
    if u32::try_from(rows).is_err() {
        return Err(Error::InvalidInput {
            op: OP,
            detail: format!("{rows} rows: counts are u32, so at most {} rows", u32::MAX),
        });
    }
    let device = kernels.device();
    if rows > 0 && !device.is_gpu() && num_keys > group_by_shared_max_keys(kernels) {
        return by_owned_keys(kernels, keys, values, num_keys);
    }
    let mut count = device.alloc_zeroed::<u32>(num_keys)?;
    let mut sum = device.alloc_zeroed::<f32>(num_keys)?;
    let mut lowest = device.alloc_zeroed::<u32>(num_keys)?;
    let mut highest = device.alloc_zeroed::<u32>(num_keys)?;
    if rows > 0 {
        let mut rejected = device.alloc_zeroed::<u64>(2)?;
        let args = (
            keys,
            values,
            &mut count,
            &mut sum,
            &mut lowest,
            &mut highest,
            &mut rejected,
        );
        if num_keys <= group_by_shared_max_keys(kernels) {
            let most = device.properties().multiprocessors.max(1) * SHARED_BLOCKS_PER_SM;
            let blocks = most.min(rows.div_ceil(SHARED_THREADS as usize) as u32);
            let bytes = (num_keys * SHARED_BYTES_PER_KEY) as u32;
            let config = LaunchConfig::new(blocks, SHARED_THREADS).with_shared_mem_bytes(bytes);
            kernels.launch(&group_by_shared, config, args)?;
        } else {
            let blocks = grid_stride_blocks(kernels, rows, THREADS_1D);
            kernels.launch(
                &group_by_global,
                LaunchConfig::new(blocks, THREADS_1D),
                args,
            )?;
        }
        check_rejected(&rejected, rows, num_keys)?;
    }
    let mut min = device.alloc_zeroed::<f32>(num_keys)?;
    let mut max = device.alloc_zeroed::<f32>(num_keys)?;
    let blocks = grid_stride_blocks(kernels, num_keys, THREADS_1D);
    launch!(kernels, group_by_finish[blocks, THREADS_1D](&lowest, &highest, &mut min, &mut max))?;
    Ok(GroupStats {
        count,
        sum,
        min,
        max,
    })
}

/// [`group_by`] on the CPU executor for more keys than shared memory holds: [`group_by_owned`]
/// with one block per worker thread (each block reads every row, so more blocks would read them
/// more often), then [`group_by_owned_finish`].
fn by_owned_keys(
    kernels: &Module,
    keys: &(impl InputData<u32> + ?Sized),
    values: &(impl InputData<f32> + ?Sized),
    num_keys: usize,
) -> Result<GroupStats> {
    let device = kernels.device();
    let mut state = device.alloc_zeroed::<u32>(num_keys * OWNED_STATE_PER_KEY)?;
    let mut rejected = device.alloc_zeroed::<u64>(2)?;
    let blocks = device.properties().multiprocessors.max(1);
    launch!(kernels, group_by_owned[blocks, THREADS_1D](keys, values, &mut state, &mut rejected))?;
    check_rejected(&rejected, keys.len(), num_keys)?;
    let mut count = device.alloc_zeroed::<u32>(num_keys)?;
    let mut sum = device.alloc_zeroed::<f32>(num_keys)?;
    let mut min = device.alloc_zeroed::<f32>(num_keys)?;
    let mut max = device.alloc_zeroed::<f32>(num_keys)?;
    let blocks = grid_stride_blocks(kernels, num_keys, THREADS_1D);
    launch!(
        kernels,
        group_by_owned_finish[blocks, THREADS_1D](&state, &mut count, &mut sum, &mut min, &mut max)
    )?;
    Ok(GroupStats {
        count,
        sum,
        min,
        max,
    })
}

/// The error for rows whose key is out of range, from the aggregation's `rejected` (`[rows,
/// largest key]`).
fn check_rejected(rejected: &DeviceBuffer<u64>, rows: usize, num_keys: usize) -> Result<()> {
    let [bad_rows, largest]: [u64; 2] = rejected
        .to_vec()?
        .try_into()
        .expect("rejected has 2 elements");
    if bad_rows > 0 {
        return Err(Error::InvalidInput {
            op: "group_by",
            detail: format!(
                "{bad_rows} of {rows} rows have a key ≥ num_keys = {num_keys} (the largest is \
                 {largest}); no result is returned"
            ),
        });
    }
    Ok(())
}
