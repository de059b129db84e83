//! Kernels reading constant memory (`ferrocuda_std::constant!`), for tests/constant_memory.rs.

use ferrocuda_std::{kernel, thread, Out};

/// Entries of [`LOOKUP`].
pub const LOOKUP_LEN: usize = 64;

ferrocuda_std::constant! {
    /// A lookup table the host sets before launching [`look_up`].
    pub static LOOKUP: [f32; LOOKUP_LEN];
}

ferrocuda_std::constant! {
    /// Offsets added by [`look_up`], one per `i % 3`.
    pub static OFFSETS: [i64; 3];
}

/// `out[i] = LOOKUP[index[i]] + OFFSETS[i % 3]`: an `index[i]` past the table is a planted
/// out-of-bounds read.
#[kernel(same_len(index, out))]
pub fn look_up(index: &[u32], out: Out<f32>) {
    let i = thread::index_1d();
    if i < index.len() {
        let table = LOOKUP.view();
        out.set(i, table.get(index[i] as usize) + OFFSETS.get(i % 3) as f32);
    }
}
