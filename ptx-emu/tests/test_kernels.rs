//! test-kernels' correct kernels (warp operations, atomics, barrier votes, math) through the
//! emulator, against hand-computed results and the host build of the same math.

mod support;

use support::*;

/// What `warp_ops` gives lane `lane` when the lanes of `mask` take part: a source lane outside
/// the mask (undefined in PTX) gives the lane's own value, as on the CPU executor
/// (tests/checked_mode.rs has the same reference).
fn warp_ops_reference(mask: u32, src: u32, lane: u32) -> [u32; 9] {
    let value = |l: u32| 10 * l + 1;
    let from = |source: Option<u32>| match source {
        Some(s) if s < 32 && mask & (1 << s) != 0 => value(s),
        _ => value(lane),
    };
    let members = (0..32).filter(|l| mask & (1 << l) != 0);
    let ballot = members
        .clone()
        .filter(|l| l % 3 == 0)
        .fold(0, |b, l| b | 1 << l);
    let wide_source = if mask & (1 << (lane ^ 4)) != 0 {
        lane ^ 4
    } else {
        lane
    };
    [
        from(Some(src % 32)),
        from(lane.checked_sub(1)),
        from(Some(lane + 2)),
        from(Some(lane ^ 1)),
        members.clone().all(|l| value(l) % 2 == 1) as u32,
        members.clone().any(|l| l == 5) as u32,
        ballot,
        wide_source,
        value(wide_source),
    ]
}

#[test]
fn warp_ops_with_full_and_partial_masks() {
    let d = Device::new();
    let n = 128;
    for mask in [u32::MAX, 0x0000_ffff, 0xaaaa_aaaa, 0x8000_0001, 0x0000_0020] {
        for src in [0u32, 5, 31, 33] {
            let out = d.upload(&vec![u32::MAX; n * 9]);
            let args = [Arg::Slice(out), value(mask), value(src)];
            d.launch(test_kernels(), "warp_ops", [2, 1, 1], [64, 1, 1], 0, &args)
                .unwrap_or_else(|f| panic!("mask {mask:#x}: {f}"));
            let got = d.download::<u32>(out);
            for i in 0..n {
                let lane = (i % 32) as u32;
                let want = if mask & (1 << lane) != 0 {
                    warp_ops_reference(mask, src, lane)
                } else {
                    [u32::MAX; 9]
                };
                assert_eq!(
                    &got[i * 9..i * 9 + 9],
                    &want,
                    "thread {i}, mask {mask:#x}, src {src}"
                );
            }
        }
    }
}

#[test]
fn warp_reductions_in_a_partial_last_warp() {
    let d = Device::new();
    // 80 threads: the last warp has 16 lanes, which reduce among themselves.
    let x = random_f32(22, 80);
    let (bx, out) = (d.upload(&x), d.zeros::<f32>(80 * 3));
    d.launch(
        test_kernels(),
        "warp_reductions",
        [1, 1, 1],
        [80, 1, 1],
        0,
        &[Arg::Slice(bx), Arg::Slice(out)],
    )
    .unwrap();
    let got = d.download::<f32>(out);
    for i in 0..80 {
        let warp = &x[i / 32 * 32..(i / 32 * 32 + 32).min(80)];
        let sum: f64 = warp.iter().map(|&v| v as f64).sum();
        assert!((got[3 * i] as f64 - sum).abs() < 1e-5, "sum at {i}");
        assert_eq!(
            got[3 * i + 1],
            warp.iter().copied().fold(f32::INFINITY, f32::min)
        );
        assert_eq!(
            got[3 * i + 2],
            warp.iter().copied().fold(f32::NEG_INFINITY, f32::max)
        );
    }
}

#[test]
fn atomics_of_every_type_from_parallel_blocks() {
    let d = Device::new();
    let (blocks, threads) = (16u32, 128u32);
    let count = (blocks * threads) as u64;
    let (u, i) = (
        d.upload(&[0u32, 0, u32::MAX, 0, 0, 0]),
        d.upload(&[0i32, 0, i32::MAX, i32::MIN, 0, 0]),
    );
    let (ul, il) = (
        d.upload(&[0u64, 0, u64::MAX, 0, 0, 0]),
        d.upload(&[0i64, 0, i64::MAX, i64::MIN, 0, 0]),
    );
    let (f, dd) = (
        d.upload(&[0f32, 0.0, f32::MAX, f32::MIN, 0.0, 0.0]),
        d.upload(&[0f64, 0.0, f64::MAX, f64::MIN, 0.0, 0.0]),
    );
    let args = [u, i, ul, il, f, dd].map(Arg::Slice);
    d.launch(
        test_kernels(),
        "atomics_every_type",
        [blocks, 1, 1],
        [threads, 1, 1],
        0,
        &args,
    )
    .unwrap();
    let c = count;
    let u = d.download::<u32>(u);
    assert_eq!(
        [u[0], u[1], u[2], u[3], u[5]],
        [
            c as u32,
            (c as u32).wrapping_neg(),
            0,
            c as u32 - 1,
            c as u32
        ]
    );
    assert!(u[4] < c as u32);
    let ul = d.download::<u64>(ul);
    assert_eq!(
        [ul[0], ul[1], ul[2], ul[3], ul[5]],
        [c, c.wrapping_neg(), 0, c - 1, c]
    );
    let i = d.download::<i32>(i);
    assert_eq!(
        [i[0], i[1], i[2], i[3], i[5]],
        [c as i32, -(c as i32), 0, c as i32 - 1, c as i32]
    );
    let il = d.download::<i64>(il);
    assert_eq!(
        [il[0], il[1], il[2], il[3], il[5]],
        [c as i64, -(c as i64), 0, c as i64 - 1, c as i64]
    );
    let f = d.download::<f32>(f);
    assert_eq!(
        [f[0], f[1], f[2], f[3], f[5]],
        [c as f32, -(c as f32), 0.0, (c - 1) as f32, c as f32]
    );
    let dd = d.download::<f64>(dd);
    assert_eq!(
        [dd[0], dd[1], dd[2], dd[3], dd[5]],
        [c as f64, -(c as f64), 0.0, (c - 1) as f64, c as f64]
    );
}

#[test]
fn shared_atomics_barrier_votes_and_block_sums() {
    let d = Device::new();
    let out = d.zeros::<u32>(8);
    d.launch(
        test_kernels(),
        "shared_atomics",
        [4, 1, 1],
        [96, 1, 1],
        0,
        &[Arg::Slice(out)],
    )
    .unwrap();
    assert_eq!(d.download::<u32>(out), [96, 95].repeat(4));

    let x: Vec<f32> = (0..100)
        .map(|i| if i % 3 == 0 { 1.0 } else { -1.0 })
        .collect();
    let (bx, votes) = (d.upload(&x), d.zeros::<u32>(128 * 3));
    d.launch(
        test_kernels(),
        "barrier_votes",
        [2, 1, 1],
        [64, 1, 1],
        0,
        &[Arg::Slice(bx), Arg::Slice(votes)],
    )
    .unwrap();
    let votes = d.download::<u32>(votes);
    for i in 0..128 {
        let block = i / 64 * 64..(i / 64 + 1) * 64;
        let count = block.filter(|&j| j < 100 && j % 3 == 0).count() as u32;
        assert_eq!(
            &votes[3 * i..3 * i + 3],
            &[count, 0, (count > 0) as u32],
            "thread {i}"
        );
    }

    let x = random_f32(23, 1000);
    let (bx, sums) = (d.upload(&x), d.zeros::<f32>(1));
    d.launch(
        test_kernels(),
        "block_sums",
        [4, 1, 1],
        [256, 1, 1],
        0,
        &[Arg::Slice(bx), Arg::Slice(sums)],
    )
    .unwrap();
    let want: f64 = x.iter().map(|&v| v as f64).sum();
    assert!(
        (d.download::<f32>(sums)[0] as f64 - want).abs() < 1e-3,
        "block_sums"
    );
}

#[test]
fn math_functions_match_the_host_build() {
    // The reproducible tier: the same bits on the GPU and the host.
    use ferrocuda_std::math::{self as default, reproducible as math};
    let d = Device::new();
    let x: Vec<f32> = random_f32(24, 2000)
        .iter()
        .map(|v| 8.0 * v)
        .chain([0.0, -0.0, 1.0, 0.5, 1e-3, 30.0, -30.0])
        .collect();
    let (bx, out) = (d.upload(&x), d.zeros::<f32>(x.len() * 13));
    d.launch(
        test_kernels(),
        "math_functions",
        [8, 1, 1],
        [256, 1, 1],
        0,
        &[Arg::Slice(bx), Arg::Slice(out)],
    )
    .unwrap();
    let got = d.download::<f32>(out);
    for (i, &v) in x.iter().enumerate() {
        let (sin, cos) = math::sincospi(v);
        let accurate = [
            math::exp(v),
            math::exp2(v),
            math::ln(v),
            math::sqrt(v),
            sin,
            cos,
            math::erfc(v),
            math::normal_cdf(v),
        ];
        for (j, want) in accurate.iter().enumerate() {
            let g = got[13 * i + j];
            assert!(
                g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                "function {j} of {v}: {g} vs host {want}"
            );
        }
        // The fast ones use ex2/lg2.approx on the device: within 1e-5 relative (or 1e-6 near 0).
        let fast = [
            (default::fast_exp(v), 8),
            (default::fast_exp2(v), 9),
            (default::fast_ln(v), 10),
            (default::fast_log2(v), 11),
        ];
        for (want, j) in fast {
            let g = got[13 * i + j];
            let ok = (g - want).abs() <= 1e-5 * want.abs() + 1e-6
                || (g.is_nan() && want.is_nan())
                || g == want;
            assert!(ok, "fast function {j} of {v}: {g} vs host {want}");
        }
        assert_eq!(
            got[13 * i + 12].to_bits(),
            v.mul_add(v, v).to_bits(),
            "fma of {v}"
        );
    }
}

#[test]
fn a_struct_parameter_by_value_and_a_kernel_body_shared_array() {
    let d = Device::new();
    let x = random_f32(25, 70);
    let (bx, out) = (d.upload(&x), d.zeros::<f32>(140));
    let (scale, offset, low, high, tag) = (2.0f32, 0.25f32, -1.0f32, 1.5f32, 7u32);
    let map: Vec<u8> = [
        scale.to_bits(),
        offset.to_bits(),
        low.to_bits(),
        high.to_bits(),
        tag,
    ]
    .iter()
    .flat_map(|v| v.to_le_bytes())
    .collect();
    d.launch(
        test_kernels(),
        "apply_affine",
        [3, 1, 1],
        [32, 1, 1],
        0,
        &[Arg::Slice(bx), Arg::Value(map), Arg::Slice(out)],
    )
    .unwrap();
    let got = d.download::<f32>(out);
    for (i, &v) in x.iter().enumerate() {
        assert_eq!(
            got[2 * i],
            v.mul_add(scale, offset).clamp(low, high),
            "value {i}"
        );
        assert_eq!(got[2 * i + 1], (i as u32 + tag) as f32, "tag {i}");
    }
    // A parameter of the wrong size is refused before anything runs.
    let fault = d
        .launch(
            test_kernels(),
            "apply_affine",
            [1, 1, 1],
            [32, 1, 1],
            0,
            &[Arg::Slice(bx), Arg::Value(vec![0; 16]), Arg::Slice(out)],
        )
        .unwrap_err();
    assert_eq!(
        fault.kind,
        ferrocuda_ptx_emu::FaultKind::InvalidLaunch,
        "{fault}"
    );

    let out = d.zeros::<f32>(70);
    d.launch(
        test_kernels(),
        "local_const_shared",
        [3, 1, 1],
        [32, 1, 1],
        0,
        &[Arg::Slice(bx), Arg::Slice(out)],
    )
    .unwrap();
    let got = d.download::<f32>(out);
    for (i, &g) in got.iter().enumerate() {
        let source = i / 32 * 32 + 31 - i % 32;
        assert_eq!(g, if source < 70 { x[source] } else { 0.0 }, "element {i}");
    }
}

/// `.local` memory as LLVM emits it for a stack array: a depot, %SPL and a generic %SP. Each
/// thread has its own; an access past the depot faults.
#[test]
fn local_memory_is_per_thread_and_bounded() {
    let kernel = |index: &str| {
        format!(
            ".version 7.0\n.target sm_70\n.address_size 64\n\
             .visible .entry k(.param .u64 out)\n{{\n.local .align 4 .b8 __local_depot0[16];\n\
             .reg .b64 %SP;\n.reg .b64 %SPL;\n.reg .b32 %r<4>;\n.reg .b64 %rd<6>;\n\
             mov.u64 %SPL, __local_depot0;\ncvta.local.u64 %SP, %SPL;\nmov.u32 %r1, %tid.x;\n\
             st.local.u32 [%SPL+12], %r1;\nmul.wide.u32 %rd1, {index}, 4;\nadd.s64 %rd2, %SP, %rd1;\n\
             ld.u32 %r2, [%rd2];\nld.param.u64 %rd3, [out];\nmul.wide.u32 %rd4, %r1, 4;\nadd.s64 %rd5, %rd3, %rd4;\n\
             st.global.u32 [%rd5], %r2;\nret;\n}}\n"
        )
    };
    let d = Device::new();
    let out = d.zeros::<u32>(64);
    let good = ferrocuda_ptx_emu::Module::parse(&kernel("3")).unwrap();
    assert_eq!(good.kernel("k").unwrap().local_bytes, 16);
    d.launch(&good, "k", [1, 1, 1], [64, 1, 1], 0, &[value(out.addr)])
        .unwrap();
    assert_eq!(
        d.download::<u32>(out),
        (0..64).collect::<Vec<u32>>(),
        "each thread reads its own slot"
    );
    let past = ferrocuda_ptx_emu::Module::parse(&kernel("4")).unwrap();
    let fault = d
        .launch(&past, "k", [1, 1, 1], [64, 1, 1], 0, &[value(out.addr)])
        .unwrap_err();
    assert!(
        fault.message.contains("16 bytes of local memory"),
        "{fault}"
    );
}
