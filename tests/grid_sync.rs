//! Grid-wide synchronisation: test-kernels' `grid_sum` (one launch: block partials, `grid.sync()`,
//! block 0 sums them) against an f64 reference on the CPU executor and on a GPU (the PTX
//! emulator in CI); a plain launch of it, and a grid larger than what is co-resident, are errors
//! saying what to do; a grid sync that only some blocks reach is reported on the CPU.

mod support;

use ferrocuda::{launch, launch_cooperative, Error, KernelBug, Module};
use test_kernels::grid::{grid_sum, grid_sync_in_block_0_only, GRID_SUM_BLOCK};

fn modules(test: &str) -> Vec<Module> {
    support::on_every_device(test, support::test_kernels())
}

/// `grid_sum` of `x` over `blocks` blocks, and the f64 sum with its error bound (f32 additions:
/// a relative error of about `n × 2^-24` of `Σ|x|` at worst, far less in practice).
fn grid_sum_on(module: &Module, x: &[f32], blocks: u32) -> (f32, f64, f64) {
    let mut partial = vec![f32::NAN; blocks as usize];
    let mut total = vec![f32::NAN];
    launch_cooperative!(
        module,
        grid_sum[blocks, GRID_SUM_BLOCK](x, &mut partial, &mut total)
    )
    .unwrap_or_else(|e| panic!("{} blocks: {e}", blocks));
    let reference: f64 = x.iter().map(|&v| v as f64).sum();
    let magnitude: f64 = x.iter().map(|&v| (v as f64).abs()).sum();
    let bound = magnitude * 1e-6 * (x.len() as f64).log2().max(1.0) + 1e-30;
    (total[0], reference, bound)
}

#[test]
fn grid_sum_matches_the_f64_sum_in_one_launch() {
    for module in modules("grid_sum_matches_the_f64_sum_in_one_launch") {
        let device = module.device();
        let (mut rng, seed) = support::rng();
        let sizes = support::size_for(device, vec![1, 255, 10_000, 1 << 20], vec![1, 255, 3000]);
        for n in sizes {
            let x = support::random_f32(&mut rng, n);
            for blocks in [1, 2, 5] {
                let (got, want, bound) = grid_sum_on(&module, &x, blocks);
                assert!(
                    (got as f64 - want).abs() <= bound,
                    "{device}: n={n} blocks={blocks} seed={seed}: got {got}, want {want} (bound {bound:e})"
                );
            }
        }
    }
}

#[test]
fn a_plain_launch_of_a_cooperative_kernel_is_an_error_naming_the_fix() {
    for module in modules("a_plain_launch_of_a_cooperative_kernel_is_an_error_naming_the_fix") {
        let x = [1.0f32; 4];
        let (mut partial, mut total) = (vec![0.0f32; 1], vec![0.0f32; 1]);
        let error =
            launch!(module, grid_sum[1, GRID_SUM_BLOCK](&x, &mut partial, &mut total)).unwrap_err();
        assert!(
            matches!(error, Error::NeedsCooperativeLaunch { kernel: "grid_sum" }),
            "{error}"
        );
        assert!(error.to_string().contains("launch_cooperative!"), "{error}");
        assert_eq!(total, [0.0], "nothing ran");
    }
}

#[test]
fn a_grid_larger_than_what_is_co_resident_is_refused_with_the_limit() {
    for module in modules("a_grid_larger_than_what_is_co_resident_is_refused_with_the_limit") {
        let device = module.device().clone();
        let x = vec![1.0f32; 1000];
        let blocks = 1 << 20;
        let (mut partial, mut total) = (vec![0.0f32; blocks], vec![0.0f32; 1]);
        let error = launch_cooperative!(
            module,
            grid_sum[blocks, GRID_SUM_BLOCK](&x, &mut partial, &mut total)
        )
        .unwrap_err();
        let Error::CooperativeGridTooLarge {
            blocks: asked,
            max_blocks,
            block_threads,
            ..
        } = error
        else {
            panic!("{device}: {error}");
        };
        assert_eq!((asked, block_threads), (blocks as u64, 256));
        let message = error.to_string();
        assert!(
            message.contains(&format!("at most {max_blocks} blocks of 256 threads")),
            "{message}"
        );
        let sms = device.properties().multiprocessors as u64;
        assert!(
            max_blocks >= sms && max_blocks % sms == 0,
            "{device}: {max_blocks} is blocks per multiprocessor x {sms}: {message}"
        );
        if device.properties().kind == ferrocuda::DeviceKind::Cpu {
            // 2048 threads per worker: 8 blocks of 256 each, all of which run at once.
            assert_eq!(max_blocks, 8 * sms, "{message}");
            let (got, want, bound) = grid_sum_on(&module, &x, max_blocks as u32);
            assert!((got as f64 - want).abs() <= bound, "{got} vs {want}");
        }
    }
}

#[test]
fn a_grid_sync_that_only_some_blocks_reach_is_reported_on_the_cpu() {
    let cpu = ferrocuda::Device::cpu_checked(true);
    let module = cpu.load(support::test_kernels()).unwrap();
    let mut out = vec![0u32; 3];
    let error =
        launch_cooperative!(module, grid_sync_in_block_0_only[3, 32](&mut out)).unwrap_err();
    let Error::KernelBug { block, bug, .. } = &error else {
        panic!("{error}");
    };
    assert_eq!(*block, ferrocuda::Dim3::new(0, 0, 0), "{error}");
    let KernelBug::GridSyncDivergence { detail } = &**bug else {
        panic!("{error}");
    };
    assert!(
        detail.contains("block (0, 0, 0)") && detail.contains("ended without reaching it"),
        "{detail}"
    );
    assert!(detail.contains("test-kernels/src/grid.rs"), "{detail}");
}

/// Issue 29, C1: a cooperative launch on the CPU executor runs every block at once on an OS
/// thread of its own. When one of them could not be started (a process at its address-space
/// limit), the blocks already started waited at `grid.sync()` for it forever. The launch must
/// fail naming the cause, and the device must work on. Run in a child process (this test binary
/// again), whose address space is limited to a little more than one block thread's stack.
#[test]
fn a_cooperative_block_whose_thread_cannot_start_fails_the_launch_on_the_cpu() {
    const TEST: &str = "a_cooperative_block_whose_thread_cannot_start_fails_the_launch_on_the_cpu";
    const CHILD: &str = "FERROCUDA_TEST_THREAD_LIMIT_CHILD";
    const DONE: &str = "child: the launch failed naming the block, and the device worked on";
    if std::env::var_os(CHILD).is_some() {
        thread_limit_child();
        println!("{DONE}");
        return;
    }
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", TEST, "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        // Each block's OS thread reserves 1 GiB of stack (address space, not memory).
        .env("RUST_MIN_STACK", (1usize << 30).to_string())
        // One malloc arena: a new thread's arena would take address space of its own.
        .env("MALLOC_ARENA_MAX", "1")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > std::time::Duration::from_secs(120) {
            child.kill().unwrap();
            panic!("the launch hung: the started blocks still wait for the one that never ran");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let output = child.wait_with_output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        output.status.success() && stdout.contains(DONE),
        "{}\nstdout:\n{stdout}\nstderr:\n{stderr}",
        output.status
    );
}

/// The child of the test above: a cooperative launch of more blocks than the address space
/// allows threads for.
fn thread_limit_child() {
    let module = ferrocuda::Device::cpu()
        .load(support::test_kernels())
        .unwrap();
    let x = vec![1.0f32; 4096];
    // Everything a launch needs once is in place before the limit.
    let (got, want, _) = grid_sum_on(&module, &x, 1);
    assert_eq!(got as f64, want);
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `limit` is a valid rlimit to fill.
    assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_AS, &mut limit) }, 0);
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap();
    let pages: u64 = statm.split_whitespace().next().unwrap().parse().unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let lowered = libc::rlimit {
        rlim_cur: pages * page + (3 << 29), // room for one block's thread (1 GiB) and its stacks
        rlim_max: limit.rlim_max,
    };
    // SAFETY: a valid rlimit; the soft limit only, raised again below.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &lowered) }, 0);
    let blocks = 4;
    let mut partial = vec![f32::NAN; blocks];
    let mut total = vec![f32::NAN];
    let outcome = launch_cooperative!(
        module,
        grid_sum[blocks as u32, GRID_SUM_BLOCK](&x, &mut partial, &mut total)
    );
    // SAFETY: as above; back to the limit the process started with.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) }, 0);
    let error = outcome.unwrap_err();
    let Error::CooperativeBlockNotStarted {
        kernel,
        block,
        blocks: asked,
        ..
    } = &error
    else {
        panic!("expected CooperativeBlockNotStarted, got {error:?}: {error}");
    };
    assert_eq!((*kernel, *asked), ("grid_sum", blocks as u64), "{error}");
    assert!(block.x >= 1 && (block.x as usize) < blocks, "{error}");
    let message = error.to_string();
    assert!(
        message.contains("could not start the thread of block") && message.contains("fewer blocks"),
        "{message}"
    );
    let (got, want, _) = grid_sum_on(&module, &x, 2);
    assert_eq!(got as f64, want);
}
