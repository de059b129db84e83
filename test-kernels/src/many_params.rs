//! A kernel with as many parameters as `#[kernel]` accepts (`abi::MAX_KERNEL_PARAMS`, 32), of
//! every kind, so that `launch!` is tested at its longest (Rodinia's hotspot takes 14).

use ferrocuda_std::{kernel, thread, Out};

/// `out_k[i] = a_k[i] * m_k + c_k` for k in 0..8, from 8 inputs, 16 scalars of four types and 8
/// outputs: 32 parameters.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn thirty_two_params(
    a0: &[f32],
    a1: &[f32],
    a2: &[i32],
    a3: &[i32],
    a4: &[u32],
    a5: &[u32],
    a6: &[f64],
    a7: &[f64],
    m0: f32,
    m1: f32,
    m2: i32,
    m3: i32,
    m4: u32,
    m5: u32,
    m6: f64,
    m7: f64,
    c0: f32,
    c1: f32,
    c2: i32,
    c3: i32,
    c4: u32,
    c5: u32,
    c6: f64,
    c7: f64,
    o0: Out<f32>,
    o1: Out<f32>,
    o2: Out<i32>,
    o3: Out<i32>,
    o4: Out<u32>,
    o5: Out<u32>,
    o6: Out<f64>,
    o7: Out<f64>,
) {
    let i = thread::index_1d();
    if i < o0.len() {
        o0.set(i, a0[i] * m0 + c0);
        o1.set(i, a1[i] * m1 + c1);
        o2.set(i, a2[i].wrapping_mul(m2).wrapping_add(c2));
        o3.set(i, a3[i].wrapping_mul(m3).wrapping_add(c3));
        o4.set(i, a4[i].wrapping_mul(m4).wrapping_add(c4));
        o5.set(i, a5[i].wrapping_mul(m5).wrapping_add(c5));
        o6.set(i, a6[i] * m6 + c6);
        o7.set(i, a7[i] * m7 + c7);
    }
}
