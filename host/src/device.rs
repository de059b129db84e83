//! [`Device`]: a CUDA GPU or the CPU executor, and how the best one is chosen.

use crate::backend::Backend;
use crate::cpu_options::CpuOptions;
use crate::cuda::GpuDevice;
use crate::device_properties::{DeviceKind, DeviceProperties};
use crate::error::{Error, Result};
use crate::memory_limit::{env_memory_limit, MemoryMeter};
use crate::stream::Stream;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

/// Where kernels run: a CUDA GPU or the CPU executor. Cheap to clone (shared handle).
///
/// ```
/// use ferrocuda_host::Device;
/// let cpu = Device::cpu();
/// assert!(!cpu.is_gpu());
/// assert_eq!(cpu.properties().max_threads_per_block, 1024);
/// ```
#[derive(Clone)]
pub struct Device {
    inner: Arc<Inner>,
}

struct Inner {
    properties: DeviceProperties,
    backend: Backend,
    /// CPU executor only: how it runs launches.
    cpu: Option<CpuOptions>,
    /// Bytes its allocations hold, their high-water mark and the cap.
    meter: MemoryMeter,
}

/// The device [`Device::best`] picked, and why.
pub struct DeviceChoice {
    /// The device.
    pub device: Device,
    /// One sentence: why this device (and, for the CPU, why not a GPU).
    pub reason: String,
}

/// The environment variable that overrides [`Device::best`]: `cpu`, `cuda` or `cuda:N`.
pub const DEVICE_ENV: &str = "FERROCUDA_DEVICE";

impl Device {
    /// The CPU executor: runs kernels on all cores, no GPU needed.
    ///
    /// Checked mode (see [`Device::cpu_checked`]) is on in debug builds, tests included, and off
    /// in release builds; `FERROCUDA_CHECKED=1` or `0` overrides that. The other
    /// [`CpuOptions`] come from the environment too ([`CpuOptions::from_env`]); a variable set
    /// to something it cannot mean is reported on stderr and the defaults are used
    /// ([`Device::cpu_with`] returns the error instead).
    pub fn cpu() -> Device {
        Device::cpu_from_parts(env_options())
    }

    /// The CPU executor with `options`.
    ///
    /// # Errors
    /// [`Error::InvalidInput`] for options it cannot use (a stack under
    /// [`crate::cpu_options::MIN_STACK_BYTES`]).
    pub fn cpu_with(options: CpuOptions) -> Result<Device> {
        options.validate()?;
        Ok(Device::cpu_from_parts(options))
    }

    fn cpu_from_parts(options: CpuOptions) -> Device {
        let mut device = Device::from_parts(DeviceProperties::cpu(), Backend::Cpu);
        Arc::get_mut(&mut device.inner)
            .expect("a new device is not shared")
            .cpu = Some(options);
        device
    }

    /// How the CPU executor runs launches; `None` on a GPU.
    pub fn cpu_options(&self) -> Option<&CpuOptions> {
        self.inner.cpu.as_ref()
    }

    /// The CPU executor with checked mode on or off.
    ///
    /// Checked mode finds what compute-sanitizer finds on a GPU and reports it as
    /// [`Error::KernelBug`] naming the kernel, block and thread: two threads of a block touching
    /// one shared-memory element between barriers with at least one writing, and reads of shared
    /// memory no thread of the block wrote. Out-of-bounds indices, kernel panics and divergent
    /// barriers are errors in either mode. It costs a bookkeeping step per shared-memory access.
    ///
    /// ```
    /// use ferrocuda_host::Device;
    /// assert!(Device::cpu_checked(true).checks_enabled());
    /// ```
    pub fn cpu_checked(checked: bool) -> Device {
        Device::cpu_from_parts(CpuOptions {
            checked,
            ..env_options()
        })
    }

    /// Whether launches on this device run in checked mode (CPU executor only; `false` on a GPU).
    pub fn checks_enabled(&self) -> bool {
        self.inner.cpu.as_ref().is_some_and(|cpu| cpu.checked)
    }

    /// CUDA GPU number `ordinal`. Every `Device` of one GPU in a process shares its state: its
    /// CUDA context, and the new context made after a kernel fault.
    ///
    /// # Errors
    /// [`Error::NoDriver`] without the NVIDIA driver, [`Error::NoDevice`] if there is no such GPU.
    pub fn cuda(ordinal: usize) -> Result<Device> {
        let gpu = GpuDevice::shared(ordinal)?;
        Ok(Device::from_parts(
            gpu.properties().clone(),
            Backend::Gpu(gpu),
        ))
    }

    /// How many CUDA GPUs the driver reports.
    ///
    /// # Errors
    /// [`Error::NoDriver`] without the NVIDIA driver; [`Error::Driver`] if it cannot initialise.
    pub fn gpu_count() -> Result<usize> {
        crate::cuda::gpu_count()
    }

    /// The best device available: GPU 0 if the driver and a GPU are there, else the CPU. The
    /// reason says which and why; `FERROCUDA_DEVICE=cpu|cuda|cuda:N` overrides the choice.
    pub fn best() -> DeviceChoice {
        match std::env::var(DEVICE_ENV) {
            Ok(value) => match parse_device_env(&value) {
                Some(None) => DeviceChoice {
                    device: Device::cpu(),
                    reason: format!("{DEVICE_ENV}={value} asks for the CPU"),
                },
                Some(Some(ordinal)) => match Device::cuda(ordinal) {
                    Ok(device) => DeviceChoice {
                        reason: format!("{DEVICE_ENV}={value} asks for {device}"),
                        device,
                    },
                    Err(error) => DeviceChoice {
                        device: Device::cpu(),
                        reason: format!(
                            "{DEVICE_ENV}={value} asks for CUDA device {ordinal}, but {error}; \
                             using the CPU"
                        ),
                    },
                },
                None => {
                    let mut choice = Device::best_available();
                    choice.reason = format!(
                        "{} (ignored {DEVICE_ENV}={value:?}: expected cpu, cuda or cuda:N)",
                        choice.reason
                    );
                    choice
                }
            },
            Err(_) => Device::best_available(),
        }
    }

    fn best_available() -> DeviceChoice {
        match Device::cuda(0) {
            Ok(device) => DeviceChoice {
                reason: format!("{device} is available"),
                device,
            },
            Err(error) => DeviceChoice {
                device: Device::cpu(),
                reason: format!("no GPU can be used: {error}"),
            },
        }
    }

    pub(crate) fn from_parts(properties: DeviceProperties, backend: Backend) -> Device {
        Device {
            inner: Arc::new(Inner {
                properties,
                backend,
                cpu: None,
                meter: MemoryMeter::new(env_memory_limit()),
            }),
        }
    }

    /// This device with its memory capped at `limit` bytes (`None`: no cap), counted afresh:
    /// every allocation of the returned handle and its clones (buffers, and the copies a launch
    /// makes of host data) must fit under it together, else it is [`Error::OutOfMemory`] naming
    /// the cap. It makes data larger than the device testable on any machine; `ops::Pipeline`
    /// processes such data in chunks. Overrides `FERROCUDA_DEVICE_MEMORY_LIMIT` (the same cap
    /// for every device made without this, e.g. `64MiB`).
    ///
    /// ```
    /// use ferrocuda_host::{Device, Error};
    /// let device = Device::cpu().with_memory_limit(Some(1 << 20));
    /// let _fits = device.alloc_zeroed::<f32>(200_000).unwrap();
    /// let Err(error) = device.alloc_zeroed::<f32>(100_000) else { panic!("it fitted") };
    /// assert!(matches!(error, Error::OutOfMemory { limit: Some(1048576), .. }), "{error}");
    /// ```
    pub fn with_memory_limit(&self, limit: Option<usize>) -> Device {
        Device {
            inner: Arc::new(Inner {
                properties: self.inner.properties.clone(),
                backend: self.inner.backend.clone(),
                cpu: self.inner.cpu.clone(),
                meter: MemoryMeter::new(limit),
            }),
        }
    }

    pub(crate) fn meter(&self) -> &MemoryMeter {
        &self.inner.meter
    }

    /// Name, kind and limits.
    pub fn properties(&self) -> &DeviceProperties {
        &self.inner.properties
    }

    /// GPU or CPU.
    pub fn kind(&self) -> DeviceKind {
        self.inner.properties.kind
    }

    /// Free and total memory in bytes: the seed's `get_memory_info`. On a GPU, its device memory
    /// (`cuMemGetInfo`); on the CPU executor, the host's available and total memory
    /// (`MemAvailable` and `MemTotal` of Linux's `/proc/meminfo`). Under a
    /// [memory limit](Device::with_memory_limit), at most the limit less what is in use, of the
    /// limit.
    ///
    /// ```
    /// use ferrocuda_host::Device;
    /// # if cfg!(target_os = "linux") {
    /// let (free, total) = Device::cpu().memory_info().unwrap();
    /// assert!(0 < free && free <= total);
    /// # }
    /// ```
    ///
    /// # Errors
    /// [`Error::MemoryInfoUnavailable`] on the CPU executor of a system without `/proc/meminfo`;
    /// a driver error on a GPU.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        let (free, total) = match self.backend().gpu_memory_info() {
            Some(gpu) => gpu?,
            None => self
                .host_memory_info()
                .map_err(|detail| Error::MemoryInfoUnavailable {
                    device: self.to_string(),
                    detail,
                })?,
        };
        Ok(match self.memory_limit() {
            Some(limit) => (
                free.min(limit.saturating_sub(self.memory_in_use())),
                total.min(limit),
            ),
            None => (free, total),
        })
    }

    /// Whether this is a CUDA GPU.
    pub fn is_gpu(&self) -> bool {
        self.inner.backend.is_gpu()
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.inner.backend
    }

    /// A new stream: launches and copies on different streams may overlap on a GPU. On the CPU
    /// every launch runs to completion before returning, so streams only keep programs portable.
    pub fn new_stream(&self) -> Result<Stream> {
        self.backend().new_stream()
    }

    /// Waits until all work queued on this device has finished.
    pub fn synchronize(&self) -> Result<()> {
        self.backend().synchronize()
    }

    /// Runs `work` and measures how long the device spent on it: CUDA events around the work on
    /// the default stream (GPU), the wall clock (CPU).
    ///
    /// ```
    /// use ferrocuda_host::Device;
    /// let (value, elapsed) = Device::cpu().time(|| Ok(6 * 7)).unwrap();
    /// assert_eq!(value, 42);
    /// assert!(elapsed.as_secs() < 1);
    /// ```
    pub fn time<R>(&self, work: impl FnOnce() -> Result<R>) -> Result<(R, Duration)> {
        self.backend().time(work)
    }

    /// Refuses a stream of another device.
    pub(crate) fn check_stream(&self, stream: &Stream) -> Result<()> {
        if stream.device_kind() == self.kind() {
            Ok(())
        } else {
            Err(Error::WrongDevice {
                what: "a stream",
                owner: format!("{:?}", stream.device_kind()),
                device: self.to_string(),
            })
        }
    }
}

/// The environment's [`CpuOptions`], or (said on stderr) the defaults if a variable is bad.
fn env_options() -> CpuOptions {
    CpuOptions::from_env().unwrap_or_else(|error| {
        eprintln!("ferrocuda: {error}; the CPU executor uses its defaults");
        CpuOptions::default()
    })
}

impl Device {
    /// CPU executor: the free and total bytes its buffers may use, `memory_limit` less what they
    /// hold, or the host's available and total memory without a limit.
    pub(crate) fn host_memory_info(&self) -> core::result::Result<(usize, usize), String> {
        match self.inner.cpu.as_ref().and_then(|cpu| cpu.memory_limit) {
            Some(limit) => Ok((limit.saturating_sub(self.memory_in_use()), limit)),
            None => host_memory(),
        }
    }
}

/// The host's available and total memory in bytes, from `/proc/meminfo`.
pub(crate) fn host_memory() -> core::result::Result<(usize, usize), String> {
    let text = std::fs::read_to_string("/proc/meminfo")
        .map_err(|e| format!("/proc/meminfo cannot be read ({e}): only Linux is supported"))?;
    parse_meminfo(&text).ok_or_else(|| "/proc/meminfo has no MemAvailable or MemTotal".into())
}

/// `(MemAvailable, MemTotal)` of `/proc/meminfo` text, in bytes.
fn parse_meminfo(text: &str) -> Option<(usize, usize)> {
    let field = |name: &str| -> Option<usize> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let mut words = line[name.len()..].split_whitespace();
        let value: usize = words.next()?.parse().ok()?;
        let unit = match words.next() {
            Some("kB") => 1024,
            None => 1,
            Some(_) => return None,
        };
        value.checked_mul(unit)
    };
    Some((field("MemAvailable:")?, field("MemTotal:")?))
}

/// `cpu` → `Some(None)`, `cuda`/`gpu` → `Some(Some(0))`, `cuda:N` → `Some(Some(N))`.
fn parse_device_env(value: &str) -> Option<Option<usize>> {
    match value.trim().to_ascii_lowercase().as_str() {
        "cpu" => Some(None),
        "cuda" | "gpu" => Some(Some(0)),
        other => other.strip_prefix("cuda:")?.parse().ok().map(Some),
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.properties();
        match (p.kind, p.compute_capability) {
            (DeviceKind::Cuda { ordinal }, Some((major, minor))) => write!(
                f,
                "CUDA device {ordinal}: {} (sm_{major}{minor}, {} SMs)",
                p.name, p.multiprocessors
            ),
            _ => f.write_str(&p.name),
        }
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Device({self})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_env_values() {
        assert_eq!(parse_device_env("cpu"), Some(None));
        assert_eq!(parse_device_env(" CUDA "), Some(Some(0)));
        assert_eq!(parse_device_env("cuda:3"), Some(Some(3)));
        assert_eq!(parse_device_env("cuda:x"), None);
        assert_eq!(parse_device_env("tpu"), None);
    }

    #[test]
    fn meminfo_is_read_in_bytes() {
        let text = "MemTotal:       24580052 kB\nMemFree:         1000000 kB\n\
                    MemAvailable:   20000000 kB\nBuffers:           12 kB\n";
        assert_eq!(
            parse_meminfo(text),
            Some((20_000_000 * 1024, 24_580_052 * 1024))
        );
        assert_eq!(parse_meminfo("MemTotal: 10 kB\n"), None);
        assert_eq!(parse_meminfo("MemTotal: 10 MB\nMemAvailable: 5 MB\n"), None);
    }
}
