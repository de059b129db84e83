//! `vprintf`, CUDA's device-side printf: the format string is read from device memory, the
//! arguments from the buffer the caller packed (each aligned to its size: `int` 4 bytes,
//! `long long`, `double` and pointers 8, as CUDA C packs them), and the line is rendered as
//! glibc's printf renders it. What a launch printed is kept in order per thread and written
//! out when the launch ends (the driver's "printed at the next synchronisation").
//!
//! Limits, as CUDA's printf has them: a launch's output goes to a buffer of [`BUFFER`] bytes
//! (`cudaLimitPrintfFifoSize`'s default); a call whose text does not fit in what is left of it
//! is dropped whole (it returns -1) and the launch says on stderr how many were. Rendering stops
//! as soon as a call's text outgrows the buffer, so no width, precision (`%.99999999999999999999d`)
//! or count of conversions makes it run long or allocate more than the buffer. As on CUDA, a
//! call takes at most [`render::MAX_ARGS`] arguments; a conversion past them is printed as written.

use crate::block::{resolve, Block, Grid, Place, Trouble};
use crate::ir::Space;
use crate::FaultKind;

mod render;
#[cfg(test)]
mod tests;

pub(crate) use render::BUFFER;
use render::{render, Args};

/// Longest format string or `%s` argument read (the GPU's printf has no such limit, but a
/// missing NUL must end somewhere).
const MAX_STRING: usize = 64 * 1024;

/// Runs `vprintf(format, args)` for thread `t`: appends the rendered text to the grid's output
/// if it fits in what is left of the launch's [`BUFFER`]; whether it did (else the call is
/// dropped, and counted in `grid.printf_dropped`).
pub(crate) fn vprintf(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    format: u64,
    args: u64,
) -> Result<bool, Trouble> {
    let text = read_string(grid, block, t, format, usize::MAX)?;
    let mut reader = ArgReader {
        grid,
        block,
        t,
        base: args,
        offset: 0,
    };
    let left = {
        let printed = grid.printed.lock().unwrap_or_else(|p| p.into_inner());
        BUFFER.saturating_sub(printed.len())
    };
    let rendered = render(&text, &mut reader, left)?;
    let mut printed = grid.printed.lock().unwrap_or_else(|p| p.into_inner());
    match rendered {
        Some(rendered) if printed.len() + rendered.len() <= BUFFER => {
            printed.extend_from_slice(&rendered);
            Ok(true)
        }
        _ => {
            grid.printf_dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            Ok(false)
        }
    }
}

fn read_byte(grid: &Grid, block: &mut Block, t: usize, address: u64) -> Result<u8, Trouble> {
    Ok(
        match resolve(grid, block, t, Space::Generic, address, 1, 1)? {
            Place::Global(i, offset) => grid.globals[i].load(offset, 1) as u8,
            Place::Shared(o) => block.shared.bytes[o],
            Place::Local(o) => block.local[o],
            Place::KernelParam(o) => grid.params[o],
            Place::Frame(o) => block.frame[o],
        },
    )
}

/// The NUL-terminated string at `address`, at most `limit` bytes of it (a `%.Ns` reads no more).
fn read_string(
    grid: &Grid,
    block: &mut Block,
    t: usize,
    address: u64,
    limit: usize,
) -> Result<Vec<u8>, Trouble> {
    let mut text = Vec::new();
    while text.len() < limit {
        if text.len() == MAX_STRING {
            return Err(Trouble::new(
                FaultKind::IllegalAddress,
                format!("printf string at {address:#x} has no NUL in its first {MAX_STRING} bytes"),
            ));
        }
        match read_byte(grid, block, t, address + text.len() as u64)? {
            0 => break,
            byte => text.push(byte),
        }
    }
    Ok(text)
}

struct ArgReader<'g, 'b> {
    grid: &'g Grid<'g>,
    block: &'b mut Block,
    t: usize,
    base: u64,
    offset: u64,
}

impl Args for ArgReader<'_, '_> {
    fn next(&mut self, bytes: u64) -> Result<u64, Trouble> {
        self.offset = self.offset.next_multiple_of(bytes);
        let mut value = 0u64;
        for k in 0..bytes {
            let address = self.base.wrapping_add(self.offset + k);
            let byte = read_byte(self.grid, self.block, self.t, address)?;
            value |= u64::from(byte) << (8 * k);
        }
        self.offset += bytes;
        Ok(value)
    }

    fn string(&mut self, address: u64, limit: usize) -> Result<Vec<u8>, Trouble> {
        read_string(self.grid, self.block, self.t, address, limit)
    }
}
