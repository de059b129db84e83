//! The input checks every op runs before it launches anything: lengths that fit together, sizes
//! that are not empty, products and `u32` kernel arguments that do not overflow. Each gives an
//! [`Error::InvalidInput`] naming the op and the input, so a bad call fails before any kernel runs.

use crate::{Error, Result};

/// `Ok` if `len == expected`, else [`Error::InvalidInput`] naming `what`.
pub(super) fn check_len(
    op: &'static str,
    what: &str,
    len: usize,
    expected: usize,
    why: &str,
) -> Result<()> {
    if len == expected {
        Ok(())
    } else {
        Err(Error::InvalidInput {
            op,
            detail: format!("{what} has {len} elements but {why} needs {expected}"),
        })
    }
}

/// [`Error::InvalidInput`] unless `n > 0`.
pub(super) fn check_not_empty(op: &'static str, what: &str, n: usize) -> Result<()> {
    if n == 0 {
        return Err(Error::InvalidInput {
            op,
            detail: format!("{what} is empty"),
        });
    }
    Ok(())
}

/// `a · b`, or [`Error::InvalidInput`] naming `what` if it overflows `usize`.
pub(super) fn checked_product(op: &'static str, what: &str, a: usize, b: usize) -> Result<usize> {
    a.checked_mul(b).ok_or_else(|| Error::InvalidInput {
        op,
        detail: format!("{what} = {a} × {b} overflows usize"),
    })
}

/// `value` as the `u32` a kernel takes, or [`Error::InvalidInput`] naming `what`.
pub(super) fn to_u32(op: &'static str, what: &str, value: usize) -> Result<u32> {
    u32::try_from(value).map_err(|_| Error::InvalidInput {
        op,
        detail: format!(
            "{what} = {value} is more than the kernels' limit of {}",
            u32::MAX
        ),
    })
}
