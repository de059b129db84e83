//! Printing from a kernel: one line of every printable type per thread.

use ferrocuda_std::{kernel, thread};

/// Each thread `i < x.len()` prints one line with an argument of each printable type (from its
/// index and element), and thread 0 a second line after it (each thread's lines in order).
#[kernel]
pub fn print_mixed(x: &[f32], scale: f64) {
    let i = thread::index_1d();
    if i >= x.len() {
        return;
    }
    let v = x[i];
    ferrocuda_std::println!(
        "i={} x={} y={:.3} neg={} big={} min={} hex={:x} small={} half={} ok={} {} {} 100%",
        i,
        v,
        v as f64 * scale,
        -(i as i32) - 1,
        u64::MAX - i as u64,
        i64::MIN + i as i64,
        0xbeef0u32 + i as u32,
        (i as u8).wrapping_mul(3),
        -(i as i16),
        v > 1.0,
        "str{}",
        'c'
    );
    if i == 0 {
        ferrocuda_std::println!("{{thread 0}} of {} threads", x.len() as u32);
    }
}
