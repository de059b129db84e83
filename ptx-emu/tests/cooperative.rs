//! Cooperative launches: test-kernels' `grid_sum` (block partials, a grid barrier in global
//! memory, block 0 sums them) needs every block running at once; against an f64 reference. A
//! grid barrier only block 0 reaches is a divergence fault, not a hang.

mod support;

use ferrocuda_ptx_emu::{launch_printing, FaultKind, LaunchDims, LaunchKind};
use support::*;

/// `kernel` of test-kernels as a cooperative launch of `blocks` blocks of `threads`, with the
/// grid barrier (a zeroed word, pointer and length) after `args`.
fn cooperative(
    d: &Device,
    kernel: &str,
    blocks: u32,
    threads: u32,
    args: Vec<Arg>,
) -> Result<(), ferrocuda_ptx_emu::Fault> {
    let barrier = d.zeros::<u32>(1);
    let mut params: Vec<Vec<u8>> = Vec::new();
    for arg in args.iter().chain([&Arg::Slice(barrier)]) {
        match arg {
            Arg::Slice(b) => {
                params.push(b.addr.to_le_bytes().to_vec());
                params.push(b.len.to_le_bytes().to_vec());
            }
            Arg::Value(v) => params.push(v.clone()),
        }
    }
    let refs: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
    let dims = LaunchDims {
        grid: [blocks, 1, 1],
        block: [threads, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let mut printed = Vec::new();
    let kind = LaunchKind::Cooperative;
    launch_printing(
        test_kernels(),
        kernel,
        dims,
        &refs,
        &d.memory,
        kind,
        &mut printed,
    )
    .map(|_| ())
}

#[test]
fn grid_sum_sums_across_blocks_in_one_launch() {
    let d = Device::new();
    for (n, blocks) in [(1usize, 1u32), (700, 3), (2000, 6)] {
        let x = random_f32(n as u64, n);
        let input = d.upload(&x);
        let partial = d.upload(&vec![f32::NAN; blocks as usize]);
        let total = d.upload(&[f32::NAN]);
        let args = vec![Arg::Slice(input), Arg::Slice(partial), Arg::Slice(total)];
        cooperative(&d, "grid_sum", blocks, 256, args).unwrap_or_else(|f| panic!("{n}: {f}"));
        let want: f64 = x.iter().map(|&v| v as f64).sum();
        assert_close(&d.download::<f32>(total), &[want], 1e-5, &format!("n={n}"));
        // Every block wrote its partial before block 0 read them.
        assert!(d.download::<f32>(partial).iter().all(|p| p.is_finite()));
    }
}

#[test]
fn a_grid_barrier_that_only_block_0_reaches_is_a_divergence_fault() {
    let d = Device::new();
    let out = d.zeros::<u32>(3);
    let fault = cooperative(
        &d,
        "grid_sync_in_block_0_only",
        3,
        32,
        vec![Arg::Slice(out)],
    )
    .expect_err("block 0 waits for blocks that ended");
    assert_eq!(fault.kind, FaultKind::Divergence, "{fault}");
    assert!(fault.message.contains("block (0, 0, 0)"), "{fault}");
    assert!(
        fault
            .message
            .contains("after every other block of the cooperative launch ended"),
        "{fault}"
    );
    // The other blocks ran to their end.
    assert_eq!(d.download::<u32>(out)[1..], [1, 1]);
}

/// The environment variable that makes this test binary, run again by
/// `a_block_whose_thread_cannot_start_fails_the_launch_and_leaves_no_thread_waiting`, the child
/// that limits its address space.
const SPAWN_FAILURE_CHILD: &str = "FERROCUDA_EMU_TEST_SPAWN_FAILURE_CHILD";

/// Issue 29 (C1): a cooperative launch where one block's host thread could not be started left
/// the blocks already started waiting at grid.sync() for ever. Reproduced for real: a child
/// process (this test binary again) with 64 MiB thread stacks (RUST_MIN_STACK) limits its
/// address space to a little more than it uses, so the launch's fourth or so thread cannot be
/// mapped. The launch must fail with OutOfResources naming the cause, and return; after the
/// limit is lifted, the same launch runs. The parent kills the child after 120 s (a hang fails).
#[test]
fn a_block_whose_thread_cannot_start_fails_the_launch_and_leaves_no_thread_waiting() {
    if std::env::var_os(SPAWN_FAILURE_CHILD).is_some() {
        return spawn_failure_child();
    }
    let exe = std::env::current_exe().unwrap();
    let mut child = std::process::Command::new(exe)
        .args([
            "--exact",
            "a_block_whose_thread_cannot_start_fails_the_launch_and_leaves_no_thread_waiting",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(SPAWN_FAILURE_CHILD, "1")
        .env("RUST_MIN_STACK", (64usize << 20).to_string())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if start.elapsed() > std::time::Duration::from_secs(120) {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let output = child.wait_with_output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let status = status.unwrap_or_else(|| panic!("the launch hung (killed after 120 s):\n{text}"));
    assert!(status.success(), "{status}:\n{text}");
    assert!(text.contains("test result: ok. 1 passed"), "{text}");
}

fn spawn_failure_child() {
    let d = Device::new();
    test_kernels(); // parsed before the limit
    let n = 4096;
    let blocks = 16;
    let x = random_f32(7, n);
    let input = d.upload(&x);
    let partial = d.upload(&vec![f32::NAN; blocks as usize]);
    let total = d.upload(&[f32::NAN]);
    let args = || vec![Arg::Slice(input), Arg::Slice(partial), Arg::Slice(total)];
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().next().unwrap().parse().unwrap();
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit writes the struct it is given.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut old) }, 0);
    let limited = libc::rlimit {
        // What the process maps now and 160 MiB: two or three 64 MiB stacks.
        rlim_cur: pages * 4096 + (160 << 20),
        rlim_max: old.rlim_max,
    };
    // SAFETY: setrlimit reads the struct it is given.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limited) }, 0);
    let outcome = cooperative(&d, "grid_sum", blocks, 256, args());
    // SAFETY: as above; the soft limit goes back to what it was (at most the hard limit).
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &old) }, 0);
    let fault = outcome.expect_err("16 threads of 64 MiB stacks cannot be mapped");
    assert_eq!(fault.kind, FaultKind::OutOfResources, "{fault}");
    assert!(
        fault
            .message
            .starts_with("grid_sum: could not start a host thread for block"),
        "{fault}"
    );
    assert!(fault.message.contains("no block ran"), "{fault}");
    // Nothing ran (the partials are untouched), and with room again the launch works.
    assert!(d.download::<f32>(partial).iter().all(|p| p.is_nan()));
    cooperative(&d, "grid_sum", blocks, 256, args()).unwrap();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    assert_close(&d.download::<f32>(total), &[want], 1e-5, "after the limit");
}
