//! The one error type of ferrocuda's host side. Each message says what went wrong with the numbers
//! involved, and what to do about it.

use ferrocuda_std::Dim3;

/// Shorthand for results of this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// Why a device call or a launch failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `libcuda` could not be loaded.
    #[error(
        "no NVIDIA driver: {detail}. Install the NVIDIA driver to run kernels on a GPU, or use the \
         CPU executor (`Device::cpu()`, or FERROCUDA_DEVICE=cpu)"
    )]
    NoDriver {
        /// What was tried.
        detail: String,
    },

    /// The driver is there but the asked-for GPU is not usable.
    #[error("no usable CUDA device {ordinal}: {detail}")]
    NoDevice {
        /// The device ordinal asked for.
        ordinal: usize,
        /// Why it is not usable.
        detail: String,
    },

    /// A CUDA driver call failed.
    #[error(
        "CUDA driver call {call} failed on {device}: {cause}",
        cause = crate::cuda::describe(.source)
    )]
    Driver {
        /// What ferrocuda was doing.
        call: &'static str,
        /// The device it was doing it on.
        device: String,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },

    /// The driver could not load the PTX.
    #[error(
        "the CUDA driver (CUDA {driver}) rejected the PTX module `{module}` (PTX ISA {ptx_version}, \
         which needs a driver for CUDA {needs} or newer; {target}) on {device}: {cause}. JIT \
         log: {jit_log}. A driver older than the PTX ISA cannot JIT it: update the driver, or \
         build the kernels with a lower `ferrocuda_builder::PtxBuilder::arch`",
        driver = crate::ptx::version_text(*.driver_cuda),
        needs = crate::ptx::min_cuda_text(.ptx_version),
        cause = crate::cuda::describe(.source),
    )]
    PtxRejected {
        /// The module's name.
        module: &'static str,
        /// The CUDA version the driver supports, e.g. `(12, 4)`; `None` if unknown.
        driver_cuda: Option<(u32, u32)>,
        /// What the driver's JIT compiler wrote (`CU_JIT_ERROR_LOG_BUFFER`), or why there is none.
        jit_log: Box<str>,
        /// `.version` of the PTX.
        ptx_version: String,
        /// `.target` of the PTX.
        target: String,
        /// The device.
        device: String,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },

    /// The PTX was built for a newer GPU than this one.
    #[error(
        "the PTX module `{module}` targets {target}, but {device} is sm_{major}{minor}: the driver \
         never JIT-compiles PTX for an older GPU. Kernels that use what {target} brings (tensor \
         cores and cp.async need sm_80) cannot run on this GPU; others can be built for \
         sm_{major}{minor} or lower (`ferrocuda_builder::PtxBuilder::arch`)"
    )]
    GpuTooOld {
        /// The module's name.
        module: &'static str,
        /// `.target` of the PTX.
        target: String,
        /// The device.
        device: String,
        /// Compute capability major.
        major: u32,
        /// Compute capability minor.
        minor: u32,
    },

    /// The PTX module has no `.entry` of the kernel's name.
    #[error(
        "kernel `{kernel}` is not in the PTX module `{module}` (its entries: {available}); the PTX \
         was built from other kernel sources: rebuild (`cargo build`) so build.rs recompiles them"
    )]
    KernelNotInPtx {
        /// The kernel asked for.
        kernel: &'static str,
        /// The module's name.
        module: &'static str,
        /// The entries the module has, comma separated.
        available: String,
    },

    /// The host would pass parameters of other sizes than the PTX entry declares.
    #[error(
        "kernel `{kernel}`: the host packs parameters of {host:?} bytes but the PTX entry declares \
         {ptx:?}; the PTX module was built from another version of the kernel: rebuild"
    )]
    AbiMismatch {
        /// The kernel.
        kernel: &'static str,
        /// Sizes of the parameters the host packs.
        host: Vec<usize>,
        /// Sizes of the parameters of the `.entry`.
        ptx: Vec<usize>,
    },

    /// An argument does not fit the kernel parameter it is passed for: the wrong kind (read-only
    /// memory for an `Out<T>`), element size, byte length or alignment. Checked before every
    /// launch, in release builds too.
    #[error(
        "kernel `{kernel}`: the argument for `{param}` does not fit the parameter: {detail}; pass \
         memory of the kernel's element type, `&mut` for an `Out<T>`"
    )]
    InvalidArgument {
        /// The kernel.
        kernel: &'static str,
        /// The parameter's name in the kernel's source.
        param: &'static str,
        /// What does not fit.
        detail: String,
    },

    /// An argument declared `len(x = a * b)` does not have `a·b` elements, or `a·b` is above
    /// `u32::MAX`.
    #[error(
        "kernel `{kernel}`: `{param}` has {len} elements but {detail}; the kernel needs it to have \
         {factors} elements, at most u32::MAX"
    )]
    LengthNotProduct {
        /// The kernel.
        kernel: &'static str,
        /// The slice or output.
        param: &'static str,
        /// Its length.
        len: usize,
        /// The factors' names, `rows·cols`.
        factors: String,
        /// The factors' values and their product.
        detail: String,
    },

    /// A view declared `index32(a)` has more than `u32::MAX` elements of memory, or an extent
    /// above `u32::MAX`.
    #[error(
        "kernel `{kernel}`: `{param}` is a view of {len} elements with extents {extents:?}, but the \
         kernel indexes it in 32 bits (`index32`): its memory and each extent must be at most \
         u32::MAX = 4294967295"
    )]
    ViewOver32Bits {
        /// The kernel.
        kernel: &'static str,
        /// The view's parameter.
        param: &'static str,
        /// Elements of its memory (padding included).
        len: usize,
        /// Its extents, outermost first.
        extents: Vec<usize>,
    },

    /// Two views declared `transposed(out, a)` do not have reversed shapes: `out` must be
    /// `a.cols() × a.rows()`.
    #[error(
        "kernel `{kernel}`: `{out}` has shape {out_shape:?} and `{a}` has shape {a_shape:?}, but \
         the kernel needs `{out}` shaped as `{a}` transposed (`transposed({out}, {a})`): \
         [{}, {}]",
        a_shape[1],
        a_shape[0]
    )]
    ShapeNotTransposed {
        /// The kernel.
        kernel: &'static str,
        /// The view whose shape must be the other's reversed.
        out: &'static str,
        /// Its shape, `[rows, cols]`.
        out_shape: [usize; 2],
        /// The other view.
        a: &'static str,
        /// Its shape, `[rows, cols]`.
        a_shape: [usize; 2],
    },

    /// A kernel with `index32` views was launched with more than 2³² threads along an axis.
    #[error(
        "kernel `{kernel}` computes its grid index in 32 bits (`index32`): at most 2^32 = \
         4294967296 threads along each axis, but the launch has {grid} blocks of {block} threads, \
         more than that along {axis}"
    )]
    GridOver32Bits {
        /// The kernel.
        kernel: &'static str,
        /// The axis past 2³² threads: 'x', 'y' or 'z'.
        axis: char,
        /// The launch's grid.
        grid: Dim3,
        /// The launch's blocks.
        block: Dim3,
    },

    /// A kernel declared `block(x, y, z)` was launched with blocks of another shape.
    #[error("kernel `{kernel}` runs in blocks of {required} threads, but the launch has blocks of {block}")]
    BlockShape {
        /// The kernel.
        kernel: &'static str,
        /// The shape it declares.
        required: Dim3,
        /// The launch's.
        block: Dim3,
    },

    /// Two arguments declared `same_len` have different lengths.
    #[error(
        "kernel `{kernel}`: `{first}` has {first_len} elements but `{second}` has {second_len}; \
         the kernel needs them to have the same length"
    )]
    LengthMismatch {
        /// The kernel.
        kernel: &'static str,
        /// First parameter's name.
        first: &'static str,
        /// Its length.
        first_len: usize,
        /// The parameter whose length differs.
        second: &'static str,
        /// Its length.
        second_len: usize,
    },

    /// A grid or block size given as an integer that no CUDA launch dimension can be: negative,
    /// or above `u32::MAX` (e.g. a `usize` count of blocks for more elements than a grid covers).
    #[error(
        "launch dimension out of range: {what} {axis} = {value}, but CUDA grid and block \
         dimensions are 32-bit (0 to 4294967295, and the device's limits are lower); use larger \
         blocks, or a grid-stride loop over fewer blocks"
    )]
    LaunchDimension {
        /// "grid" or "block".
        what: &'static str,
        /// The dimension: 'x', 'y' or 'z'.
        axis: char,
        /// The value given, in decimal (as text: an `i128` would double the size of every
        /// `Result` of this crate).
        value: String,
    },

    /// A launch with a zero-sized grid or block.
    #[error(
        "launch of `{kernel}`: the {what} is {dims}; every grid and block dimension must be at \
         least 1"
    )]
    ZeroSize {
        /// The kernel.
        kernel: &'static str,
        /// "grid" or "block".
        what: &'static str,
        /// The dimensions given.
        dims: Dim3,
    },

    /// Too many threads in a block, or one block dimension too large.
    #[error(
        "launch of `{kernel}`: block {block} ({threads} threads) does not fit {device}, which \
         allows at most {max_threads} threads per block and dimensions up to {max_dims}"
    )]
    BlockTooLarge {
        /// The kernel.
        kernel: &'static str,
        /// The block asked for.
        block: Dim3,
        /// Its thread count.
        threads: u64,
        /// The device.
        device: String,
        /// Threads per block allowed.
        max_threads: u32,
        /// Per-dimension limits.
        max_dims: Dim3,
    },

    /// More threads per block than this kernel can have on this GPU: its registers per thread
    /// limit the block below the device's own maximum.
    #[error(
        "launch of `{kernel}`: block of {threads} threads, but `{kernel}` uses {registers} \
         registers per thread, so {device} runs at most {max_threads} threads per block of it; \
         launch blocks of {max_threads} threads or fewer (`Module::config_for` picks a size that \
         fits)"
    )]
    KernelBlockTooLarge {
        /// The kernel.
        kernel: &'static str,
        /// Threads per block asked for.
        threads: u64,
        /// Registers per thread the kernel uses.
        registers: u32,
        /// The device.
        device: String,
        /// Threads per block this kernel allows (`CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK`).
        max_threads: u32,
    },

    /// A grid dimension too large.
    #[error(
        "launch of `{kernel}`: grid {grid} does not fit {device}, which allows grids up to \
         {max_dims}; use larger blocks, or a grid-stride loop over fewer blocks"
    )]
    GridTooLarge {
        /// The kernel.
        kernel: &'static str,
        /// The grid asked for.
        grid: Dim3,
        /// The device.
        device: String,
        /// Per-dimension limits.
        max_dims: Dim3,
    },

    /// A plain launch of a kernel that takes a `Grid` (its `grid.sync()` needs every block
    /// resident at once, which only a cooperative launch guarantees).
    #[error(
        "`{kernel}` takes a `Grid` and must be launched cooperatively: use \
         `launch_cooperative!` (or `Module::launch_cooperative`), which checks that the whole grid \
         fits on the device at once"
    )]
    NeedsCooperativeLaunch {
        /// The kernel.
        kernel: &'static str,
    },

    /// A cooperative launch whose grid cannot be resident on the device at once (or a device
    /// without cooperative launches).
    #[error(
        "cooperative launch of `{kernel}`: {blocks} blocks asked, but {device} can hold at most \
         {max_blocks} blocks of {block_threads} threads with {shared_bytes} bytes of dynamic \
         shared memory at once ({detail}); use fewer blocks (a grid-stride loop covers any \
         length)"
    )]
    CooperativeGridTooLarge {
        /// The kernel.
        kernel: &'static str,
        /// Blocks asked for.
        blocks: u64,
        /// The most blocks that can be co-resident.
        max_blocks: u64,
        /// Threads per block of the launch.
        block_threads: u64,
        /// Dynamic shared memory per block of the launch.
        shared_bytes: u32,
        /// The device.
        device: String,
        /// How the limit comes about (blocks per multiprocessor × multiprocessors).
        detail: String,
    },

    /// A cooperative launch on the CPU executor whose block could not get an OS thread: every
    /// block of a cooperative launch runs at once, each on a thread of its own.
    #[error(
        "cooperative launch of `{kernel}`: the CPU executor could not start the thread of block \
         {block} ({blocks} blocks, each on an OS thread of its own at once): {cause}; the blocks \
         already started were stopped. Use fewer blocks (a grid-stride loop covers any length), \
         or raise the process's thread or address-space limits (ulimit -u, ulimit -v; \
         RUST_MIN_STACK sets each thread's stack)"
    )]
    CooperativeBlockNotStarted {
        /// The kernel.
        kernel: &'static str,
        /// The block whose thread could not be started.
        block: Dim3,
        /// Blocks in the launch.
        blocks: u64,
        /// What the operating system said.
        cause: String,
    },

    /// More dynamic shared memory than a block may have.
    #[error(
        "launch of `{kernel}`: {requested} bytes of dynamic shared memory per block asked, but \
         {device} allows at most {limit}"
    )]
    SharedMemoryTooLarge {
        /// The kernel.
        kernel: &'static str,
        /// Bytes asked for.
        requested: u32,
        /// The device.
        device: String,
        /// Bytes allowed.
        limit: u32,
    },

    /// More dynamic shared memory than this kernel may have next to its static shared memory.
    #[error(
        "launch of `{kernel}`: {requested} bytes of dynamic shared memory per block asked, but \
         `{kernel}` already has {static_bytes} bytes of static shared memory, so {device} allows \
         it at most {limit} bytes of dynamic shared memory per block"
    )]
    KernelSharedMemoryTooLarge {
        /// The kernel.
        kernel: &'static str,
        /// Dynamic bytes asked for.
        requested: u32,
        /// The kernel's static shared memory (`CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`).
        static_bytes: u32,
        /// The device.
        device: String,
        /// Dynamic bytes allowed (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`).
        limit: u32,
    },

    /// An allocation did not fit in GPU memory, or under the device's memory limit.
    #[error(
        "out of memory on {device}: asked for {requested} bytes, {free} bytes free of {total}{}; \
         process the data in chunks (`ferrocuda::ops::Pipeline`: copy in, kernel, copy out per \
         chunk on streams, for host data larger than the device) or free buffers first",
        limit_note(*limit, *total, *free)
    )]
    OutOfMemory {
        /// The device.
        device: String,
        /// Bytes asked for.
        requested: usize,
        /// Bytes free when it failed.
        free: usize,
        /// Bytes in all.
        total: usize,
        /// The device memory limit that refused it (`Device::with_memory_limit`,
        /// `FERROCUDA_DEVICE_MEMORY_LIMIT`, `CpuOptions::memory_limit`); `None`: the device's
        /// own memory.
        limit: Option<usize>,
    },

    /// The free and total memory of a device could not be read.
    #[error("cannot tell the free memory of {device}: {detail}")]
    MemoryInfoUnavailable {
        /// The device.
        device: String,
        /// Why.
        detail: String,
    },

    /// A buffer, stream or module of a CUDA context that a kernel fault destroyed.
    #[error(
        "{what} was made on {device} before a kernel fault destroyed its CUDA context (ferrocuda \
         made a new one); its contents are lost: make it again ({fix})"
    )]
    ContextLost {
        /// "a buffer" or "a stream".
        what: &'static str,
        /// The device.
        device: String,
        /// How to make it again.
        fix: &'static str,
    },

    /// A buffer or stream of one device was used on another.
    #[error(
        "{what} of {owner} was used on {device}; copy the data to the host (`to_vec`) and upload it \
         to {device}"
    )]
    WrongDevice {
        /// "a buffer" or "a stream".
        what: &'static str,
        /// The device it belongs to.
        owner: String,
        /// The device it was used on.
        device: String,
    },

    /// A range of a buffer (`DeviceBuffer::slice`, a part of a constant table) that is reversed
    /// or ends past it.
    #[error(
        "{what}: the range {range} is not inside the {len} elements there are (a range must \
         start at or before its end, and end at or before {len})"
    )]
    RangeOutOfBounds {
        /// The call, e.g. `DeviceBuffer::slice`.
        what: &'static str,
        /// The range asked for, as `start..end` (end excluded).
        range: String,
        /// The elements there are.
        len: usize,
    },

    /// A library function (`ferrocuda::ops`) was given inputs that do not fit together: lengths
    /// that do not match the shape, a shape of zero or one too large for the kernel.
    #[error("{op}: {detail}")]
    InvalidInput {
        /// The function, e.g. `matmul`.
        op: &'static str,
        /// What does not fit, with the numbers.
        detail: String,
    },

    /// A 2D or 3D view (`Array2::new`, `Out2::with_pitch`, ...) whose shape does not fit its
    /// memory: the extents, strides and element counts are in the message.
    #[error("{view}: {detail}")]
    BadShape {
        /// The constructor, e.g. `Array2::new`.
        view: &'static str,
        /// What does not fit, with the numbers.
        detail: String,
    },

    /// `Module::set_constant` with data that does not fit the table, or a table the module's PTX
    /// does not declare.
    #[error("constant table `{table}` of PTX module `{module}`: {detail}")]
    ConstantTable {
        /// The table's name.
        table: &'static str,
        /// The module's name.
        module: &'static str,
        /// What does not fit, with the numbers.
        detail: String,
    },

    /// A copy between host and device with lengths that differ.
    #[error("{what}: the buffer has {expected} elements but the host slice has {actual}")]
    CopyLength {
        /// Which copy.
        what: &'static str,
        /// Elements in the device buffer.
        expected: usize,
        /// Elements in the host slice.
        actual: usize,
    },

    /// Kernel code panicked on the CPU executor (a failed bounds check, an `assert!`).
    #[error(
        "kernel `{kernel}` panicked on the CPU in block {block}, thread {thread}: {message}. \
         Outputs of this launch may be partly written"
    )]
    KernelPanicked {
        /// The kernel.
        kernel: &'static str,
        /// The failing block.
        block: Dim3,
        /// The failing thread in it.
        thread: Dim3,
        /// The panic message.
        message: String,
    },

    /// A CPU launch ran past its deadline ([`crate::CpuOptions::deadline`],
    /// `FERROCUDA_CPU_DEADLINE_MS`): `thread` was still running at a check point after it.
    #[error(
        "kernel `{kernel}` ran past its CPU deadline of {deadline:?}: block {block}, thread          {thread} was still running. Outputs of this launch may be partly written; give it more          time (CpuOptions::deadline, FERROCUDA_CPU_DEADLINE_MS) or look for a loop that never ends"
    )]
    DeadlineExceeded {
        /// The kernel.
        kernel: &'static str,
        /// A block still running.
        block: Dim3,
        /// A thread of it still running.
        thread: Dim3,
        /// The deadline it was given.
        deadline: std::time::Duration,
    },

    /// A simulated thread of a CPU launch needed more stack than it has
    /// ([`crate::CpuOptions::stack_bytes`], `FERROCUDA_CPU_STACK_KIB`).
    #[error(
        "kernel `{kernel}` overflowed its {stack_bytes}-byte stack on the CPU in block {block},          thread {thread} (deep recursion or large local arrays). Outputs of this launch may be          partly written; give threads more stack (CpuOptions::stack_bytes,          FERROCUDA_CPU_STACK_KIB) or use less"
    )]
    StackOverflow {
        /// The kernel.
        kernel: &'static str,
        /// The block.
        block: Dim3,
        /// The thread that overflowed.
        thread: Dim3,
        /// Its stack size.
        stack_bytes: usize,
    },

    /// The CPU executor found a bug in kernel code: a shared-memory race or uninitialized read
    /// (checked mode), barrier or warp divergence, or too much shared memory.
    #[error(
        "kernel `{kernel}`, block {block}, thread {thread}: {bug}. Outputs of this launch may \
         be partly written"
    )]
    KernelBug {
        /// The kernel.
        kernel: &'static str,
        /// The block.
        block: Dim3,
        /// The thread the bug is reported for (the later of two racing accesses; the first
        /// thread waiting at a divergent barrier).
        thread: Dim3,
        /// What is wrong (boxed: a race report names two accesses and their source lines,
        /// which would make every `Result` of this crate larger).
        bug: Box<ferrocuda_std::cpu::KernelBug>,
    },

    /// A kernel failed while running on the GPU (e.g. a trap from a failed bounds check). Such a
    /// fault destroys the CUDA context; ferrocuda makes a new one, so the device stays usable.
    #[error(
        "kernel `{kernel}` failed on {device} (seen at {detected}): {cause}. A trap means kernel code \
         panicked, usually an index out of bounds. The fault destroyed the CUDA context, so it had \
         to be recreated: {recovery}",
        cause = crate::cuda::describe(.source)
    )]
    KernelFailed {
        /// What became of the context: recreated (later launches work; buffers made before are
        /// lost) or, if that failed too, why.
        recovery: String,
        /// The kernel: the one launched, or the last one launched before the failure showed.
        kernel: &'static str,
        /// The device.
        device: String,
        /// The driver call where the failure showed: kernels run asynchronously, so it may be a
        /// later copy or synchronization.
        detected: &'static str,
        /// The driver's error.
        #[source]
        source: cudarc::driver::DriverError,
    },

    /// One chunk of a pipeline (`ferrocuda::ops::Pipeline`) failed: its copies or its kernel.
    #[error(
        "chunk {chunk} of {chunks} (elements {} to {}) failed: {source}; the outputs of chunks \
         0 to {chunk} (exclusive) are written, those of this chunk and every later one are \
         untouched",
        elements.start,
        elements.end
    )]
    ChunkFailed {
        /// The chunk, from 0.
        chunk: usize,
        /// Chunks in the run.
        chunks: usize,
        /// The elements of the inputs and outputs it covers.
        elements: std::ops::Range<usize>,
        /// What failed.
        #[source]
        source: Box<Error>,
    },
}

/// For [`Error::OutOfMemory`] under a memory limit: the limit and what is in use.
fn limit_note(limit: Option<usize>, total: usize, free: usize) -> String {
    match limit {
        Some(limit) => format!(
            " under the device memory limit of {limit} bytes, with {} bytes in use \
             (Device::with_memory_limit, {})",
            total.saturating_sub(free),
            crate::memory_limit::DEVICE_MEMORY_LIMIT_ENV
        ),
        None => String::new(),
    }
}
