//! Half precision (`f16`, `bf16` storage in `&[T]` and `Out<T>`, converted in kernels) on the CPU
//! executor and on a GPU (or the PTX emulator), bit for bit against references computed here
//! from the formats' definitions (not from the `half` crate): every one of the 65,536 f16 and
//! bf16 values widened, a sweep of f32 values narrowed (every f16, every tie between two
//! neighbours and the f32s on either side of it, subnormals, the overflow threshold, infinities,
//! NaNs), and an axpy stored in f16.

mod support;

use ferrocuda::{bf16, f16, launch, Module};
use rand::Rng;
use test_kernels::half::{axpy_f16, narrow_bf16, narrow_f16, widen_bf16, widen_f16};

/// What a GPU gives for any NaN: `cvt.f32.f16` and `cvt.rn.f16.f32`.
const F32_NAN: u32 = 0x7fff_ffff;
const F16_NAN: u16 = 0x7fff;

/// The value of f16 `bits`, from its fields: sign, 5 exponent bits (bias 15), 10 fraction bits.
fn f16_value(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = ((bits >> 10) & 0x1f) as i32;
    let fraction = (bits & 0x3ff) as f64;
    sign * match exponent {
        0 => fraction * 2f64.powi(-24),
        31 if fraction == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1024.0 + fraction) * 2f64.powi(e - 25),
    }
}

/// The nearest f16 to `x` (ties to the even bit pattern), by search over the positive finite
/// values; past the largest finite value by half an ulp or more, infinity.
fn nearest_f16(x: f32, positives: &[f64]) -> u16 {
    if x.is_nan() {
        return F16_NAN;
    }
    let sign = if x.is_sign_negative() { 0x8000 } else { 0 };
    let magnitude = (x as f64).abs();
    // 65504 + half its ulp (32 / 2 · 2 = 16): a tie that rounds to the even 2^16, infinity.
    if magnitude >= 65520.0 {
        return sign | 0x7c00;
    }
    let above = positives.partition_point(|&v| v < magnitude);
    let best = if above == 0 {
        0
    } else if above == positives.len() {
        positives.len() - 1
    } else {
        let (low, high) = (above - 1, above);
        let (dl, dh) = (magnitude - positives[low], positives[high] - magnitude);
        match dl.partial_cmp(&dh).unwrap() {
            std::cmp::Ordering::Less => low,
            std::cmp::Ordering::Greater => high,
            std::cmp::Ordering::Equal => [low, high][low % 2],
        }
    };
    sign | best as u16
}

/// The positive finite f16 values, in order: bit patterns 0 to 0x7bff.
fn positive_f16_values() -> Vec<f64> {
    (0..=0x7bffu16).map(f16_value).collect()
}

/// The f32s to narrow: every f16 value, each tie between neighbours and its f32 neighbours,
/// both signs, and the edges: subnormals, 65504 to 65536, the largest f32, infinities, NaNs.
fn narrowing_inputs(rng: &mut rand::rngs::StdRng) -> Vec<f32> {
    let positives = positive_f16_values();
    let mut x = Vec::new();
    for pair in positives.windows(2) {
        let tie = ((pair[0] + pair[1]) / 2.0) as f32; // exact: 11 bits and one more
        x.extend([pair[0] as f32, tie, tie.next_down(), tie.next_up()]);
    }
    x.extend([
        65504.0,
        65519.996,
        65520.0,
        65535.0,
        65536.0,
        f32::MAX,
        f32::INFINITY,
    ]);
    x.extend([
        2f32.powi(-25),
        2f32.powi(-25).next_up(),
        2f32.powi(-26),
        f32::MIN_POSITIVE,
    ]);
    x.extend([1e-30, f32::from_bits(1)]);
    x.extend((0..4096).map(|_| f32::from_bits(rng.random::<u32>())));
    let negatives: Vec<f32> = x.iter().map(|v| -v).collect();
    x.extend(negatives);
    x.extend([
        f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffc1_2345),
    ]);
    x
}

fn modules(test: &str) -> Vec<Module> {
    support::on_every_device(test, support::test_kernels())
}

fn blocks(n: usize) -> usize {
    n.div_ceil(256).min(256)
}

#[test]
fn every_f16_widens_to_its_exact_f32_on_every_device() {
    let x: Vec<f16> = (0..=u16::MAX).map(f16::from_bits).collect();
    let expected: Vec<u32> = (0..=u16::MAX)
        .map(|bits| match f16_value(bits) {
            v if v.is_nan() => F32_NAN,
            v => (v as f32).to_bits(),
        })
        .collect();
    for module in modules("every_f16_widens_to_its_exact_f32_on_every_device") {
        let mut out = vec![0.0f32; x.len()];
        launch!(module, widen_f16[blocks(x.len()), 256](&x, &mut out)).unwrap();
        let got: Vec<u32> = out.iter().map(|v| v.to_bits()).collect();
        let wrong = (0..x.len()).find(|&i| got[i] != expected[i]);
        assert_eq!(
            wrong.map(|i| (i, got[i], expected[i])),
            None,
            "{}: (f16 bits, got, expected)",
            module.device()
        );
    }
}

#[test]
fn f32_narrows_to_the_nearest_f16_ties_to_even_on_every_device() {
    let (mut rng, seed) = support::rng();
    let x = narrowing_inputs(&mut rng);
    let positives = positive_f16_values();
    let expected: Vec<u16> = x.iter().map(|&v| nearest_f16(v, &positives)).collect();
    for module in modules("f32_narrows_to_the_nearest_f16_ties_to_even_on_every_device") {
        let mut out = vec![f16::from_bits(0x1234); x.len()];
        launch!(module, narrow_f16[blocks(x.len()), 256](&x, &mut out)).unwrap();
        for (i, (&got, &want)) in out.iter().zip(&expected).enumerate() {
            assert_eq!(
                got.to_bits(),
                want,
                "{}: {:e} ({:#010x}) seed={seed}",
                module.device(),
                x[i],
                x[i].to_bits()
            );
        }
    }
}

#[test]
fn bf16_widens_exactly_and_narrows_to_nearest_even_on_every_device() {
    let (mut rng, seed) = support::rng();
    let all: Vec<bf16> = (0..=u16::MAX).map(bf16::from_bits).collect();
    let mut x: Vec<f32> = (0..=u16::MAX as u32)
        .flat_map(|b| {
            let v = f32::from_bits(b << 16);
            let tie = f32::from_bits((b << 16) | 0x8000);
            [v, tie, tie.next_up(), tie.next_down()]
        })
        .filter(|v| !v.is_nan())
        .collect();
    x.extend((0..4096).map(|_| f32::from_bits(rng.random::<u32>())));
    // Round to nearest, ties to even, on the bit pattern (an overflow carries into infinity).
    let nearest = |v: f32| {
        let bits = v.to_bits();
        ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16) as u16
    };
    for module in modules("bf16_widens_exactly_and_narrows_to_nearest_even_on_every_device") {
        let mut wide = vec![0.0f32; all.len()];
        launch!(module, widen_bf16[blocks(all.len()), 256](&all, &mut wide)).unwrap();
        for (b, v) in wide.iter().enumerate() {
            let exact = f32::from_bits((b as u32) << 16);
            match exact.is_nan() {
                true => assert!(v.is_nan(), "{}: bf16 {b:#06x}", module.device()),
                false => assert_eq!(v.to_bits(), exact.to_bits(), "{}", module.device()),
            }
        }
        let mut narrow = vec![bf16::ZERO; x.len()];
        launch!(module, narrow_bf16[blocks(x.len()), 256](&x, &mut narrow)).unwrap();
        for (v, got) in x.iter().zip(&narrow) {
            match v.is_nan() {
                true => assert!(got.is_nan()),
                false => assert_eq!(
                    got.to_bits(),
                    nearest(*v),
                    "{}: {v:e} seed={seed}",
                    module.device()
                ),
            }
        }
    }
}

#[test]
fn an_axpy_stored_in_f16_rounds_once_per_element() {
    let (mut rng, seed) = support::rng();
    let positives = positive_f16_values();
    let n: usize = 1000;
    let to_f16 = |v: f32| f16::from_bits(nearest_f16(v, &positives));
    let x: Vec<f16> = (0..n)
        .map(|_| to_f16(rng.random_range(-8.0..8.0)))
        .collect();
    let y0: Vec<f16> = (0..n)
        .map(|_| to_f16(rng.random_range(-8.0..8.0)))
        .collect();
    let a = 1.7f32;
    // f32 arithmetic on the exact f16 values, then one rounding.
    let expected: Vec<u16> = x
        .iter()
        .zip(&y0)
        .map(|(&x, &y)| {
            let (x, y) = (f16_value(x.to_bits()) as f32, f16_value(y.to_bits()) as f32);
            nearest_f16(a * x + y, &positives)
        })
        .collect();
    for module in modules("an_axpy_stored_in_f16_rounds_once_per_element") {
        let mut y = y0.clone();
        launch!(module, axpy_f16[n.div_ceil(128), 128](a, &x, &mut y)).unwrap();
        let got: Vec<u16> = y.iter().map(|v| v.to_bits()).collect();
        assert_eq!(got, expected, "{} seed={seed}", module.device());
    }
}

#[test]
fn the_gpu_converts_with_one_cvt_each_way_and_ptxas_assembles_it() {
    let source = support::test_kernels().source();
    let body = |name: &str| {
        let start = source.find(&format!(".entry {name}(")).unwrap();
        let body = &source[start..];
        body[..body.find("\n}").unwrap()].to_string()
    };
    assert!(body("narrow_f16").contains("cvt.rn.f16.f32"));
    assert!(body("widen_f16").contains("cvt.f32.f16"));
    let axpy = body("axpy_f16");
    assert_eq!(axpy.matches("cvt.f32.f16").count(), 2, "{axpy}");
    assert_eq!(axpy.matches("cvt.rn.f16.f32").count(), 1, "{axpy}");
    // 16-bit loads and stores of the storage type.
    assert!(
        axpy.contains("ld.global.nc.b16") || axpy.contains("ld.global.nc.u16"),
        "{axpy}"
    );
    for (arch, report) in support::ptx::assemble_everywhere("test-kernels-half", source) {
        for name in [
            "widen_f16",
            "narrow_f16",
            "widen_bf16",
            "narrow_bf16",
            "axpy_f16",
        ] {
            let kernel = report.kernel(name).unwrap();
            assert_eq!(
                kernel.spill_store_bytes + kernel.spill_load_bytes,
                0,
                "{arch} {name}"
            );
        }
    }
}
