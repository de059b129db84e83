//! [`Ptx`] (kernels compiled into the program) and [`Module`] (those kernels loaded on a device).

use crate::args::KernelArgs;
use crate::cooperative;
use crate::device::Device;
use crate::error::{Error, Result};
use crate::launch;
use crate::launch_config::LaunchConfig;
use crate::loaded::Loaded;
use crate::ptx::{Ptx, PtxEntry, PtxInfo};
use ferrocuda_std::abi::Kernel;
use ferrocuda_std::Dim3;

/// Whether a device can run a [`Ptx`], and the facts behind the answer: what `ferrocuda doctor`
/// reports. Made by [`Device::check_ptx`].
#[derive(Debug)]
pub struct PtxCheck {
    /// The module's name.
    pub module: &'static str,
    /// Its `.version` (PTX ISA), `.target` and entries.
    pub info: PtxInfo,
    /// The CUDA version the driver supports; `None` on the CPU executor.
    pub driver_cuda: Option<(u32, u32)>,
    /// The GPU's compute capability; `None` on the CPU executor.
    pub compute_capability: Option<(u32, u32)>,
    /// What the driver said when it actually loaded the module (`cuModuleLoadDataEx`): `Ok`
    /// with the JIT's info log, or the error ([`Error::PtxRejected`] carries the JIT's error
    /// log). `None` on the CPU executor, which needs no driver.
    pub load: Option<Result<String>>,
}

impl PtxCheck {
    /// The oldest CUDA version whose driver knows the PTX's ISA version.
    pub fn needs_cuda(&self) -> Option<(u32, u32)> {
        self.info.min_cuda_version()
    }

    /// Whether the driver knows the PTX's ISA version; `None` on the CPU or when unknown.
    pub fn driver_new_enough(&self) -> Option<bool> {
        Some(self.driver_cuda? >= self.needs_cuda()?)
    }

    /// Whether the GPU is at least the PTX's `.target`; `None` on the CPU or when unknown.
    pub fn gpu_new_enough(&self) -> Option<bool> {
        Some(self.compute_capability? >= self.info.target_compute_capability()?)
    }

    /// Whether the device can run this PTX's kernels: the driver loaded it (always on the CPU
    /// executor, which runs the kernels' Rust code).
    pub fn runs(&self) -> bool {
        !matches!(self.load, Some(Err(_)))
    }
}

/// A [`Ptx`] loaded on a [`Device`]: launch its kernels with `launch!` or [`Module::launch`].
pub struct Module {
    device: Device,
    ptx: &'static Ptx,
    info: PtxInfo,
    /// Its kernels on the device's backend.
    pub(crate) loaded: Loaded,
    /// Held while a table is set, so that a write of part of one (read, change, write) is not
    /// interleaved with another write of the table.
    pub(crate) table_writes: std::sync::Mutex<()>,
}

impl Device {
    /// Loads `ptx` on this device: on a GPU the driver JIT-compiles it; on the CPU its entries are
    /// read so that launches are checked against them exactly as on a GPU.
    ///
    /// # Errors
    /// [`Error::GpuTooOld`] if the PTX targets a newer GPU, [`Error::PtxRejected`] if the driver
    /// refuses it.
    pub fn load(&self, ptx: &'static Ptx) -> Result<Module> {
        let info = ptx.info();
        let loaded = Loaded::load(self, ptx, &info)?;
        Ok(Module {
            device: self.clone(),
            ptx,
            info,
            loaded,
            table_writes: Default::default(),
        })
    }
}

impl Device {
    /// Checks whether this device can run `ptx`: compares its ISA version with the driver's CUDA
    /// version and its target with the GPU, and actually loads it (then unloads it), keeping the
    /// driver JIT's log. On the CPU executor only the PTX is read.
    ///
    /// ```
    /// use ferrocuda_host::{Device, Ptx};
    /// static PTX: Ptx = Ptx::new("tiny", ".version 6.0\n.target sm_70\n.address_size 64\n");
    /// let check = Device::cpu().check_ptx(&PTX);
    /// assert_eq!(check.needs_cuda(), Some((9, 0)));
    /// assert!(check.runs() && check.load.is_none());
    /// ```
    pub fn check_ptx(&self, ptx: &Ptx) -> PtxCheck {
        let info = ptx.info();
        let (driver_cuda, load) = match self.backend().gpu() {
            None => (None, None),
            Some(gpu) => (
                crate::cuda::driver_cuda_version().ok(),
                Some(gpu.jit_check(ptx, &info)),
            ),
        };
        PtxCheck {
            module: ptx.name(),
            driver_cuda,
            compute_capability: self.properties().compute_capability,
            load,
            info,
        }
    }
}

impl Module {
    /// The device it is loaded on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The PTX it was loaded from.
    pub fn ptx(&self) -> &'static Ptx {
        self.ptx
    }

    /// The PTX's version, target and entries.
    pub fn info(&self) -> &PtxInfo {
        &self.info
    }

    fn entry(&self, kernel: &'static str) -> Result<&PtxEntry> {
        self.info
            .entry(kernel)
            .ok_or_else(|| Error::KernelNotInPtx {
                kernel,
                module: self.ptx.name(),
                available: self
                    .info
                    .entries
                    .iter()
                    .map(|e| e.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// Launches `kernel` with `config` and `args`; `launch!` is the short way to call this.
    ///
    /// Before anything runs or is copied it checks that the kernel is in the PTX, that each
    /// argument fits its parameter (kind, element size, byte length, alignment), that the
    /// packed arguments match the PTX entry's parameters, that `same_len` parameters have equal
    /// lengths, and that grid, block and shared memory fit the device. Host slices are copied to
    /// a GPU and outputs back after the kernel, which this then waits for; with only device
    /// buffers the launch is queued and returns at once.
    ///
    /// # Errors
    /// Any failed check, an allocation that does not fit, a failing kernel (on the CPU: a panic in
    /// kernel code, named by block and thread).
    ///
    /// A kernel that takes a `Grid` is [`Error::NeedsCooperativeLaunch`]: launch it with
    /// [`Module::launch_cooperative`].
    pub fn launch<'a, P, A: KernelArgs<'a, P>>(
        &self,
        kernel: &Kernel<P>,
        config: LaunchConfig,
        args: A,
    ) -> Result<()> {
        cooperative::refuse_plain_launch(kernel.info())?;
        self.launch_as(kernel, config, args, false, None)
    }

    /// Launches a kernel that takes a `Grid` (`grid.sync()`), with every block resident at once;
    /// `launch_cooperative!` is the short way to call this. The checks of [`Module::launch`],
    /// then: the device supports cooperative launches and holds the whole grid at once (the
    /// occupancy API's blocks per multiprocessor for this block size and shared memory, times
    /// the multiprocessors; on the CPU executor, as a GPU with one multiprocessor per worker
    /// thread). The launch gets a barrier of its own and is waited for.
    ///
    /// # Errors
    /// Those of [`Module::launch`], and [`Error::CooperativeGridTooLarge`] with the most blocks
    /// that fit.
    pub fn launch_cooperative<'a, P, A: KernelArgs<'a, P>>(
        &self,
        kernel: &Kernel<P>,
        config: LaunchConfig,
        args: A,
    ) -> Result<()> {
        self.launch_as(kernel, config, args, true, None)
    }

    /// The launch behind `launch`, `launch_cooperative` and `launch_with_constant` (`table`: the
    /// constant table it carries, by name, and its bytes, already checked).
    pub(crate) fn launch_as<'a, P, A: KernelArgs<'a, P>>(
        &self,
        kernel: &Kernel<P>,
        config: LaunchConfig,
        args: A,
        cooperative: bool,
        table: Option<(&'static str, &[u8])>,
    ) -> Result<()> {
        let info = kernel.info();
        let entry = self.entry(info.name)?;
        let args = crate::args::into_launch_args(args);
        crate::args::check_args(info, &args)?;
        launch::check_lengths(info, &args)?;
        launch::check_block(info, &config)?;
        launch::check_grid_index32(info, &config)?;
        let mut args = crate::args::into_ptx_args(args);
        // A cooperative kernel's grid barrier: its last PTX parameters, zeroed for this launch.
        let mut barrier = match info.cooperative {
            true => Some(self.device.alloc_zeroed::<u32>(1)?),
            false => None,
        };
        args.extend(barrier.as_mut().map(|b| b.as_arg_mut()));
        launch::check_abi(info, entry, &args)?;
        self.device.check_config(info.name, &config)?;
        let _staged = self.device.reserve_staging(&args)?;
        if cooperative {
            let per_sm = self.loaded.co_resident_blocks_per_sm(info.name, &config)?;
            cooperative::check_co_resident(info, &config, &self.device, per_sm)?;
        }
        let entry = kernel.cpu_entry();
        self.loaded
            .launch(info, entry, &config, args, cooperative, table)
    }

    /// A 1D launch that gives each of `n` elements its own thread: the block size the occupancy
    /// API suggests for this kernel on a GPU (the largest, 1024, on the CPU), and enough blocks to cover `n`.
    ///
    /// # Errors
    /// [`Error::ZeroSize`] for `n == 0`, [`Error::GridTooLarge`] if `n` needs more blocks than the
    /// device allows (use a grid-stride kernel then).
    pub fn config_for<P>(&self, kernel: &Kernel<P>, n: usize) -> Result<LaunchConfig<'static>> {
        let name = kernel.name();
        self.entry(name)?;
        if n == 0 {
            let dims = Dim3::new(0, 1, 1);
            return Err(Error::ZeroSize {
                kernel: name,
                what: "grid",
                dims,
            });
        }
        let block = self.loaded.block_size_for(name)?;
        let blocks = n.div_ceil(block as usize);
        let max = self.device.properties().max_grid_dim;
        let config = LaunchConfig::new(u32::try_from(blocks).unwrap_or(u32::MAX), block);
        if blocks > max.x as usize {
            return Err(Error::GridTooLarge {
                kernel: name,
                grid: config.grid,
                device: self.device.to_string(),
                max_dims: max,
            });
        }
        Ok(config)
    }
}
