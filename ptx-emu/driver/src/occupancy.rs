//! Occupancy as the CUDA occupancy calculator models it for sm_90: blocks per SM limited by
//! threads, blocks, registers (allocated per warp, 256 at a time) and shared memory.

use crate::device::{
    MAX_BLOCKS_PER_SM, MAX_THREADS_PER_SM, REGISTERS_PER_SM, SHARED_PER_SM, SM_COUNT,
};
use crate::ffi::{guard, id_of, put};
use crate::module::registers;
use crate::state::DRIVER;
use cudarc::driver::sys::{CUfunction, CUoccupancyB2DSize, CUresult};
use std::ffi::{c_int, c_uint};

/// Shared memory the driver reserves per block on sm_90.
const RESERVED_SHARED_PER_BLOCK: u32 = 1024;

/// A kernel's resources, as occupancy needs them.
#[derive(Clone, Copy)]
pub(crate) struct Resources {
    pub registers: u32,
    pub static_shared: u32,
    pub max_threads: u32,
}

/// Blocks of `block_size` threads (and `dynamic_shared` bytes) that fit on one SM at once.
pub(crate) fn blocks_per_sm(r: Resources, block_size: u32, dynamic_shared: u32) -> u32 {
    if block_size == 0 || block_size > r.max_threads {
        return 0;
    }
    let warps = block_size.div_ceil(32);
    let by_threads = MAX_THREADS_PER_SM as u32 / (warps * 32);
    let registers_per_warp = (r.registers.max(1) * 32).div_ceil(256) * 256;
    let by_registers = (REGISTERS_PER_SM as u32 / registers_per_warp) / warps;
    let shared = r.static_shared + dynamic_shared + RESERVED_SHARED_PER_BLOCK;
    let by_shared = SHARED_PER_SM as u32 / shared;
    (MAX_BLOCKS_PER_SM as u32)
        .min(by_threads)
        .min(by_registers)
        .min(by_shared)
}

fn resources(f: CUfunction) -> Result<Resources, CUresult> {
    let mut state = DRIVER.state()?;
    let function = state
        .functions
        .get(&id_of(f))
        .ok_or(CUresult::CUDA_ERROR_INVALID_HANDLE)?;
    let r = Resources {
        registers: registers(function),
        static_shared: function.info.static_shared_bytes,
        max_threads: function.info.max_threads_per_block.min(1024),
    };
    let context = function.context;
    state.usable(context)?;
    Ok(r)
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSize(
    minGridSize: *mut c_int,
    blockSize: *mut c_int,
    func: CUfunction,
    blockSizeToDynamicSMemSize: CUoccupancyB2DSize,
    dynamicSMemSize: usize,
    blockSizeLimit: c_int,
) -> CUresult {
    guard("cuOccupancyMaxPotentialBlockSize", || {
        let r = resources(func)?;
        let limit = match u32::try_from(blockSizeLimit) {
            Ok(0) | Err(_) => r.max_threads,
            Ok(limit) => limit.min(r.max_threads),
        };
        // The largest block size with the most resident threads, as the driver picks it.
        let mut best = (0u32, 0u32, 0u32); // (threads per SM, block size, blocks per SM)
        let mut size = limit / 32 * 32;
        while size >= 32 {
            let dynamic = match blockSizeToDynamicSMemSize {
                // SAFETY: the caller's callback takes a block size and returns bytes (driver
                // API contract).
                Some(f) => unsafe { f(size as c_int) },
                None => dynamicSMemSize,
            };
            let blocks = blocks_per_sm(r, size, u32::try_from(dynamic).unwrap_or(u32::MAX));
            if blocks * size > best.0 {
                best = (blocks * size, size, blocks);
            }
            size -= 32;
        }
        if best.1 == 0 {
            return Err(CUresult::CUDA_ERROR_INVALID_VALUE);
        }
        // SAFETY: the caller's pointers are valid for one write each (driver API contract).
        unsafe {
            put(minGridSize, (best.2 * SM_COUNT as u32) as c_int)?;
            put(blockSize, best.1 as c_int)
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxPotentialBlockSizeWithFlags(
    minGridSize: *mut c_int,
    blockSize: *mut c_int,
    func: CUfunction,
    blockSizeToDynamicSMemSize: CUoccupancyB2DSize,
    dynamicSMemSize: usize,
    blockSizeLimit: c_int,
    _flags: c_uint,
) -> CUresult {
    // The only flag disables caching hints the model does not have.
    // SAFETY: the same contract as cuOccupancyMaxPotentialBlockSize.
    unsafe {
        cuOccupancyMaxPotentialBlockSize(
            minGridSize,
            blockSize,
            func,
            blockSizeToDynamicSMemSize,
            dynamicSMemSize,
            blockSizeLimit,
        )
    }
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
    numBlocks: *mut c_int,
    func: CUfunction,
    blockSize: c_int,
    dynamicSMemSize: usize,
) -> CUresult {
    guard("cuOccupancyMaxActiveBlocksPerMultiprocessor", || {
        let r = resources(func)?;
        let size = u32::try_from(blockSize).map_err(|_| CUresult::CUDA_ERROR_INVALID_VALUE)?;
        let blocks = blocks_per_sm(r, size, u32::try_from(dynamicSMemSize).unwrap_or(u32::MAX));
        // SAFETY: the caller's pointer is valid for one write (driver API contract).
        unsafe { put(numBlocks, blocks as c_int) }
    })
}

#[no_mangle]
pub unsafe extern "C" fn cuOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(
    numBlocks: *mut c_int,
    func: CUfunction,
    blockSize: c_int,
    dynamicSMemSize: usize,
    _flags: c_uint,
) -> CUresult {
    // SAFETY: the same contract as cuOccupancyMaxActiveBlocksPerMultiprocessor.
    unsafe {
        cuOccupancyMaxActiveBlocksPerMultiprocessor(numBlocks, func, blockSize, dynamicSMemSize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn occupancy_is_limited_by_threads_registers_and_shared_memory() {
        let light = Resources {
            registers: 16,
            static_shared: 0,
            max_threads: 1024,
        };
        // 2048 threads per SM: two blocks of 1024, eight of 256; at most 32 blocks.
        assert_eq!(blocks_per_sm(light, 1024, 0), 2);
        assert_eq!(blocks_per_sm(light, 256, 0), 8);
        assert_eq!(blocks_per_sm(light, 32, 0), 32);
        // 128 registers: 4096 per warp, 16 warps per SM, so one block of 512.
        let heavy = Resources {
            registers: 128,
            ..light
        };
        assert_eq!(blocks_per_sm(heavy, 512, 0), 1);
        assert_eq!(blocks_per_sm(heavy, 1024, 0), 0);
        // 100 KiB of shared memory per block (plus 1 KiB reserved): two fit in 228 KiB.
        assert_eq!(blocks_per_sm(light, 128, 100 * 1024), 2);
        assert_eq!(
            blocks_per_sm(
                Resources {
                    max_threads: 128,
                    ..light
                },
                256,
                0
            ),
            0
        );
    }
}
