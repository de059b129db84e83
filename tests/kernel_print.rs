//! `ferrocuda_std::println!` from a kernel: test-kernels' `print_mixed` prints one argument of
//! each printable type per thread; the lines must be Rust's own formatting of the same values
//! (floats as C's `%f`), on the CPU executor (prefixed with the thread's coordinates, captured
//! with `CpuOptions::print_capture`) and on a GPU (the PTX emulator in CI, whose `vprintf` writes
//! to stdout: a child process runs the GPU launch and this test reads its output).

mod support;

use ferrocuda::{launch, CpuOptions, Device, Module, PrintCapture};
use test_kernels::print::print_mixed;

/// Inputs with a float of each shape: fractional, whole, negative, negative zero, large,
/// infinite, and one above 1 for the `bool`.
const X: [f32; 7] = [0.1, 2.0, -2.25, -0.0, 1.0e7, f32::INFINITY, 1.5e-3];
const SCALE: f64 = 0.5;
const BLOCKS: u32 = 2;
const THREADS: u32 = 4;

/// What thread `i` prints, by Rust's formatting: `{:.6}` is C's `%f` for finite values, and both
/// write `inf`.
fn expected_line(i: usize) -> String {
    let v = X[i];
    format!(
        "i={i} x={:.6} y={:.3} neg={} big={} min={} hex={:x} small={} half={} ok={} str{{}} c 100%",
        v as f64,
        v as f64 * SCALE,
        -(i as i32) - 1,
        u64::MAX - i as u64,
        i64::MIN + i as i64,
        0xbeef0u32 + i as u32,
        (i as u8).wrapping_mul(3),
        -(i as i16),
        v > 1.0,
    )
}

fn first_thread_line() -> String {
    format!("{{thread 0}} of {} threads", X.len())
}

fn run(module: &Module) {
    launch!(module, print_mixed[BLOCKS, THREADS](&X[..], SCALE)).unwrap();
    module.device().synchronize().unwrap();
}

#[test]
fn cpu_lines_carry_the_thread_s_coordinates_in_each_thread_s_order() {
    let capture = PrintCapture::new();
    let cpu = Device::cpu_with(CpuOptions {
        print_capture: Some(capture.clone()),
        ..CpuOptions::from_env().unwrap()
    })
    .unwrap();
    run(&cpu.load(support::test_kernels()).unwrap());
    let lines = capture.take();
    let prefix = |i: usize| {
        let (block, thread) = (i as u32 / THREADS, i as u32 % THREADS);
        format!("[block ({block}, 0, 0) thread ({thread}, 0, 0)] ")
    };
    let mut expected: Vec<String> = (0..X.len())
        .map(|i| prefix(i) + &expected_line(i))
        .collect();
    expected.push(prefix(0) + &first_thread_line());
    let mut sorted = lines.clone();
    sorted.sort();
    expected.sort();
    assert_eq!(sorted, expected);
    // Thread 0's two lines in its order.
    let of_thread_0: Vec<&String> = lines.iter().filter(|l| l.starts_with(&prefix(0))).collect();
    assert_eq!(of_thread_0[0], &(prefix(0) + &expected_line(0)));
    assert_eq!(of_thread_0[1], &(prefix(0) + &first_thread_line()));
    // Nothing is captured outside the launch.
    assert!(capture.take().is_empty());
}

/// The child half of `gpu_lines_are_c_printf_s_rendering_of_the_same_values`: launches on the
/// GPU and synchronises, which is when the driver prints.
#[test]
#[ignore = "run by gpu_lines_are_c_printf_s_rendering_of_the_same_values in a child process"]
fn gpu_print_child() {
    let gpu = Device::cuda(0).expect("the parent checked for a GPU");
    // The harness wrote "test gpu_print_child ... " without a newline.
    println!();
    run(&gpu.load(support::test_kernels()).unwrap());
}

#[test]
fn gpu_lines_are_c_printf_s_rendering_of_the_same_values() {
    let test = "gpu_lines_are_c_printf_s_rendering_of_the_same_values";
    if support::gpu_or_skip(test).is_none() {
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let stdout = support::stdout_of(
        std::process::Command::new(exe)
            .args(["gpu_print_child", "--exact", "--ignored", "--nocapture"])
            .args(["--test-threads", "1"]),
    );
    // The harness's own lines start otherwise ("running 1 test", "test gpu_print_child ...").
    let mut printed: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("i=") || l.starts_with("{thread 0}"))
        .collect();
    let mut expected: Vec<String> = (0..X.len()).map(expected_line).collect();
    expected.push(first_thread_line());
    // Each thread's lines in its order: thread 0's first line before its second.
    let first = printed.iter().position(|l| *l == expected[0]);
    let second = printed.iter().position(|l| *l == first_thread_line());
    assert!(
        first.is_some() && first < second,
        "thread 0's lines out of order or missing:\n{stdout}"
    );
    printed.sort();
    expected.sort();
    assert_eq!(printed, expected, "stdout:\n{stdout}");
}
