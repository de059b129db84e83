//! The launch deadline (`LaunchOptions::deadline`): a kernel that never ends is a
//! `FaultKind::Timeout` naming the kernel and where its threads were, whether it loops alone,
//! through a block barrier, in every block of a big grid or in a cooperative launch.

mod support;

use std::time::{Duration, Instant};

use ferrocuda_ptx_emu::{launch_with, FaultKind, LaunchDims, LaunchKind, LaunchOptions, Module};
use support::*;

/// `spin` loops for ever (`bra` back to itself); `spin_at_barrier` loops for ever through a
/// `bar.sync`; `count_to` counts to its parameter, then stores it.
const PTX: &str = r#"
.version 7.0
.target sm_70
.address_size 64
.visible .entry spin()
{
$L_top:
	bra.uni $L_top;
}
.visible .entry spin_at_barrier()
{
	.reg .b32 %r<2>;
	mov.u32 %r1, 0;
$L_top:
	add.u32 %r1, %r1, 1;
	bar.sync 0;
	bra.uni $L_top;
}
.visible .entry count_to(.param .u64 p, .param .u32 n)
{
	.reg .pred %p<2>;
	.reg .b32 %r<3>;
	.reg .b64 %rd<2>;
	ld.param.u64 %rd1, [p];
	ld.param.u32 %r2, [n];
	mov.u32 %r1, 0;
$L_top:
	add.u32 %r1, %r1, 1;
	setp.lt.u32 %p1, %r1, %r2;
	@%p1 bra $L_top;
	st.global.u32 [%rd1], %r1;
	ret;
}
"#;

fn module() -> Module {
    Module::parse(PTX).unwrap()
}

#[allow(clippy::too_many_arguments)]
fn run(
    d: &Device,
    module: &Module,
    kernel: &str,
    grid: u32,
    block: u32,
    kind: LaunchKind,
    deadline: Duration,
    params: &[&[u8]],
) -> Result<(), ferrocuda_ptx_emu::Fault> {
    let dims = LaunchDims {
        grid: [grid, 1, 1],
        block: [block, 1, 1],
        dynamic_shared_bytes: 0,
    };
    let options = LaunchOptions {
        kind,
        deadline: Some(deadline),
        profile: false,
    };
    let mut printed = Vec::new();
    launch_with(
        module,
        kernel,
        dims,
        params,
        &d.memory,
        &options,
        &mut printed,
    )
    .map(|_| ())
}

/// The emulator review's open item: a kernel that loops for ever hung its launch. With a
/// deadline of 200 ms it is a timeout naming the kernel, block, thread and line, well within
/// seconds, in each shape of endless loop.
#[test]
fn an_endless_loop_is_a_timeout_at_the_deadline() {
    let d = Device::new();
    let module = module();
    let deadline = Duration::from_millis(200);
    for (kernel, grid, block, kind) in [
        ("spin", 1, 1, LaunchKind::Plain),
        ("spin", 10_000, 64, LaunchKind::Plain),
        ("spin_at_barrier", 4, 128, LaunchKind::Plain),
        ("spin", 3, 32, LaunchKind::Cooperative),
    ] {
        let start = Instant::now();
        let fault = run(&d, &module, kernel, grid, block, kind, deadline, &[])
            .expect_err("an endless loop cannot end");
        let took = start.elapsed();
        assert_eq!(fault.kind, FaultKind::Timeout, "{kernel}: {fault}");
        assert!(
            fault.message.starts_with(&format!("{kernel}: block (")),
            "{fault}"
        );
        assert!(fault.message.contains("deadline of 0.200 s"), "{fault}");
        assert!(fault.message.contains("line "), "{fault}");
        assert!(took < Duration::from_secs(20), "{kernel}: {took:?}");
    }
}

/// A launch that ends before its deadline is not affected by having one.
#[test]
fn a_launch_within_its_deadline_runs_to_its_end() {
    let d = Device::new();
    let out = d.zeros::<u32>(1);
    let n = 1_000_000u32;
    let (pointer, count) = (out.addr.to_le_bytes(), n.to_le_bytes());
    let params: [&[u8]; 2] = [&pointer, &count];
    run(
        &d,
        &module(),
        "count_to",
        1,
        1,
        LaunchKind::Plain,
        Duration::from_secs(600),
        &params,
    )
    .unwrap();
    assert_eq!(d.download::<u32>(out), [n]);
}
