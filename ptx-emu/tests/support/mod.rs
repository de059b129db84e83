//! Shared helpers of the emulator's tests: the PTX they run (built once per test binary with
//! ferrocuda-builder, like the root crate's tests do), device buffers and parameter packing.
#![allow(dead_code)]

use std::path::Path;
use std::sync::{Arc, OnceLock};

use ferrocuda_ptx_emu::{launch, Fault, LaunchDims, LaunchStats, Memory, Module, Profile};

/// `crate_dir` built to PTX into `target/<target>`, or the file `env` names.
fn build(crate_dir: &str, target: &str, env: &str) -> String {
    if let Some(path) = std::env::var_os(env) {
        return std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{env}={path:?}: {e}"));
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let built = ferrocuda_builder::PtxBuilder::new(root.join(crate_dir))
        .target_dir(root.join("target").join(target))
        .build()
        .unwrap_or_else(|e| panic!("building {crate_dir} to PTX failed:\n{e}"));
    built.ptx
}

/// The library's kernels as ferrocuda ships them (`ferrocuda::KERNELS`, from its build script).
pub fn library_ptx() -> &'static str {
    ferrocuda::KERNELS.source()
}

/// test-kernels as PTX; `FERROCUDA_TEST_KERNELS_PTX` may name a file.
pub fn test_kernels_ptx() -> &'static str {
    static PTX: OnceLock<String> = OnceLock::new();
    PTX.get_or_init(|| {
        build(
            "test-kernels",
            "test-kernels-ptx",
            "FERROCUDA_TEST_KERNELS_PTX",
        )
    })
}

pub fn library() -> &'static Module {
    static MODULE: OnceLock<Module> = OnceLock::new();
    MODULE
        .get_or_init(|| Module::parse(library_ptx()).unwrap_or_else(|e| panic!("library PTX: {e}")))
}

pub fn test_kernels() -> &'static Module {
    static MODULE: OnceLock<Module> = OnceLock::new();
    MODULE.get_or_init(|| {
        Module::parse(test_kernels_ptx()).unwrap_or_else(|e| panic!("test-kernels PTX: {e}"))
    })
}

/// One kernel parameter's bytes.
pub enum Arg {
    /// A `&[T]` or `Out<T>`: pointer and length (two PTX parameters).
    Slice(Buffer),
    /// Raw bytes of a by-value parameter.
    Value(Vec<u8>),
}

#[derive(Clone, Copy)]
pub struct Buffer {
    pub addr: u64,
    pub len: u64,
}

pub fn value<T: bytemuck::Pod>(v: T) -> Arg {
    Arg::Value(bytemuck::bytes_of(&v).to_vec())
}

/// A device with its memory.
pub struct Device {
    pub memory: Arc<Memory>,
}

impl Device {
    pub fn new() -> Self {
        Device {
            memory: Memory::new(1 << 32),
        }
    }

    pub fn upload<T: bytemuck::Pod>(&self, data: &[T]) -> Buffer {
        let bytes: &[u8] = bytemuck::cast_slice(data);
        let addr = self.memory.alloc(bytes.len() as u64).unwrap();
        self.memory.write(addr, bytes).unwrap();
        Buffer {
            addr,
            len: data.len() as u64,
        }
    }

    pub fn zeros<T: bytemuck::Pod>(&self, n: usize) -> Buffer {
        let addr = self.memory.alloc((n * size_of::<T>()) as u64).unwrap();
        Buffer {
            addr,
            len: n as u64,
        }
    }

    pub fn download<T: bytemuck::Pod>(&self, buffer: Buffer) -> Vec<T> {
        let mut out = vec![T::zeroed(); buffer.len as usize];
        self.memory
            .read(buffer.addr, bytemuck::cast_slice_mut(&mut out))
            .unwrap();
        out
    }

    /// Launches `kernel` of `module` with `args` packed as the PTX parameters.
    pub fn launch(
        &self,
        module: &Module,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        shared: u32,
        args: &[Arg],
    ) -> Result<LaunchStats, Fault> {
        let params = pack(args);
        let refs: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
        launch(
            module,
            kernel,
            dims(grid, block, shared),
            &refs,
            &self.memory,
        )
    }

    /// [`Device::launch`] with the counters on: the launch's [`Profile`].
    pub fn profile(
        &self,
        module: &Module,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[Arg],
    ) -> Result<Profile, Fault> {
        let params = pack(args);
        let refs: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
        let options = ferrocuda_ptx_emu::LaunchOptions {
            kind: ferrocuda_ptx_emu::LaunchKind::Plain,
            deadline: None,
            profile: true,
        };
        let dims = dims(grid, block, 0);
        let stats = ferrocuda_ptx_emu::launch_with(
            module,
            kernel,
            dims,
            &refs,
            &self.memory,
            &options,
            &mut Vec::new(),
        )?;
        Ok(stats.profile.expect("a profiled launch has counters"))
    }

    /// [`Device::launch`], keeping what the kernel prints in `printed`.
    pub fn launch_printing(
        &self,
        module: &Module,
        kernel: &str,
        grid: [u32; 3],
        block: [u32; 3],
        args: &[Arg],
        printed: &mut Vec<u8>,
    ) -> Result<LaunchStats, Fault> {
        let params = pack(args);
        let refs: Vec<&[u8]> = params.iter().map(Vec::as_slice).collect();
        let dims = dims(grid, block, 0);
        let kind = ferrocuda_ptx_emu::LaunchKind::Plain;
        ferrocuda_ptx_emu::launch_printing(module, kernel, dims, &refs, &self.memory, kind, printed)
    }
}

fn dims(grid: [u32; 3], block: [u32; 3], shared: u32) -> LaunchDims {
    LaunchDims {
        grid,
        block,
        dynamic_shared_bytes: shared,
    }
}

/// Each argument as its PTX parameters' bytes.
fn pack(args: &[Arg]) -> Vec<Vec<u8>> {
    let mut params: Vec<Vec<u8>> = Vec::new();
    for arg in args {
        match arg {
            Arg::Slice(b) => {
                params.push(b.addr.to_le_bytes().to_vec());
                params.push(b.len.to_le_bytes().to_vec());
            }
            Arg::Value(v) => params.push(v.clone()),
        }
    }
    params
}

/// Deterministic pseudo-random f32 in `[-1, 1)` (splitmix64), so failures reproduce.
pub fn random_f32(seed: u64, n: usize) -> Vec<f32> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 40) as f32 / (1u64 << 23) as f32) - 1.0
        })
        .collect()
}

/// Asserts `got` is within `tolerance` (relative to max(1, |want|)) of the f64 reference.
pub fn assert_close(got: &[f32], want: &[f64], tolerance: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let err = (g as f64 - w).abs() / w.abs().max(1.0);
        assert!(
            err <= tolerance,
            "{what}[{i}]: got {g}, want {w} (relative error {err:e} > {tolerance:e})"
        );
    }
}

/// Runs `instruction` (operands %r1, %r2, %r3 in, %r4 out; 32-bit, or 64-bit as %rd1.. with
/// `wide`) once per element of `inputs`, returning each result's bits.
pub fn run_instruction(instruction: &str, wide: bool, inputs: &[[u64; 3]]) -> Vec<u64> {
    let (reg, ld, bytes) = if wide {
        ("%rd", "b64", 8)
    } else {
        ("%r", "b32", 4)
    };
    let loads: String = (1..=3)
        .map(|k| {
            format!(
                "ld.global.{ld} {reg}{k}, [%a{k}];\nadd.s64 %a{next}, %a{k}, {bytes};\n",
                next = k + 1
            )
        })
        .collect();
    let ptx = format!(
        ".version 7.0\n.target sm_70\n.address_size 64\n\
         .visible .entry k(.param .u64 in, .param .u64 out)\n{{\n\
         .reg .pred %p<4>;\n.reg .b32 %r<8>;\n.reg .b64 %rd<8>;\n.reg .b64 %a<8>;\n.reg .b32 %t<2>;\n\
         mov.u32 %t1, %tid.x;\nld.param.u64 %a0, [in];\nmul.wide.u32 %a5, %t1, {stride};\nadd.s64 %a1, %a0, %a5;\n\
         {loads}{instruction}\n\
         ld.param.u64 %a6, [out];\nmul.wide.u32 %a5, %t1, {bytes};\nadd.s64 %a6, %a6, %a5;\nst.global.{ld} [%a6], {reg}4;\nret;\n}}\n",
        stride = 3 * bytes,
    );
    let module = Module::parse(&ptx).unwrap_or_else(|e| panic!("{instruction}: {e}"));
    let d = Device::new();
    let flat: Vec<u8> = inputs
        .iter()
        .flat_map(|v| v.iter().flat_map(|x| x.to_le_bytes()[..bytes].to_vec()))
        .collect();
    let input = d.upload(&flat);
    let out = d.zeros::<u8>(inputs.len() * bytes);
    d.launch(
        &module,
        "k",
        [1, 1, 1],
        [inputs.len() as u32, 1, 1],
        0,
        &[value(input.addr), value(out.addr)],
    )
    .unwrap_or_else(|f| panic!("{instruction}: {f}"));
    d.download::<u8>(out)
        .chunks(bytes)
        .map(|c| c.iter().rev().fold(0, |v, &b| v << 8 | b as u64))
        .collect()
}
