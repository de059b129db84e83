// A generic kernel launched for a type its `instances(...)` does not list: there is no PTX entry
// for it, so the launch must not compile, and the error names the instances that were built.
use ferrocuda_host::{launch, Device};
use ferrocuda_std::{kernel, thread, Number, Out};

#[kernel(same_len(x, out), instances(f32, f64))]
pub fn scale<T: Number>(x: &[T], k: T, out: Out<T>) {
    let i = thread::index_1d();
    if i < out.len() {
        out.set(i, x[i] * k);
    }
}

fn main() {
    let module = Device::cpu().load(&ferrocuda_host::Ptx::new("none", "")).unwrap();
    let (x, mut out) = (vec![1u32; 4], vec![0u32; 4]);
    // By the arguments' types, and by turbofish.
    let _ = launch!(module, scale[1, 4](&x, 2u32, &mut out));
    let _ = launch!(module, scale::<i64>[1, 4](&[1i64; 4], 2i64, &mut [0i64; 4]));
}
