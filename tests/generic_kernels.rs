//! Generic kernels (`#[kernel(instances(...))]`, test-kernels' `generic` module): each instance
//! runs its own type on the CPU executor in checked mode and on a GPU (or the PTX emulator),
//! against std's arithmetic; a launch picks the instance by turbofish or by the arguments' types
//! and is checked against that instance's `.entry`; the PTX has one entry per instance, named
//! after its types, and the `f32` instance's instructions are those of the same body written for
//! `f32`. host/tests/compile_fail/g1_instance_not_built.rs: an instance not built does not
//! compile.

mod support;

use ferrocuda::{launch, Error, Module};
use support::ptx::{assemble_everywhere, packed};
use test_kernels::generic::{block_sum, convert, scale, SUM_BLOCK};

fn modules(test: &str) -> Vec<Module> {
    support::on_every_device(test, support::test_kernels())
}

#[test]
fn each_instance_of_scale_computes_in_its_own_type() {
    for module in modules("each_instance_of_scale_computes_in_its_own_type") {
        each_instance_of_scale_computes_in_its_own_type_on(&module);
    }
}

fn each_instance_of_scale_computes_in_its_own_type_on(module: &Module) {
    let (mut rng, seed) = support::rng();
    let n: usize = 1000;
    let blocks = n.div_ceil(256);
    // f32, picked by the arguments' types: one rounding of x·k + 1 (std's fused multiply-add).
    let x32 = support::random_f32(&mut rng, n);
    let mut out32 = vec![f32::NAN; n];
    launch!(module, scale[blocks, 256](&x32, 1.7f32, &mut out32)).unwrap();
    for (i, (&x, &got)) in x32.iter().zip(&out32).enumerate() {
        assert_eq!(got, x.mul_add(1.7, 1.0), "f32 i={i} seed={seed}");
    }
    // f64, picked by turbofish: values an f32 kernel could not hold.
    let x64: Vec<f64> = (0..n).map(|i| 1e300 / (i as f64 + 1.0) + 0.1).collect();
    let mut out64 = vec![f64::NAN; n];
    launch!(module, scale::<f64>[blocks, 256](&x64, 1.0 / 3.0, &mut out64)).unwrap();
    for (i, (&x, &got)) in x64.iter().zip(&out64).enumerate() {
        assert_eq!(got, x.mul_add(1.0 / 3.0, 1.0), "f64 i={i}");
    }
    // Integers: exact.
    let xi: Vec<i32> = (0..n as i32).map(|i| i * 37 - 18_000).collect();
    let mut outi = vec![0i32; n];
    launch!(module, scale[blocks, 256](&xi, -7i32, &mut outi)).unwrap();
    for (i, (&x, &got)) in xi.iter().zip(&outi).enumerate() {
        assert_eq!(got, x * -7 + 1, "i32 i={i}");
    }
    let xu: Vec<u64> = (0..n as u64).map(|i| (i << 40) + i).collect();
    let mut outu = vec![0u64; n];
    launch!(module, scale::<u64>[blocks, 256](&xu, 3u64, &mut outu)).unwrap();
    for (i, (&x, &got)) in xu.iter().zip(&outu).enumerate() {
        assert_eq!(got, x * 3 + 1, "u64 i={i}");
    }
}

#[test]
fn two_type_parameters_convert_between_them() {
    for module in modules("two_type_parameters_convert_between_them") {
        let n: usize = 300;
        let x: Vec<f32> = (0..n).map(|i| i as f32 / 7.0 - 20.0).collect();
        let mut wide = vec![f64::NAN; n];
        launch!(module, convert::<f32, f64>[2, 256](&x, &mut wide)).unwrap();
        assert!(x.iter().zip(&wide).all(|(&a, &b)| a as f64 == b));
        let x: Vec<f64> = (0..n).map(|i| (i as f64).sqrt() * 1e-3).collect();
        let mut narrow = vec![f32::NAN; n];
        launch!(module, convert[2, 256](&x, &mut narrow)).unwrap();
        assert!(x.iter().zip(&narrow).all(|(&a, &b)| a as f32 == b));
        let x: Vec<i32> = (0..n as i32).map(|i| i * 1_000_003 - 7).collect();
        let mut floats = vec![f32::NAN; n];
        launch!(module, convert[2, 256](&x, &mut floats)).unwrap();
        assert!(x.iter().zip(&floats).all(|(&a, &b)| a as f64 as f32 == b));
    }
}

#[test]
fn a_shared_array_of_the_type_parameter_sums_each_type() {
    for module in modules("a_shared_array_of_the_type_parameter_sums_each_type") {
        let n: usize = 1000;
        let blocks = n.div_ceil(SUM_BLOCK as usize);
        // Sums that are exact in every type, so that the order of the additions does not matter.
        let x32: Vec<f32> = (0..n).map(|i| (i % 17) as f32 - 8.0).collect();
        let x64: Vec<f64> = (0..n).map(|i| (i % 29) as f64 * 0.5 + 1e12).collect();
        let xu: Vec<u32> = (0..n as u32).map(|i| i * 4099).collect();
        let sums = |x: &[f64]| -> Vec<f64> {
            x.chunks(SUM_BLOCK as usize)
                .map(|block| block.iter().sum())
                .collect()
        };
        let mut out32 = vec![f32::NAN; blocks];
        launch!(module, block_sum[blocks, SUM_BLOCK](&x32, &mut out32)).unwrap();
        let want32 = sums(&x32.iter().map(|&v| v as f64).collect::<Vec<_>>());
        assert_eq!(out32.iter().map(|&v| v as f64).collect::<Vec<_>>(), want32);
        let mut out64 = vec![f64::NAN; blocks];
        launch!(module, block_sum[blocks, SUM_BLOCK](&x64, &mut out64)).unwrap();
        assert_eq!(out64, sums(&x64));
        let mut outu = vec![0u32; blocks];
        launch!(module, block_sum[blocks, SUM_BLOCK](&xu, &mut outu)).unwrap();
        let wantu: Vec<u32> = xu
            .chunks(SUM_BLOCK as usize)
            .map(|block| block.iter().sum())
            .collect();
        assert_eq!(outu, wantu);
    }
}

#[test]
fn a_launch_is_checked_against_its_instance() {
    let cpu = ferrocuda::Device::cpu();
    // The library's PTX has no `scale_f64`: the error names the instance's entry.
    let library = cpu.load(&ferrocuda::KERNELS).unwrap();
    let (x, mut out) = (vec![1.0f64; 4], vec![0.0f64; 4]);
    let error = launch!(library, scale::<f64>[1, 4](&x, 2.0, &mut out)).unwrap_err();
    assert!(
        matches!(
            &error,
            Error::KernelNotInPtx {
                kernel: "scale_f64",
                ..
            }
        ),
        "{error}"
    );
    // `same_len` holds for every instance, and the error names the instance.
    let module = cpu.load(support::test_kernels()).unwrap();
    let mut short = vec![0u64; 3];
    let error = launch!(module, scale[1, 4](&[1u64; 4], 2u64, &mut short)).unwrap_err();
    assert!(
        matches!(
            &error,
            Error::LengthMismatch {
                kernel: "scale_u64",
                ..
            }
        ),
        "{error}"
    );
    assert_eq!(scale::<i32>().name(), "scale_i32");
    assert_eq!(convert::<i32, f32>().name(), "int_to_float");
    // Each instance's parameters are its own types'.
    let params = scale::<f64>().info().params;
    assert_eq!(
        (params[1].type_name, params[1].elem_size),
        ("f64", 8),
        "{params:?}"
    );
}

/// The body of `.entry name` with names, registers and labels made anonymous: what two kernels
/// with the same instructions share.
fn instructions(source: &str, name: &str) -> Vec<String> {
    let start = source
        .find(&format!(".entry {name}("))
        .unwrap_or_else(|| panic!("no .entry {name}"));
    let body = &source[start..];
    let body = &body[..body.find("\n}").unwrap()];
    let anonymous = |line: &str| {
        // Without comments (`// callseq 3` counts calls across the module).
        let line = line.split("//").next().unwrap_or("").replace(name, "NAME");
        let mut out = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            out.push(c);
            if c == '%' || c == '$' {
                // A register (`%rd12`, `%f3`) or label (`$L__BB3_2`): keep its class, drop its
                // number.
                while let Some(&next) = chars.peek() {
                    if next.is_ascii_alphanumeric() || next == '_' {
                        if !next.is_ascii_digit() {
                            out.push(next);
                        }
                        chars.next();
                    } else {
                        break;
                    }
                }
            }
        }
        out.trim().to_string()
    };
    body.lines()
        .map(anonymous)
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn the_ptx_has_one_entry_per_instance_named_after_its_types() {
    let ptx = support::test_kernels();
    let info = ptx.info();
    let (x, mut out) = (vec![0.0f64; 2], vec![0.0f64; 2]);
    let (xi, mut outi) = (vec![0i32; 2], vec![0.0f32; 2]);
    let cases = [
        ("scale_f64", packed(&scale::<f64>(), (&x, 1.0f64, &mut out))),
        (
            "scale_i32",
            packed(&scale::<i32>(), (&xi, 1i32, &mut [0i32; 2])),
        ),
        (
            "int_to_float",
            packed(&convert::<i32, f32>(), (&xi, &mut outi)),
        ),
        ("block_sum_f64", packed(&block_sum::<f64>(), (&x, &mut out))),
    ];
    for (name, host) in &cases {
        let entry = info
            .entry(name)
            .unwrap_or_else(|| panic!("no entry {name}"));
        assert_eq!(
            *host, entry.param_sizes,
            "{name}: host packing vs PTX .entry"
        );
    }
    // The scalar `k` is 8 bytes in the f64 instance, 4 in the f32 one.
    assert_eq!(info.entry("scale_f64").unwrap().param_sizes[2], 8);
    assert_eq!(info.entry("scale_f32").unwrap().param_sizes[2], 4);
    for name in [
        "scale_f32",
        "scale_u64",
        "convert_f32_f64",
        "convert_f64_f32",
        "block_sum_f32",
        "block_sum_u32",
    ] {
        assert!(info.entry(name).is_some(), "no entry {name}");
    }
    for absent in ["scale", "convert", "block_sum", "convert_i32_f32"] {
        assert!(
            info.entry(absent).is_none(),
            "{absent} should not be an entry"
        );
    }
    let source = ptx.source();
    // One source, the same instructions as the non-generic kernel with the same body; the other
    // widths differ (so the comparison can fail).
    let generic = instructions(source, "scale_f32");
    assert_eq!(generic, instructions(source, "scale_plain"));
    assert!(
        generic.iter().any(|l| l.starts_with("fma.rn.f32")),
        "{generic:?}"
    );
    // With a shared array of the type parameter, whose symbol is the instance's.
    let shared_sum = instructions(source, "block_sum_f32");
    assert_eq!(shared_sum, instructions(source, "block_sum_plain"));
    assert!(
        shared_sum.iter().any(|l| l.starts_with("ld.shared.b32")),
        "{shared_sum:?}"
    );
    // Its block shape is a launch fact (`block(SUM_BLOCK)`), checked by the launch: no thread
    // reads `%ntid` to check it again, and the tile's indices need no bounds check (the one
    // trap left is `out[block]`'s).
    assert!(
        !shared_sum.iter().any(|l| l.contains("%ntid")),
        "{shared_sum:?}"
    );
    assert_eq!(
        shared_sum.iter().filter(|l| l.starts_with("trap")).count(),
        1,
        "{shared_sum:?}"
    );
    let wide = instructions(source, "scale_f64");
    assert_ne!(generic, wide);
    assert!(wide.iter().any(|l| l.starts_with("fma.rn.f64")), "{wide:?}");
    for (arch, report) in assemble_everywhere("test-kernels-generic", source) {
        let shared = |name: &str| report.kernel(name).unwrap().shared_bytes;
        assert_eq!(shared("block_sum_f32"), SUM_BLOCK * 4, "{arch}");
        assert_eq!(shared("block_sum_f64"), SUM_BLOCK * 8, "{arch}");
        assert_eq!(shared("block_sum_u32"), SUM_BLOCK * 4, "{arch}");
        for name in ["scale_f64", "scale_u64", "convert_f64_f32", "block_sum_f64"] {
            let kernel = report.kernel(name).unwrap();
            assert_eq!(
                kernel.spill_store_bytes + kernel.spill_load_bytes,
                0,
                "{arch} {name}"
            );
        }
    }
}
