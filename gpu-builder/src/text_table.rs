//! The aligned text tables `ferrocuda kernels` prints (ptxas resources, SASS counts): the first
//! column left-aligned, the others right-aligned, each as wide as its widest cell.

use std::fmt;

/// Writes `headers` and then `rows`, one line each, columns two spaces apart.
pub(crate) fn write_table<const N: usize>(
    f: &mut fmt::Formatter<'_>,
    headers: [&str; N],
    rows: &[[String; N]],
) -> fmt::Result {
    let mut widths = headers.map(str::len);
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.len());
        }
    }
    let line = |f: &mut fmt::Formatter<'_>, cells: [&str; N]| -> fmt::Result {
        write!(f, "{:<w$}", cells[0], w = widths[0])?;
        for (cell, w) in cells.iter().zip(widths).skip(1) {
            write!(f, "  {cell:>w$}")?;
        }
        writeln!(f)
    };
    line(f, headers)?;
    for row in rows {
        line(f, std::array::from_fn(|i| row[i].as_str()))?;
    }
    Ok(())
}
