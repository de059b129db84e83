//! Loading a module: parse, place module variables in device memory of their own, decode every
//! kernel with the functions it calls.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::decode::{decode_kernel, ModuleSymbols, Symbol};
use crate::memory::Allocation;
use crate::parse::{err, parse};
use crate::{KernelInfo, Module, ParamInfo, ParseError};

/// Module variables get addresses below every [`crate::Memory`] allocation's, never reused.
static NEXT_MODULE_ADDRESS: AtomicU64 = AtomicU64::new(0x7e00_0000_0000);

pub(crate) fn load(ptx: &str) -> Result<Module, ParseError> {
    let ast = parse(ptx)?;
    // Every variable's bytes (each at most 1 GiB, aligned to at most 4 KiB) summed: below 2^31,
    // so no layout of them overflows a u32 offset.
    let declared = ast
        .variables
        .iter()
        .chain(ast.functions.iter().flat_map(|f| {
            f.params
                .iter()
                .chain(&f.returns)
                .chain(f.body.iter().filter_map(|s| match s {
                    crate::parse::Statement::Var(v) => Some(v),
                    _ => None,
                }))
        }));
    let total: u64 = declared.map(|v| v.bytes as u64 + v.align as u64).sum();
    if total > 1 << 31 {
        return Err(err(
            1,
            &format!("the module declares {total} bytes of variables (at most 2 GiB)"),
        ));
    }
    let source: Arc<Vec<String>> = Arc::new(ptx.lines().map(str::to_string).collect());
    let mut symbols = HashMap::new();
    let mut globals = Vec::new();
    let mut global_names = Vec::new();
    let mut shared = Vec::new();
    for v in &ast.variables {
        if v.space == ".shared" {
            symbols.insert(v.name.as_str(), Symbol::Shared);
            shared.push(v.clone());
            continue;
        }
        let len = (v.bytes as u64).max(1);
        let base =
            NEXT_MODULE_ADDRESS.fetch_add(len.next_multiple_of(256) + 256, Ordering::Relaxed);
        let allocation = Allocation::zeroed(base, len, crate::Checks::Strict);
        if v.init.len() as u64 * v.element_bytes as u64 > v.bytes as u64 {
            return Err(err(
                v.line,
                &format!("{} has more initialisers than elements", v.name),
            ));
        }
        for (k, value) in v.init.iter().enumerate() {
            let bytes = value.to_le_bytes();
            allocation.write_bytes(
                k as u64 * v.element_bytes as u64,
                &bytes[..v.element_bytes as usize],
            );
        }
        symbols.insert(v.name.as_str(), Symbol::Global(base));
        globals.push(Arc::new(allocation));
        global_names.push((v.name.clone(), v.bytes as u64));
    }
    let functions = ast.functions.iter().map(|f| (f.name.as_str(), f)).collect();
    let module_symbols = ModuleSymbols {
        symbols,
        shared: &shared,
        functions,
        source,
    };
    let const_bytes = ast
        .variables
        .iter()
        .filter(|v| v.space == ".const")
        .fold(0u32, |sum, v| sum.saturating_add(v.bytes));
    let mut kernels = Vec::new();
    for entry in ast.functions.iter().filter(|f| f.is_entry) {
        let program = decode_kernel(&module_symbols, entry)?;
        let info = KernelInfo {
            name: entry.name.clone(),
            params: entry
                .params
                .iter()
                .map(|p| ParamInfo {
                    size: p.bytes,
                    align: p.align,
                })
                .collect(),
            static_shared_bytes: program.static_shared_bytes,
            local_bytes: program.stack_base,
            registers: program
                .registers
                .min(entry.max_registers.unwrap_or(255))
                .min(255),
            const_bytes,
            max_threads_per_block: entry.max_threads.unwrap_or(1024).min(1024),
        };
        kernels.push((program, info));
    }
    Ok(Module {
        kernels,
        globals,
        global_names,
    })
}

#[cfg(test)]
mod tests {
    use crate::Module;

    /// `CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES` comes from here: the module's `.const` bytes, not
    /// its `.global` ones; `.maxnreg` caps the register estimate.
    #[test]
    fn kernels_report_the_module_s_constant_bytes_and_their_register_limit() {
        let ptx = ".version 7.0\n.target sm_70\n.address_size 64\n\
            .const .align 8 .b8 table[80];\n.const .align 4 .u32 one = 1;\n.global .u32 g[100];\n\
            .visible .entry k() .maxnreg 40 { .reg .b32 %r<200>; ret; }\n";
        let info = Module::parse(ptx).unwrap().kernel("k").unwrap();
        assert_eq!(info.const_bytes, 84);
        assert_eq!(info.registers, 40);
    }
}
