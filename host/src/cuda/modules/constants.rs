//! Constant tables on a GPU: `cuModuleGetGlobal` finds the table's `.const` bytes in the loaded
//! module, a copy sets them. The tables are kept, to be written again when the module is loaded in
//! a new context (after a kernel fault replaced the old one).
//!
//! A table is one piece of device memory per module, which every kernel reading it shares, so a
//! write must not overtake the launches still reading the old bytes, nor be overtaken by the
//! launches that should see the new ones. [`GpuDevice::set_constant`] waits for all queued work
//! before it writes, and for the copy after. A launch that carries its table
//! ([`GpuDevice::launch_carrying`]) does it in stream order under the module's table lock: the
//! copy, on the launching stream, waits for an event recorded after each earlier launch that
//! carried the table, and the launch waits for the last copy; an unchanged table is not written
//! again (the same filter on every launch writes once).

use super::super::gpu::{GpuContext, GpuDevice};
use super::{LoadedModule, ModuleInContext};
use crate::error::{Error, Result};
use crate::lock::lock;
use crate::stream::Stream;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};
use std::collections::HashMap;
use std::sync::Arc;

/// The stream-ordered uses of a module's tables by launches that carried them.
#[derive(Default)]
pub(crate) struct CarriedTables {
    tables: HashMap<&'static str, TableUses>,
}

/// One table's uses in one context: its last write and the launches that read it since.
struct TableUses {
    context: u64,
    /// Recorded after the last copy into the table.
    written: Option<CudaEvent>,
    /// Recorded after each launch that read the table since that copy, the last per stream
    /// (keyed by the `CUstream` handle).
    readers: Vec<(usize, CudaEvent)>,
}

impl TableUses {
    /// No uses yet, in context `context`.
    fn new(context: u64) -> Self {
        TableUses {
            context,
            written: None,
            readers: Vec::new(),
        }
    }
}

impl GpuDevice {
    /// Sets table `name` of `module` to `bytes` (already checked against the PTX's declaration),
    /// after every kernel queued so far on the device, on any stream, has finished: none of them
    /// sees the new bytes, every launch after sees them.
    pub(crate) fn set_constant(
        &self,
        module: &LoadedModule,
        name: &'static str,
        bytes: &[u8],
    ) -> Result<()> {
        let g = self.context();
        let loaded = self.module_in(&g, module)?;
        let mut carried = lock(&module.carried);
        let mark = g.launches.mark();
        g.ctx
            .synchronize()
            .map_err(self.driver_error(&g, "cuCtxSynchronize"))?;
        g.launches.finished_upto(mark);
        self.write_constant(&g, &loaded, module, name, bytes, &g.stream)?;
        lock(&module.constants).set(name, bytes);
        // Wait for the copy: launches on other streams must see the table.
        g.stream
            .synchronize()
            .map_err(self.driver_error(&g, "cuStreamSynchronize"))?;
        // Everything that read the table has finished, and nothing waits for the copy.
        carried.tables.remove(name);
        Ok(())
    }

    /// The bytes table `name` of `module` was last set to, if it was.
    pub(crate) fn constant_bytes(&self, module: &LoadedModule, name: &str) -> Option<Vec<u8>> {
        lock(&module.constants)
            .iter()
            .find(|(table, _)| *table == name)
            .map(|(_, bytes)| bytes.to_vec())
    }

    /// Sets table `name` of `module` to `bytes` and runs `launch`, which queues one kernel on
    /// `stream` (`None`: the default stream), as one step under the module's table lock: the
    /// copy (skipped when the table already holds `bytes`) waits for the earlier launches that
    /// carried the table, the kernel waits for the copy, and the next copy will wait for it.
    pub(crate) fn launch_carrying(
        &self,
        module: &LoadedModule,
        name: &'static str,
        bytes: &[u8],
        stream: Option<&Stream>,
        launch: impl FnOnce() -> Result<()>,
    ) -> Result<()> {
        let g = self.context();
        let loaded = self.module_in(&g, module)?;
        let cuda = match stream.and_then(Stream::cuda) {
            Some((_, context, _)) if context != g.id => return Err(self.stream_lost()),
            Some((cuda, _, _)) => cuda,
            None => &g.stream,
        };
        let event_error = |call| self.driver_error(&g, call);
        let mut carried = lock(&module.carried);
        let uses = carried
            .tables
            .entry(name)
            .or_insert_with(|| TableUses::new(g.id));
        if uses.context != g.id {
            // Events of a context a fault destroyed: its work is gone, and the table was written
            // again into the module's new context (`restore_constants`).
            *uses = TableUses::new(g.id);
        }
        let unchanged = lock(&module.constants)
            .iter()
            .any(|(table, set)| table == name && set == bytes);
        if unchanged {
            if let Some(written) = &uses.written {
                cuda.wait(written)
                    .map_err(event_error("cuStreamWaitEvent"))?;
            }
        } else {
            for (_, reader) in &uses.readers {
                cuda.wait(reader)
                    .map_err(event_error("cuStreamWaitEvent"))?;
            }
            self.write_constant(&g, &loaded, module, name, bytes, cuda)?;
            lock(&module.constants).set(name, bytes);
            uses.written = Some(record(cuda).map_err(event_error("cuEventRecord"))?);
            uses.readers.clear();
        }
        launch()?;
        let read = record(cuda).map_err(event_error("cuEventRecord"))?;
        let key = cuda.cu_stream() as usize;
        uses.readers.retain(|(stream, _)| *stream != key);
        uses.readers.push((key, read));
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
            self.write_constant(g, loaded, module, name, bytes, &g.stream)?;
        }
        g.stream
            .synchronize()
            .map_err(self.driver_error(g, "cuStreamSynchronize"))
    }

    /// Queues the copy of `bytes` into table `name` of `loaded` on `stream`. The bytes may be
    /// dropped once it returns: a copy from pageable memory returns once it has staged them.
    fn write_constant(
        &self,
        g: &GpuContext,
        loaded: &ModuleInContext,
        module: &LoadedModule,
        name: &'static str,
        bytes: &[u8],
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let mut symbol = loaded
            .module
            .get_global(name, stream)
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
        stream
            .memcpy_htod(bytes, &mut symbol)
            .map_err(self.driver_error(g, "cuMemcpyHtoDAsync"))
    }
}

/// An event without timing recorded on `stream` now.
fn record(stream: &CudaStream) -> Result<CudaEvent, cudarc::driver::DriverError> {
    stream.record_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING))
}
