//! [`Module::set_constant`]: sets a kernel crate's constant table (`ferrocuda_std::constant!`)
//! before the next launches, on a GPU (`cuModuleGetGlobal` and a copy) or on the CPU executor
//! (the module's own copy); [`Module::launch_with_constant`]: a launch that carries its table.

use crate::args::KernelArgs;
use crate::cooperative;
use crate::error::{Error, Result};
use crate::launch_config::LaunchConfig;
use crate::lock::lock;
use crate::module::Module;
use ferrocuda_std::abi::Kernel;
use ferrocuda_std::constant::{ConstElement, ConstTable};

impl Module {
    /// Sets constant table `table` to `data`, for every launch of this module from now on. It
    /// first waits for every kernel queued on the device (on any stream), so none of them sees
    /// the new bytes, and then for the copy. Each module, and so each device, has its own
    /// tables; one never set reads as zeros. A launch that needs its own bytes while other
    /// threads or streams launch with others carries them:
    /// [`launch_with_constant`](Module::launch_with_constant).
    ///
    /// ```
    /// use ferrocuda_host::{Device, Ptx};
    /// ferrocuda_std::constant! {
    ///     static STEPS: [u32; 4];
    /// }
    /// static PTX: Ptx = Ptx::new(
    ///     "steps",
    ///     ".version 6.0\n.target sm_70\n.address_size 64\n.visible .const .align 4 .b8 STEPS[16];\n",
    /// );
    /// let module = Device::cpu().load(&PTX).unwrap();
    /// module.set_constant(&STEPS, &[1, 2, 4, 8]).unwrap();
    /// let error = module.set_constant(&STEPS, &[1, 2]).unwrap_err();
    /// assert!(error.to_string().contains("holds 4 elements of `u32` (16 bytes) but 2 were given"));
    /// ```
    ///
    /// # Errors
    /// [`Error::ConstantTable`] if `data` does not have exactly the table's `N` elements, or if the
    /// module's PTX does not declare the table in `.const` with its size; a driver error on a GPU.
    pub fn set_constant<T: ConstElement, const N: usize>(
        &self,
        table: &ConstTable<T, N>,
        data: &[T],
    ) -> Result<()> {
        let _writing = self.lock_table_writes();
        self.write_table(table, data)
    }

    /// Sets elements `start..start + data.len()` of constant table `table` to `data`, keeping
    /// the others (zeros if the table was never set), as [`set_constant`](Module::set_constant)
    /// does for the whole table: for every launch from now on, after the kernels queued before.
    ///
    /// ```
    /// use ferrocuda_host::{Device, Ptx};
    /// ferrocuda_std::constant! {
    ///     static STEPS: [u32; 4];
    /// }
    /// static PTX: Ptx = Ptx::new(
    ///     "steps",
    ///     ".version 6.0\n.target sm_70\n.address_size 64\n.visible .const .align 4 .b8 STEPS[16];\n",
    /// );
    /// let module = Device::cpu().load(&PTX).unwrap();
    /// module.set_constant(&STEPS, &[1, 2, 4, 8]).unwrap();
    /// module.set_constant_range(&STEPS, 1, &[20, 40]).unwrap();
    /// let error = module.set_constant_range(&STEPS, 3, &[1, 2]).unwrap_err();
    /// assert!(error.to_string().contains("the range 3..5 is not inside the 4 elements"));
    /// ```
    ///
    /// # Errors
    /// [`Error::RangeOutOfBounds`] if the elements end past the table; otherwise those of
    /// [`set_constant`](Module::set_constant).
    pub fn set_constant_range<T: ConstElement, const N: usize>(
        &self,
        table: &ConstTable<T, N>,
        start: usize,
        data: &[T],
    ) -> Result<()> {
        let end = start.checked_add(data.len()).filter(|&end| end <= N);
        let Some(end) = end else {
            return Err(Error::RangeOutOfBounds {
                what: "Module::set_constant_range",
                range: format!("{start}..{}", start as u128 + data.len() as u128),
                len: N,
            });
        };
        let _writing = self.lock_table_writes();
        let current = self.loaded.constant_bytes(table.name());
        let mut whole: Vec<T> = match current {
            Some(bytes) if bytes.len() == core::mem::size_of::<[T; N]>() => {
                let mut whole = vec![T::zeroed(); N];
                bytemuck::cast_slice_mut::<T, u8>(&mut whole).copy_from_slice(&bytes);
                whole
            }
            _ => vec![T::zeroed(); N],
        };
        whole[start..end].copy_from_slice(data);
        self.write_table(table, &whole)
    }

    fn lock_table_writes(&self) -> std::sync::MutexGuard<'_, ()> {
        lock(&self.table_writes)
    }

    /// Sets `table` to `data`; the caller holds `table_writes`.
    fn write_table<T: ConstElement, const N: usize>(
        &self,
        table: &ConstTable<T, N>,
        data: &[T],
    ) -> Result<()> {
        let bytes = self.table_bytes(table, data)?;
        self.loaded.set_constant(table.name(), bytes)
    }

    /// Launches `kernel` as [`Module::launch`] does, with constant table `table` set to `data`
    /// for it: the table is what this launch reads, whatever other threads launch meanwhile
    /// with other bytes, on any stream. On a GPU the write and the launch are queued on the
    /// launch's stream under the module's table lock, the write after the kernels that read the
    /// table before (carried there by this method) and before this one, without waiting on the
    /// host; a table that already holds `data` is not written again. On the CPU executor the
    /// launch runs with its own copy of the tables. The table keeps `data` afterwards, as after
    /// [`set_constant`](Module::set_constant).
    ///
    /// Launches that do not carry the table (plain [`Module::launch`] on another stream) are not
    /// ordered against these writes: a kernel that reads a table other launches change should
    /// be launched with it.
    ///
    /// # Errors
    /// Those of [`set_constant`](Module::set_constant) and [`Module::launch`].
    pub fn launch_with_constant<'a, P, A: KernelArgs<'a, P>, T: ConstElement, const N: usize>(
        &self,
        kernel: &Kernel<P>,
        config: LaunchConfig,
        table: &ConstTable<T, N>,
        data: &[T],
        args: A,
    ) -> Result<()> {
        cooperative::refuse_plain_launch(kernel.info())?;
        let bytes = self.table_bytes(table, data)?;
        self.launch_as(kernel, config, args, false, Some((table.name(), bytes)))
    }

    /// `data` as the bytes of `table`, checked against the table and the module's PTX.
    fn table_bytes<'d, T: ConstElement, const N: usize>(
        &self,
        table: &ConstTable<T, N>,
        data: &'d [T],
    ) -> Result<&'d [u8]> {
        let bytes = core::mem::size_of::<[T; N]>();
        let error = |detail: String| Error::ConstantTable {
            table: table.name(),
            module: self.ptx().name(),
            detail,
        };
        if data.len() != N {
            return Err(error(format!(
                "the table holds {N} elements of `{}` ({bytes} bytes) but {} were given",
                core::any::type_name::<T>(),
                data.len()
            )));
        }
        match declared_bytes(self.ptx().source(), table.name()) {
            None => {
                return Err(error(
                    "the PTX declares no `.const` variable of that name (declare the table with \
                     `ferrocuda_std::constant!` in the kernel crate this PTX was built from)"
                        .into(),
                ))
            }
            Some(declared) if declared != bytes => {
                return Err(error(format!(
                    "the PTX declares it with {declared} bytes, the kernel crate's table has \
                     {bytes} (the PTX was built from other sources: rebuild it)"
                )))
            }
            Some(_) => {}
        }
        Ok(bytemuck::cast_slice(data))
    }
}

/// The size in bytes of the `.const` variable `name` as `source` declares it
/// (`.visible .const .align 4 .b8 NAME[100];`, or `.f32 NAME[25]` as nvcc writes it), if it does.
pub(crate) fn declared_bytes(source: &str, name: &str) -> Option<usize> {
    source.lines().find_map(|line| {
        let line = line.trim();
        let words: Vec<&str> = line.trim_end_matches(';').split_whitespace().collect();
        let space = words.iter().position(|w| *w == ".const")?;
        let (ty, variable) = (words.get(words.len().checked_sub(2)?)?, words.last()?);
        let count = match variable.strip_prefix(name)? {
            "" => 1,
            rest => rest.strip_prefix('[')?.strip_suffix(']')?.parse().ok()?,
        };
        (space < words.len() - 2).then_some(())?;
        let element = match ty.trim_start_matches(".") {
            "b8" | "u8" | "s8" => 1,
            "b16" | "u16" | "s16" | "f16" => 2,
            "b32" | "u32" | "s32" | "f32" => 4,
            "b64" | "u64" | "s64" | "f64" => 8,
            _ => return None,
        };
        Some(count * element)
    })
}

#[cfg(test)]
mod tests {
    use super::declared_bytes;

    #[test]
    fn const_declarations_are_read_in_bytes_by_name() {
        let ptx = ".version 6.0\n.visible .const .align 4 .b8 WEIGHTS[100];\n\
                   .const .align 4 .f32 TABLE[25];\n.global .align 4 .b8 OTHER[8];\n\
                   .visible .const .align 8 .u64 ONE;\n";
        assert_eq!(declared_bytes(ptx, "WEIGHTS"), Some(100));
        assert_eq!(declared_bytes(ptx, "TABLE"), Some(100));
        assert_eq!(declared_bytes(ptx, "ONE"), Some(8));
        // Not in .const, a prefix of a name, or absent.
        assert_eq!(declared_bytes(ptx, "OTHER"), None);
        assert_eq!(declared_bytes(ptx, "WEIGHT"), None);
        assert_eq!(declared_bytes(ptx, "NONE"), None);
    }
}
