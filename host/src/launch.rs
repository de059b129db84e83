//! The checks every launch makes: its configuration against the device, its arguments against
//! the kernel and the PTX entry.

pub(crate) use crate::args::{Arg, LaunchArg, ParamSlot};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::launch_config::LaunchConfig;
use crate::memory_meter::Reservation;
use crate::ptx::PtxEntry;
use ferrocuda_std::abi::{KernelInfo, LenProduct, ParamClass};

/// What a launch asks of its device: checked here, with the other launch checks, so that
/// `device.rs` stays below the launch types.
impl Device {
    /// Checks a launch configuration against this device's limits.
    pub(crate) fn check_config(&self, kernel: &'static str, config: &LaunchConfig) -> Result<()> {
        let p = self.properties();
        for (what, dims) in [("grid", config.grid), ("block", config.block)] {
            if dims.count() == 0 {
                return Err(Error::ZeroSize { kernel, what, dims });
            }
        }
        let b = config.block;
        let max_b = p.max_block_dim;
        if b.count() > p.max_threads_per_block as u64
            || b.x > max_b.x
            || b.y > max_b.y
            || b.z > max_b.z
        {
            return Err(Error::BlockTooLarge {
                kernel,
                block: b,
                threads: b.count(),
                device: self.to_string(),
                max_threads: p.max_threads_per_block,
                max_dims: max_b,
            });
        }
        let g = config.grid;
        let max_g = p.max_grid_dim;
        if g.x > max_g.x || g.y > max_g.y || g.z > max_g.z {
            return Err(Error::GridTooLarge {
                kernel,
                grid: g,
                device: self.to_string(),
                max_dims: max_g,
            });
        }
        if config.shared_mem_bytes > p.max_shared_memory_per_block {
            return Err(Error::SharedMemoryTooLarge {
                kernel,
                requested: config.shared_mem_bytes,
                device: self.to_string(),
                limit: p.max_shared_memory_per_block,
            });
        }
        if let Some(stream) = config.stream {
            self.check_stream(stream)?;
        }
        Ok(())
    }

    /// Counts the device copies a GPU launch makes of its host arguments, for the launch's
    /// duration (the CPU executor uses host data in place, and its buffers are counted already).
    pub(crate) fn reserve_staging(&self, args: &[Arg<'_>]) -> Result<Reservation> {
        if !self.is_gpu() {
            return self.reserve(0);
        }
        let bytes = args
            .iter()
            .map(|arg| match arg {
                Arg::HostSlice { bytes, .. } => bytes.len(),
                Arg::HostOutput { bytes, .. } => bytes.len(),
                _ => 0,
            })
            .fold(0usize, usize::saturating_add);
        self.reserve(bytes)
    }
}

/// The host's packing of `args` agrees with the PTX entry's parameter list.
pub(crate) fn check_abi(info: &KernelInfo, entry: &PtxEntry, args: &[Arg<'_>]) -> Result<()> {
    let host: Vec<usize> = args.iter().flat_map(Arg::ptx_param_sizes).collect();
    debug_assert_eq!(host, info.ptx_param_sizes().collect::<Vec<_>>());
    if host != entry.param_sizes {
        return Err(Error::AbiMismatch {
            kernel: info.name,
            host,
            ptx: entry.param_sizes.clone(),
        });
    }
    Ok(())
}

/// In debug builds, the PTX parameter sizes `args` must be packed into: what `check_abi` compared
/// with the PTX. Taken before packing, for [`debug_check_packed`].
pub(crate) fn expected_packing(args: &[Arg<'_>]) -> Option<Vec<usize>> {
    cfg!(debug_assertions).then(|| args.iter().flat_map(Arg::ptx_param_sizes).collect())
}

/// What a backend actually packed matches [`expected_packing`]: the guard that the two packers
/// (CPU, GPU) never drift from `Arg::ptx_param_sizes`, which the PTX was checked against.
pub(crate) fn debug_check_packed(expected: Option<Vec<usize>>, slots: &[ParamSlot]) {
    if let Some(expected) = expected {
        let packed: Vec<usize> = slots.iter().map(ParamSlot::size).collect();
        assert_eq!(
            packed, expected,
            "packed parameter slots differ from the sizes checked against the PTX"
        );
    }
}

/// Parameters declared `same_len` have equal lengths.
pub(crate) fn check_lengths(info: &KernelInfo, args: &[LaunchArg<'_>]) -> Result<()> {
    for group in info.same_len {
        let (&first, rest) = group
            .split_first()
            .expect("same_len groups have two or more");
        let first_len = args[first].arg.elements().unwrap_or(0);
        for &other in rest {
            let other_len = args[other].arg.elements().unwrap_or(0);
            if other_len != first_len {
                return Err(Error::LengthMismatch {
                    kernel: info.name,
                    first: info.params[first].name,
                    first_len,
                    second: info.params[other].name,
                    second_len: other_len,
                });
            }
        }
    }
    for product in info.len_products {
        check_len_product(info, product, args)?;
    }
    for &view in info.index32 {
        check_index32(info, view, &args[view])?;
    }
    for &(out, a) in info.transposed {
        check_transposed(info, (out, a), args)?;
    }
    debug_assert!(info
        .params
        .iter()
        .zip(args)
        .all(|(p, a)| (p.class == ParamClass::Scalar) == a.arg.elements().is_none()));
    Ok(())
}

/// A kernel declared `block(x, y, z)` is launched with blocks of that shape.
pub(crate) fn check_block(info: &KernelInfo, config: &LaunchConfig<'_>) -> Result<()> {
    match info.block {
        Some(required) if required != config.block => Err(Error::BlockShape {
            kernel: info.name,
            required,
            block: config.block,
        }),
        _ => Ok(()),
    }
}

/// A kernel with `index32` views runs at most 2³² threads along each axis, so that its grid
/// index fits in a `u32` (the kernel may compute it in 32 bits, as CUDA C's `unsigned` does).
pub(crate) fn check_grid_index32(info: &KernelInfo, config: &LaunchConfig<'_>) -> Result<()> {
    if info.index32.is_empty() {
        return Ok(());
    }
    let (grid, block) = (config.grid, config.block);
    let axes = [
        ('x', grid.x, block.x),
        ('y', grid.y, block.y),
        ('z', grid.z, block.z),
    ];
    for (axis, blocks, threads) in axes {
        if u64::from(blocks) * u64::from(threads) > 1 << 32 {
            return Err(Error::GridOver32Bits {
                kernel: info.name,
                axis,
                grid,
                block,
            });
        }
    }
    Ok(())
}

/// A `len(x = a * b)` parameter has `a·b` elements, and `a·b` fits in a `u32` (the kernel may
/// index it in 32 bits).
fn check_len_product(info: &KernelInfo, rule: &LenProduct, args: &[LaunchArg<'_>]) -> Result<()> {
    let len = args[rule.param].arg.elements().unwrap_or(0);
    let values: Vec<u32> = rule
        .factors
        .iter()
        .map(|&f| match &args[f].arg {
            Arg::Scalar(slot) => u32::from_ne_bytes(
                slot.bytes()
                    .try_into()
                    .expect("check_args checked the scalar's size: a u32"),
            ),
            _ => unreachable!("`#[kernel]` makes only u32 scalars factors of a `len` product"),
        })
        .collect();
    let product = values
        .iter()
        .try_fold(1u64, |p, &v| p.checked_mul(u64::from(v)));
    let fits = product.is_some_and(|p| p <= u64::from(u32::MAX));
    if product == Some(len as u64) && fits {
        return Ok(());
    }
    let names: Vec<&str> = rule.factors.iter().map(|&f| info.params[f].name).collect();
    let values: Vec<String> = values.iter().map(u32::to_string).collect();
    let product = product.map_or_else(|| "more than u64::MAX".to_string(), |p| p.to_string());
    let detail = format!("{} = {} = {product}", names.join("·"), values.join("·"));
    Err(Error::LengthNotProduct {
        kernel: info.name,
        param: info.params[rule.param].name,
        len,
        factors: names.join("·"),
        detail: if fits {
            detail
        } else {
            format!(
                "{detail}, above u32::MAX (the kernel indexes `{}` in 32 bits)",
                info.params[rule.param].name
            )
        },
    })
}

/// An `index32(a)` view's memory and extents are at most `u32::MAX` (the kernel computes its
/// offsets in 32 bits).
fn check_index32(info: &KernelInfo, view: usize, arg: &LaunchArg<'_>) -> Result<()> {
    let len = arg.arg.elements().unwrap_or(0);
    let extents = arg.shape.as_ref().map_or(&[][..], |shape| shape.extents());
    let limit = u32::MAX as usize;
    if len <= limit && extents.iter().all(|&e| e <= limit) {
        return Ok(());
    }
    Err(Error::ViewOver32Bits {
        kernel: info.name,
        param: info.params[view].name,
        len,
        extents: extents.to_vec(),
    })
}

/// A `transposed(out, a)` pair of 2D views has reversed shapes: `out` is `a.cols() × a.rows()`.
fn check_transposed(
    info: &KernelInfo,
    (out, a): (usize, usize),
    args: &[LaunchArg<'_>],
) -> Result<()> {
    let shape = |i: usize| -> [usize; 2] {
        let extents = args[i]
            .shape
            .as_ref()
            .map_or(&[][..], |shape| shape.extents());
        extents
            .try_into()
            .expect("check_args checked the view's axes: `#[kernel]` pairs only 2D views")
    };
    let (out_shape, a_shape) = (shape(out), shape(a));
    if out_shape == [a_shape[1], a_shape[0]] {
        return Ok(());
    }
    Err(Error::ShapeNotTransposed {
        kernel: info.name,
        out: info.params[out].name,
        out_shape,
        a: info.params[a].name,
        a_shape,
    })
}

/// Launches a kernel, Numba style: `launch!(module, kernel[grid, block](args...))`.
///
/// `grid` and `block` are [`LaunchDims`]: integers of any type (`256`, `n.div_ceil(256)`),
/// tuples or arrays of them (`(16, 16)`, `[8, 8, 4]`) or a [`Dim3`]; a size that is no CUDA
/// dimension (negative, or above `u32::MAX`) is an [`Error::LaunchDimension`]. Optional further
/// items: a [`Stream`] and the dynamic shared memory in bytes (`[grid, block, stream, bytes]`),
/// or the dynamic shared memory alone, named, with or without a stream
/// (`[grid, block; shared = bytes]`, `[grid, block, stream; shared = bytes]`).
/// Arguments: `&[T]`/`&Vec<T>`/`&DeviceBuffer<T>` for `&[T]` parameters, `&mut [T]`/
/// `&mut Vec<T>`/`&mut DeviceBuffer<T>` for `Out<T>`, values for scalars. Host data is copied to
/// the GPU and outputs back; device buffers stay where they are. Expands to [`Module::launch`].
/// `kernel` is a `#[kernel]`'s handle or a generic kernel ([`KernelHandle`](crate::KernelHandle)):
/// `scale::<f64>[grid, block](...)` names the instance, `scale[grid, block](...)` lets the
/// arguments' types pick it.
///
/// ```ignore
/// launch!(kernels, vector_add[n.div_ceil(256), 256](&a, &b, &mut out))?;
/// launch!(kernels, saxpy[blocks, 256, stream](2.0f32, &x, &mut y))?;
/// launch!(kernels, histogram[blocks, 256; shared = 4 * bins](&x, &mut counts, lo, hi))?;
/// ```
///
/// [`Module::launch`]: crate::Module::launch
/// [`LaunchDims`]: crate::LaunchDims
/// [`Dim3`]: crate::Dim3
/// [`Stream`]: crate::Stream
#[macro_export]
macro_rules! launch {
    (@config $module:expr, $kernel:path, $config:expr, ($($arg:expr),* $(,)?)) => {
        match $config {
            ::core::result::Result::Ok(config) => {
                $module.launch(&$crate::KernelHandle::kernel(&$kernel), config, ($($arg,)*))
            }
            ::core::result::Result::Err(error) => ::core::result::Result::Err(error),
        }
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr] $args:tt) => {
        $crate::launch!(@config $module, $kernel, $crate::LaunchConfig::try_new($grid, $block), $args)
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr; shared = $shared:expr] $args:tt) => {
        $crate::launch!(
            @config $module,
            $kernel,
            $crate::LaunchConfig::try_new($grid, $block).map(|c| c.with_shared_mem_bytes($shared)),
            $args
        )
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr, $stream:expr] $args:tt) => {
        $crate::launch!(
            @config $module,
            $kernel,
            $crate::LaunchConfig::try_new($grid, $block).map(|c| c.on_stream(&$stream)),
            $args
        )
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr, $stream:expr; shared = $shared:expr] $args:tt) => {
        $crate::launch!($module, $kernel [$grid, $block, $stream, $shared] $args)
    };
    ($module:expr, $kernel:path [$grid:expr, $block:expr, $stream:expr, $shared:expr] $args:tt) => {
        $crate::launch!(
            @config $module,
            $kernel,
            $crate::LaunchConfig::try_new($grid, $block)
                .map(|c| c.on_stream(&$stream).with_shared_mem_bytes($shared)),
            $args
        )
    };
}
