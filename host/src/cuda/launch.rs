//! A launch on a GPU: host arguments staged into device memory, every PTX parameter packed,
//! `cuLaunchKernel` (or its cooperative form), and host outputs copied back.

use super::gpu::GpuDevice;
use super::memory::GpuBytes;
use super::modules::{check_function_limits, LoadedModule};
use crate::args::{Arg, ParamSlot};
use crate::error::Result;
use crate::launch_config::LaunchConfig;
use crate::stream::Stream;
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, DeviceRepr, PushKernelArg};

/// A buffer a kernel writes, and where the view it gets starts in it (bytes).
type WrittenView<'a> = (&'a mut Option<CudaSlice<u8>>, usize);

// SAFETY: a `ParamSlot` is plain bytes; `cuLaunchKernel` reads the parameter's declared size
// from the slot's start, and `check_abi` made sure the slot holds that many bytes.
unsafe impl DeviceRepr for ParamSlot {}

impl GpuDevice {
    /// Launches `kernel`: copies host arguments in, packs every PTX parameter, launches
    /// (`cuLaunchCooperativeKernel` if `cooperative`), and copies host outputs back (waiting for
    /// the kernel) only if it succeeded. A cooperative launch is waited for: its last argument
    /// is its grid barrier, which the caller frees after.
    pub(crate) fn launch(
        &self,
        module: &LoadedModule,
        kernel: &'static str,
        config: &LaunchConfig,
        mut args: Vec<Arg<'_>>,
        cooperative: bool,
    ) -> Result<()> {
        let g = self.context();
        if let Some(stream) = config.stream {
            self.check_stream_device(stream)?;
        }
        let (stream, trail) = match config.stream.and_then(Stream::cuda) {
            Some((_, context, _)) if context != g.id => return Err(self.stream_lost()),
            Some((stream, _, trail)) => (stream, trail),
            None => (&g.stream, &*g.default_trail),
        };
        // Faults seen while launching are blamed on this stream's unfinished kernel first.
        let fault = |call| self.stream_error(&g, Some(trail), Some(kernel), call);
        let (function, limits) = self.function(&g, module, kernel)?;
        check_function_limits(kernel, config, &limits, &self.label)?;
        let expected = crate::launch::expected_packing(&args);

        // Host data goes to the device first; outputs too, so elements the kernel does not
        // write keep their values, as on the CPU.
        let mut staged: Vec<Option<GpuBytes>> = Vec::with_capacity(args.len());
        for arg in &args {
            staged.push(match arg {
                Arg::HostSlice { bytes, .. } => Some(self.upload_on(&g, stream, bytes)?),
                Arg::HostOutput { bytes, .. } => Some(self.upload_on(&g, stream, bytes)?),
                Arg::GpuSlice { buffer, .. } => {
                    self.check_live(&g, buffer)?;
                    if config.stream.is_some() {
                        buffer.used_on(stream);
                    }
                    None
                }
                Arg::GpuOutput { buffer, .. } => {
                    self.check_live(&g, buffer)?;
                    if config.stream.is_some() {
                        buffer.used_on(stream);
                    }
                    None
                }
                Arg::CudarcSlice { slice, .. } => {
                    self.check_cudarc(&g, "a cudarc slice", slice.cudarc_context())?;
                    None
                }
                Arg::CudarcOutput { slice, .. } => {
                    self.check_cudarc(&g, "a cudarc slice", slice.cudarc_context())?;
                    None
                }
                Arg::Scalar(_) => None,
            });
        }

        {
            let mut slots: Vec<ParamSlot> = Vec::new();
            let mut guards = Vec::new();
            for (arg, stage) in args.iter_mut().zip(&staged) {
                // The device memory the kernel gets: the buffer it writes, or what was staged.
                let (written, len): (Option<WrittenView<'_>>, usize) = match arg {
                    Arg::Scalar(slot) => {
                        slots.push(*slot);
                        continue;
                    }
                    Arg::GpuSlice {
                        buffer,
                        offset,
                        len,
                    } => {
                        let ptr = match &buffer.slice {
                            Some(slice) => {
                                let (ptr, guard) = slice.device_ptr(stream);
                                guards.push(guard);
                                ptr + *offset as u64
                            }
                            None => 0,
                        };
                        slots.push(ParamSlot::new(ptr));
                        slots.push(ParamSlot::new(*len as u64));
                        continue;
                    }
                    // cudarc's guards order the launch after the slice's last writer (and
                    // reader, for an output) on any stream, and record its use on this one.
                    Arg::CudarcSlice { slice, len } => {
                        let (ptr, guard) = slice.read_on(stream);
                        guards.push(guard);
                        slots.push(ParamSlot::new(ptr));
                        slots.push(ParamSlot::new(*len as u64));
                        continue;
                    }
                    Arg::CudarcOutput { slice, len } => {
                        let (ptr, guard) = slice.write_on(stream);
                        guards.push(guard);
                        slots.push(ParamSlot::new(ptr));
                        slots.push(ParamSlot::new(*len as u64));
                        continue;
                    }
                    Arg::GpuOutput {
                        buffer,
                        offset,
                        len,
                    } => (Some((&mut buffer.slice, *offset)), *len),
                    Arg::HostSlice { len, .. } | Arg::HostOutput { len, .. } => (None, *len),
                };
                let ptr = match (written, stage) {
                    (Some((Some(slice), offset)), _) => {
                        let (ptr, guard) = slice.device_ptr_mut(stream);
                        guards.push(guard);
                        ptr + offset as u64
                    }
                    (
                        None,
                        Some(GpuBytes {
                            slice: Some(slice), ..
                        }),
                    ) => {
                        let (ptr, guard) = slice.device_ptr(stream);
                        guards.push(guard);
                        ptr
                    }
                    _ => 0, // an empty buffer: the kernel sees length 0 and never dereferences
                };
                slots.push(ParamSlot::new(ptr));
                slots.push(ParamSlot::new(len as u64));
            }
            crate::launch::debug_check_packed(expected, &slots);
            let mut builder = stream.launch_builder(&function);
            for slot in &slots {
                builder.arg(slot);
            }
            let cu_config = cudarc::driver::LaunchConfig {
                grid_dim: (config.grid.x, config.grid.y, config.grid.z),
                block_dim: (config.block.x, config.block.y, config.block.z),
                shared_mem_bytes: config.shared_mem_bytes,
            };
            let call = match cooperative {
                true => "cuLaunchCooperativeKernel",
                false => "cuLaunchKernel",
            };
            // SAFETY: `check_abi` matched every packed slot against the PTX entry's parameter
            // sizes; every pointer is a live device allocation of this context (`check_live`;
            // `check_cudarc` for a borrowed `CudaSlice`, whose whole length is passed),
            // or a view `offset` bytes into one, holding `len` elements from there (`check_args`
            // checked them against the allocation's size less the offset; host data was staged
            // above), and the guards keep cudarc's
            // stream ordering for buffers in use until the launch is queued. A cooperative
            // launch's grid was checked against what is co-resident (`check_co_resident`).
            let launched = unsafe {
                match cooperative {
                    true => builder.launch_cooperative(cu_config),
                    false => builder.launch(cu_config),
                }
            };
            launched.map_err(fault(call))?;
            g.launches.record(trail, kernel);
            drop(guards);
        }

        let mut wait = cooperative;
        for (arg, stage) in args.iter_mut().zip(&staged) {
            if let (
                Arg::HostOutput { bytes, .. },
                Some(GpuBytes {
                    slice: Some(slice), ..
                }),
            ) = (arg, stage)
            {
                stream
                    .memcpy_dtoh(slice, &mut **bytes)
                    .map_err(fault("cuMemcpyDtoHAsync"))?;
                wait = true;
            }
        }
        if wait {
            let mark = g.launches.mark();
            stream.synchronize().map_err(fault("cuStreamSynchronize"))?;
            trail.finished_upto(mark);
        }
        Ok(())
    }
}
