//! The CPU `mma` against an element-by-element reference, and [`fma_tile`]'s order.

use super::*;
use crate::tensor_core::c_position;
use std::vec::Vec;

/// Random register bits whose fields are finite values of `kind` (xorshift from `seed`).
fn registers(kind: Kind, seed: &mut u64) -> u32 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    let bits = *seed as u32;
    match kind {
        // Exponents below all ones in each half (no infinity, no NaN).
        Kind::F16 => bits & 0xbbff_bbff,
        Kind::Bf16 => bits & 0xbf7f_bf7f,
        Kind::Tf32 => bits & 0xbf7f_ffff,
        Kind::S8 | Kind::U8 => bits,
    }
}

/// The warp's D element by element, from each element's documented position (`gather`,
/// by `a_position` and `b_position`, for every kind: the f16 and bf16 products take
/// `gather_a_halves` and `gather_b_halves`) and the documented order (C first, then k = 0, 1, … one FMA each;
/// integers exactly).
fn reference(kind: Kind, lanes: &[Operands; WARP]) -> [[u32; 4]; WARP] {
    match kind {
        Kind::F16 | Kind::Bf16 => reference_k::<16>(kind, lanes),
        Kind::Tf32 => reference_k::<8>(kind, lanes),
        Kind::S8 | Kind::U8 => reference_k::<32>(kind, lanes),
    }
}

fn reference_k<const K: usize>(kind: Kind, lanes: &[Operands; WARP]) -> [[u32; 4]; WARP] {
    let (a, b) = gather::<K>(kind, lanes);
    core::array::from_fn(|lane| {
        core::array::from_fn(|i| {
            let (r, col) = c_position(lane, i);
            let c = lanes[lane].c[i];
            if matches!(kind, Kind::S8 | Kind::U8) {
                let products = (0..K).map(|x| (a[r][x] * b[x][col]) as i64);
                (products.sum::<i64>() + i64::from(c as i32)) as i32 as u32
            } else {
                let sum = (0..K).fold(f32::from_bits(c), |s, x| a[r][x].mul_add(b[x][col], s));
                sum.to_bits()
            }
        })
    })
}

/// `fma_tile` at every shape its callers make and more (rows and columns multiples of 8,
/// odd and even numbers of 8-wide columns, any depth, padded strides): each element's bits
/// are `mul_add`'s over k in order.
#[test]
fn the_blocked_tile_product_keeps_each_elements_order() {
    let mut seed = 0x6a09_e667_f3bc_c908;
    let mut value = || f32::from_bits(registers(Kind::Tf32, &mut seed));
    for (rows, cols, depth) in [
        (16, 8, 16),
        (32, 24, 32),
        (16, 32, 48),
        (8, 40, 7),
        (24, 16, 0),
    ] {
        let (lda, ldb, ldc) = (depth + 3, cols + 5, cols + 1);
        let a: Vec<f32> = (0..rows * lda).map(|_| value()).collect();
        let b: Vec<f32> = (0..depth.max(1) * ldb).map(|_| value()).collect();
        let c: Vec<f32> = (0..rows * ldc).map(|_| value()).collect();
        let mut d = c.clone();
        let shape = Matrix {
            rows,
            cols,
            stride: ldc,
        };
        fma_tile(&a, lda, &b, ldb, &mut d, shape, depth);
        for r in 0..rows {
            for j in 0..ldc {
                let want = if j < cols {
                    (0..depth).fold(c[r * ldc + j], |s, k| {
                        a[r * lda + k].mul_add(b[k * ldb + j], s)
                    })
                } else {
                    c[r * ldc + j]
                };
                let got = d[r * ldc + j];
                assert_eq!(
                    got.to_bits(),
                    want.to_bits(),
                    "{rows}×{cols}×{depth}: ({r}, {j})"
                );
            }
        }
    }
}

#[test]
fn the_tile_product_matches_the_element_by_element_order_for_every_kind() {
    let mut seed = 0x9e37_79b9_7f4a_7c15;
    for kind in [Kind::F16, Kind::Bf16, Kind::Tf32, Kind::S8, Kind::U8] {
        for _ in 0..20 {
            let lanes: [Operands; WARP] = core::array::from_fn(|_| Operands {
                a: core::array::from_fn(|_| registers(kind, &mut seed)),
                b: core::array::from_fn(|_| registers(kind, &mut seed)),
                c: core::array::from_fn(|_| match kind {
                    Kind::S8 | Kind::U8 => registers(kind, &mut seed),
                    _ => registers(Kind::Tf32, &mut seed),
                }),
            });
            assert_eq!(
                multiply(kind, &lanes, None),
                reference(kind, &lanes),
                "{kind:?}"
            );
        }
    }
}

/// With a warp's [`Tiles`]: A and B registers drawn from pools larger than what it holds
/// (hits, misses and replacements), f16 and bf16 from the same registers (a tile is
/// recent only for its kind), each D against the reference's bits.
#[test]
fn recent_tiles_give_the_bits_of_a_fresh_gather() {
    let mut seed = 0x2545_f491_4f6c_dd1d;
    let a_pool: [[[u32; 4]; WARP]; 3] = core::array::from_fn(|_| {
        core::array::from_fn(|_| core::array::from_fn(|_| registers(Kind::Bf16, &mut seed)))
    });
    let b_pool: [[[u32; 2]; WARP]; 6] = core::array::from_fn(|_| {
        core::array::from_fn(|_| core::array::from_fn(|_| registers(Kind::Bf16, &mut seed)))
    });
    let mut tiles = Tiles::default();
    for step in 0..200usize {
        let kind = if step % 7 < 5 { Kind::F16 } else { Kind::Bf16 };
        let (a, b) = (&a_pool[step / 4 % 3], &b_pool[(step * 5 + step / 3) % 6]);
        let lanes: [Operands; WARP] = core::array::from_fn(|lane| Operands {
            a: a[lane],
            b: b[lane],
            c: core::array::from_fn(|_| registers(Kind::Tf32, &mut seed)),
        });
        let d = multiply(kind, &lanes, Some(&mut tiles));
        assert_eq!(d, reference(kind, &lanes), "step {step} ({kind:?})");
    }
}
