//! Constant tables on a GPU: `cuModuleGetGlobal` finds the table's `.const` bytes in the loaded
//! module, a copy sets them. The tables are kept, to be written again when the module is loaded in
//! a new context (after a kernel fault replaced the old one).

use super::{lock, GpuContext, GpuDevice, LoadedModule, ModuleInContext};
use crate::error::{Error, Result};

impl GpuDevice {
    /// Sets table `name` of `module` to `bytes` (already checked against the PTX's declaration).
    pub(crate) fn set_constant(
        &self,
        module: &LoadedModule,
        name: &'static str,
        bytes: &[u8],
    ) -> Result<()> {
        let g = self.context();
        let loaded = self.module_in(&g, module)?;
        self.write_constant(&g, &loaded, module, name, bytes)?;
        lock(&module.constants).set(name, bytes);
        Ok(())
    }

    /// Writes every table set so far into `loaded`, the module just loaded again in `g`.
    pub(super) fn restore_constants(
        &self,
        g: &GpuContext,
        loaded: &ModuleInContext,
        module: &LoadedModule,
    ) -> Result<()> {
        let tables = lock(&module.constants).clone();
        for (name, bytes) in tables.iter() {
            self.write_constant(g, loaded, module, name, bytes)?;
        }
        Ok(())
    }

    fn write_constant(
        &self,
        g: &GpuContext,
        loaded: &ModuleInContext,
        module: &LoadedModule,
        name: &'static str,
        bytes: &[u8],
    ) -> Result<()> {
        let mut symbol = loaded
            .module
            .get_global(name, &g.stream)
            .map_err(self.driver_error(g, "cuModuleGetGlobal"))?;
        if symbol.len() != bytes.len() {
            return Err(Error::ConstantTable {
                table: name,
                module: module.ptx.name(),
                detail: format!(
                    "the driver has {} bytes for it, the table {}",
                    symbol.len(),
                    bytes.len()
                ),
            });
        }
        g.stream
            .memcpy_htod(bytes, &mut symbol)
            .map_err(self.driver_error(g, "cuMemcpyHtoD"))?;
        // Launches on other streams must see the table: wait for the copy.
        g.stream
            .synchronize()
            .map_err(self.driver_error(g, "cuStreamSynchronize"))
    }
}
