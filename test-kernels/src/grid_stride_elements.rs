//! `thread::grid_stride_elements`, `thread::grid_stride_zip` and `thread::grid_stride`'s own
//! `fold` against `thread::grid_stride`'s `next`, through each of their loops.

use ferrocuda_std::{kernel, thread, Out};

/// Values per thread in [`grid_stride_elements_match`]'s output.
pub const MATCH_OUTPUTS: usize = 5;

/// Counts the elements of a loop that are not, in order, `x[i]` for the indices `i` of
/// `grid_stride(n)` (with `x[i] = i + offset`); a missing or an extra element counts too.
struct Check {
    indices: thread::GridStride,
    offset: u32,
    wrong: u32,
}

impl Check {
    fn new(n: usize, offset: u32) -> Check {
        Check {
            indices: thread::grid_stride(n),
            offset,
            wrong: 0,
        }
    }

    fn element(&mut self, v: &u32) {
        self.index(v.wrapping_sub(self.offset) as usize);
    }

    /// A pair of `grid_stride_zip` over `x` and `y` (with `y[i] = 2·x[i]`).
    fn pair(&mut self, (v, w): (&u32, &u32)) {
        let i = v.wrapping_sub(self.offset) as usize;
        self.index(if *w == v.wrapping_mul(2) {
            i
        } else {
            usize::MAX
        });
    }

    fn index(&mut self, i: usize) {
        if self.indices.next() != Some(i) {
            self.wrong += 1;
        }
    }

    fn wrong(self) -> u32 {
        self.wrong + self.indices.count() as u32
    }
}

/// Writes this thread's four counts of wrong elements and its count of visited ones at
/// `out[MATCH_OUTPUTS·t ..]` (`t` as `index_1d`).
fn write_counts(out: &Out<u32>, wrong: [u32; 4], visited: u32) {
    let at = MATCH_OUTPUTS * thread::index_1d();
    if at + MATCH_OUTPUTS <= out.len() {
        for (k, count) in wrong.into_iter().chain([visited]).enumerate() {
            out.set(at + k, count);
        }
    }
}

/// With `x[i] = i + offset`, writes at `out[MATCH_OUTPUTS·t ..]` for each thread `t` of the grid
/// (as `index_1d`) how many wrong elements (as `Check` counts them) the `for` loop (`next`),
/// `for_each` (`fold`) and `fold` in chunks of 3 and of 64 elements give, then how many elements
/// the `for` loop gave.
#[kernel]
pub fn grid_stride_elements_match(x: &[u32], offset: u32, out: Out<u32>) {
    let n = x.len();
    let (mut by_next, mut visited) = (Check::new(n, offset), 0);
    for v in thread::grid_stride_elements(x) {
        by_next.element(v);
        visited += 1;
    }
    let mut by_fold = Check::new(n, offset);
    thread::grid_stride_elements(x).for_each(|v| by_fold.element(v));
    let mut by_chunks_of_3 = Check::new(n, offset);
    thread::grid_stride_elements(x)
        .fold_in_chunks::<3, _, _>((), |(), v| by_chunks_of_3.element(v));
    let mut by_chunks_of_64 = Check::new(n, offset);
    thread::grid_stride_elements(x)
        .fold_in_chunks::<64, _, _>((), |(), v| by_chunks_of_64.element(v));
    let counts = [by_next, by_fold, by_chunks_of_3, by_chunks_of_64].map(Check::wrong);
    write_counts(&out, counts, visited);
}

/// With `x[i] = i + offset` and `y[i] = 2·x[i]` (`y` may be longer), writes at
/// `out[MATCH_OUTPUTS·t ..]` for each thread `t` of the grid how many wrong pairs (as `Check`
/// counts them, over `min(x.len(), y.len())` indices) `grid_stride_zip`'s `for` loop,
/// `for_each` and `fold` in chunks of 3 and 64 give, then how many pairs the `for` loop gave.
#[kernel]
pub fn grid_stride_zip_match(x: &[u32], y: &[u32], offset: u32, out: Out<u32>) {
    let n = x.len().min(y.len());
    let (mut by_next, mut visited) = (Check::new(n, offset), 0);
    for pair in thread::grid_stride_zip(x, y) {
        by_next.pair(pair);
        visited += 1;
    }
    let mut by_fold = Check::new(n, offset);
    thread::grid_stride_zip(x, y).for_each(|pair| by_fold.pair(pair));
    let mut by_chunks_of_3 = Check::new(n, offset);
    thread::grid_stride_zip(x, y).fold_in_chunks::<3, _, _>((), |(), p| by_chunks_of_3.pair(p));
    let mut by_chunks_of_64 = Check::new(n, offset);
    thread::grid_stride_zip(x, y).fold_in_chunks::<64, _, _>((), |(), p| by_chunks_of_64.pair(p));
    let counts = [by_next, by_fold, by_chunks_of_3, by_chunks_of_64].map(Check::wrong);
    write_counts(&out, counts, visited);
}
