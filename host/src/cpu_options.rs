//! [`CpuOptions`]: how the CPU executor runs launches (checked mode, deadline, thread stacks,
//! memory limit, where kernels print), from code or from the environment.

use crate::error::{Error, Result};
pub use ferrocuda_std::cpu::PrintCapture;
use std::time::Duration;

/// The environment variable that switches the CPU executor's checked mode on (`1`) or off (`0`)
/// for [`crate::Device::cpu`], whatever the build.
pub const CHECKED_ENV: &str = "FERROCUDA_CHECKED";

/// The environment variable that gives CPU launches a deadline, in milliseconds (see
/// [`CpuOptions::deadline`]).
pub const DEADLINE_ENV: &str = "FERROCUDA_CPU_DEADLINE_MS";

/// The environment variable that sets the stack of each simulated GPU thread, in KiB (see
/// [`CpuOptions::stack_bytes`]).
pub const STACK_ENV: &str = "FERROCUDA_CPU_STACK_KIB";

/// The stack of each simulated GPU thread unless set (256 KiB): kernel code is shallow, but a
/// panic message is formatted on it too. Pages are only committed when touched.
pub const DEFAULT_STACK_BYTES: usize = ferrocuda_std::cpu::DEFAULT_STACK_BYTES;

/// The environment variable that picks the CPU executor's path for kernels `#[kernel]` split
/// at their barriers: `coroutine` runs them on the coroutine path, `split` (the default) on the
/// split one (see [`CpuOptions::force_coroutines`]).
pub const PATH_ENV: &str = "FERROCUDA_CPU_PATH";

/// The smallest stack a simulated thread may have: room for the executor's own frames and a
/// panic message.
pub const MIN_STACK_BYTES: usize = 64 * 1024;

/// How the CPU executor runs launches: [`crate::Device::cpu_with`] takes them,
/// [`CpuOptions::from_env`] reads them from the environment.
///
/// ```
/// use ferrocuda_host::{CpuOptions, Device};
/// use std::time::Duration;
/// let options = CpuOptions {
///     deadline: Some(Duration::from_secs(10)),
///     stack_bytes: 1 << 20,
///     ..CpuOptions::default()
/// };
/// let device = Device::cpu_with(options).unwrap();
/// assert_eq!(device.cpu_options().unwrap().stack_bytes, 1 << 20);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CpuOptions {
    /// Checked mode (see [`crate::Device::cpu_checked`]).
    pub checked: bool,
    /// How long one launch may run: a thread still running when it passes stops its launch with
    /// [`Error::DeadlineExceeded`] at its next barrier, warp operation, grid-stride chunk or
    /// start of a thread (every 16th of a block row). Code with none of these (a `loop {}` with no barrier, one long
    /// computation for one index) cannot be stopped. `None`: no deadline; a
    /// deadline too far away for the clock to represent (`Duration::MAX`) never passes either.
    pub deadline: Option<Duration>,
    /// The stack of each simulated GPU thread, in bytes (thread 0 and the threads that run before
    /// a block's first barrier included): a thread that needs more stops its launch with
    /// [`Error::StackOverflow`]. At least [`MIN_STACK_BYTES`]; rounded up to whole pages.
    pub stack_bytes: usize,
    /// The most host memory this device's buffers may hold together, in bytes, as a GPU's memory
    /// would limit them; a `to_vec` copy must fit in what they leave. `None`: the host's available
    /// memory. Either way an allocation that does not fit is [`Error::OutOfMemory`].
    pub memory_limit: Option<usize>,
    /// Where kernels' `println!` lines go: `None` prints them to stdout, each prefixed with the
    /// thread's coordinates; a [`PrintCapture`] collects them instead (for tests to compare).
    pub print_capture: Option<PrintCapture>,
    /// Run every kernel on the coroutine path (a stackful coroutine per thread, switched at each
    /// barrier), also those `#[kernel]` split at their barriers or found barrier-free (which
    /// otherwise run each region as a loop over the block's threads; see
    /// `KernelInfo::cpu_path`). Both paths give the same results and the same reports: this is
    /// for comparing them.
    pub force_coroutines: bool,
}

impl Default for CpuOptions {
    /// Checked mode in debug builds, no deadline, [`DEFAULT_STACK_BYTES`], no memory limit.
    fn default() -> Self {
        CpuOptions {
            checked: cfg!(debug_assertions),
            deadline: None,
            stack_bytes: DEFAULT_STACK_BYTES,
            memory_limit: None,
            print_capture: None,
            force_coroutines: false,
        }
    }
}

impl CpuOptions {
    /// The defaults, overridden by [`CHECKED_ENV`] (`1` or `0`), [`DEADLINE_ENV`] (milliseconds),
    /// [`STACK_ENV`] (KiB) and [`PATH_ENV`] (`coroutine` or `split`) where they are set.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] naming the variable if one of them is set to something else.
    pub fn from_env() -> Result<CpuOptions> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<CpuOptions> {
        let mut options = CpuOptions::default();
        if let Some(value) = var(CHECKED_ENV) {
            options.checked = match value.trim() {
                "1" => true,
                "0" => false,
                _ => return Err(invalid(CHECKED_ENV, &value, "1 or 0")),
            };
        }
        if let Some(value) = var(DEADLINE_ENV) {
            let ms: u64 = value
                .trim()
                .parse()
                .map_err(|_| invalid(DEADLINE_ENV, &value, "a whole number of milliseconds"))?;
            options.deadline = Some(Duration::from_millis(ms));
        }
        if let Some(value) = var(STACK_ENV) {
            let kib: usize = value
                .trim()
                .parse()
                .map_err(|_| invalid(STACK_ENV, &value, "a whole number of KiB"))?;
            options.stack_bytes = kib.saturating_mul(1024);
        }
        if let Some(value) = var(PATH_ENV) {
            options.force_coroutines = match value.trim() {
                "coroutine" => true,
                "split" => false,
                _ => return Err(invalid(PATH_ENV, &value, "coroutine or split")),
            };
        }
        options.validate()?;
        Ok(options)
    }

    /// `Ok` if the options can be used.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.stack_bytes < MIN_STACK_BYTES {
            return Err(Error::InvalidInput {
                op: "CpuOptions",
                detail: format!(
                    "stack_bytes is {} but a simulated thread needs at least {MIN_STACK_BYTES} \
                     ({STACK_ENV}={})",
                    self.stack_bytes,
                    MIN_STACK_BYTES / 1024
                ),
            });
        }
        Ok(())
    }
}

fn invalid(name: &'static str, value: &str, expected: &str) -> Error {
    Error::InvalidInput {
        op: name,
        detail: format!("{name}={value:?} is not {expected}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from(vars: &[(&str, &str)]) -> Result<CpuOptions> {
        CpuOptions::from_vars(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn the_environment_overrides_the_defaults() {
        assert_eq!(from(&[]).unwrap(), CpuOptions::default());
        let options = from(&[
            (CHECKED_ENV, "0"),
            (DEADLINE_ENV, "250"),
            (STACK_ENV, " 1024 "),
            (PATH_ENV, "coroutine"),
        ])
        .unwrap();
        assert_eq!(
            options,
            CpuOptions {
                checked: false,
                deadline: Some(Duration::from_millis(250)),
                stack_bytes: 1 << 20,
                memory_limit: None,
                print_capture: None,
                force_coroutines: true,
            }
        );
        assert!(!from(&[(PATH_ENV, "split")]).unwrap().force_coroutines);
    }

    #[test]
    fn bad_values_are_errors_naming_the_variable() {
        for (name, value) in [
            (CHECKED_ENV, "yes"),
            (DEADLINE_ENV, "-5"),
            (DEADLINE_ENV, "1s"),
            (STACK_ENV, "big"),
            (STACK_ENV, "8"),
            (PATH_ENV, "coroutines!"),
        ] {
            let error = from(&[(name, value)]).unwrap_err().to_string();
            assert!(
                error.contains(name) && error.contains(value),
                "{name}={value}: {error}"
            );
        }
    }
}
