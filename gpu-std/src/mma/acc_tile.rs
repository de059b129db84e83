//! A warp's accumulator tile, [`AccTile`]: MT × NT fragments C, what `mma_tiles` takes and
//! returns. Its own file below both the warp's product (`warp_tile.rs`) and the CPU executor's
//! (`tile_product.rs`), which both name it.

use super::fragment::FragC;

/// This lane's part of a (16·MT)×(8·NT) accumulator tile: MT × NT [`FragC`]s, `frags[i][j]`
/// being the 16×8 tile at rows `16·i..`, columns `8·j..`. What [`super::mma_tiles`] takes and returns.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AccTile<A, const MT: usize, const NT: usize> {
    /// The accumulators, by 16-row band and 8-column band.
    pub frags: [[FragC<A>; NT]; MT],
}

impl<A: bytemuck::Pod + Default, const MT: usize, const NT: usize> AccTile<A, MT, NT> {
    /// All zeros.
    #[inline(always)]
    pub fn zero() -> Self {
        AccTile {
            frags: [[FragC::zero(); NT]; MT],
        }
    }

    /// Calls `f(row, column, value)` for each of this lane's elements of the tile (rows below
    /// 16·MT, columns below 8·NT).
    #[inline(always)]
    pub fn for_each(&self, mut f: impl FnMut(usize, usize, A)) {
        // A copy walked in a loop: the tile itself is then only read at constant places, so
        // that on the GPU it stays in registers through a kernel's k-loop.
        let frags = self.frags;
        for (i, band) in frags.iter().enumerate() {
            for (j, frag) in band.iter().enumerate() {
                frag.for_each(|r, c, v| f(16 * i + r, 8 * j + c, v));
            }
        }
    }
}

impl<A: bytemuck::Pod + Default, const MT: usize, const NT: usize> Default for AccTile<A, MT, NT> {
    fn default() -> Self {
        Self::zero()
    }
}
