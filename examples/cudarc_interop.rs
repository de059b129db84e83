//! One ferrocuda kernel inside a program that already uses cudarc (directly, or through candle or
//! burn, which sit on it): cudarc allocates and fills the data, a ferrocuda kernel runs on it in
//! place, and cudarc reads the result back. No copy through the host, no second CUDA context.
//!
//! ```sh
//! cargo run --example cudarc_interop    # needs a GPU, or the PTX emulator (FERROCUDA_LIBCUDA)
//! ```

use ferrocuda::cudarc::driver::CudaContext; // the cudarc version ferrocuda uses
use ferrocuda::kernels::{saxpy, vector_add};
use ferrocuda::{launch, Device, DeviceBuffer, Stream, KERNELS};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    if Device::gpu_count().unwrap_or(0) == 0 {
        println!("no CUDA device: this example needs a GPU (or the PTX emulator)");
        return Ok(());
    }
    // The program's own cudarc objects.
    let ctx = CudaContext::new(0)?;
    let cu_stream = ctx.new_stream()?;
    let n = 1 << 16;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let a_dev = cu_stream.clone_htod(&a)?;
    let b_dev = cu_stream.clone_htod(&vec![1.0f32; n])?;
    let mut sum = cu_stream.alloc_zeros::<f32>(n)?;

    // ferrocuda on the same context and stream: borrowed slices are kernel arguments, and the
    // launch is ordered with the cudarc work queued on that stream.
    let device = Device::from_cudarc(ctx.clone())?;
    let stream = Stream::from_cudarc(cu_stream.clone())?;
    let kernels = device.load(&KERNELS)?;
    launch!(kernels, vector_add[n.div_ceil(256), 256, &stream](&a_dev, &b_dev, &mut sum))?;

    // A slice can also become a ferrocuda buffer and go back, without a copy.
    let mut y = DeviceBuffer::from_cudarc(sum)?;
    launch!(kernels, saxpy[64, 256, &stream](2.0f32, &b_dev, &mut y))?;
    let sum = y.into_cudarc()?;

    // cudarc reads the result.
    let out = cu_stream.clone_dtoh(&sum)?;
    assert!(out.iter().enumerate().all(|(i, &x)| x == i as f32 + 3.0));
    println!(
        "{n} elements filled by cudarc, a + b then 2b + y by ferrocuda on {device}, read back by \
         cudarc: out[41] = {}",
        out[41]
    );
    Ok(())
}
