// S7 (issue 33): cudarc's memory in ferrocuda. A shared `&CudaSlice` cannot be a kernel's
// output (only `&mut` memory can); a slice handed to a `DeviceBuffer` is moved into it, so the
// program cannot also read, write or free it; and a buffer handed back with `into_cudarc` is gone.
// (Ordering across streams and the context are checked at run time: tests/gpu_interop.rs.)
use ferrocuda_host::cudarc::driver::{CudaContext, CudaSlice};
use ferrocuda_host::{launch, Device, DeviceBuffer, Ptx};
use ferrocuda_std::{kernel, thread, Out};

#[kernel]
pub fn fill(out: Out<u32>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, 1);
    }
}

static PTX: Ptx = Ptx::new("none", "");

fn shared_slice_for_an_output(slice: &CudaSlice<u32>) -> ferrocuda_host::Result<()> {
    let kernels = Device::cpu().load(&PTX)?;
    launch!(kernels, fill[1, 32](slice))
}

fn main() {
    let ctx = CudaContext::new(0).unwrap();
    let stream = ctx.default_stream();
    let slice = stream.alloc_zeros::<u32>(4).unwrap();
    let buffer = DeviceBuffer::from_cudarc(slice).unwrap();
    let _ = stream.clone_dtoh(&slice); // the buffer owns it now
    let back = buffer.into_cudarc().unwrap();
    let _ = buffer.len(); // handed back to cudarc
    drop(back);
}
