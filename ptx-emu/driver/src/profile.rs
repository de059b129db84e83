//! `FERROCUDA_EMU_PROFILE=path`: every launch runs with the emulator's counters on and appends
//! one JSON line to `path` (the kernel, its launch shape and resources, and its
//! [`Profile`]); `ferrocuda profile --from path` prints the table, `ferrocuda::profile` reads
//! it. See docs/profile.md for the format.

use ferrocuda_ptx_emu::{InstrClass, KernelInfo, LaunchDims, Profile};
use serde_json::{json, Value};
use std::io::Write;
use std::path::PathBuf;
use std::sync::{LazyLock, Mutex};

/// The environment variable naming the file the launches' counters are appended to.
pub(crate) const PROFILE_ENV: &str = "FERROCUDA_EMU_PROFILE";

/// [`PROFILE_ENV`], read once per process; a lock so that launches from several host threads
/// write whole lines.
static PROFILE_FILE: LazyLock<Option<Mutex<PathBuf>>> = LazyLock::new(|| {
    std::env::var_os(PROFILE_ENV)
        .filter(|v| !v.is_empty())
        .map(|v| Mutex::new(PathBuf::from(v)))
});

/// Whether launches are profiled.
pub(crate) fn wanted() -> bool {
    PROFILE_FILE.is_some()
}

fn global(t: &ferrocuda_ptx_emu::GlobalTraffic) -> Value {
    json!({"requests": t.requests, "sectors": t.sectors, "bytes_requested": t.bytes_requested})
}

fn shared(t: &ferrocuda_ptx_emu::SharedTraffic) -> Value {
    json!({"requests": t.requests, "wavefronts": t.wavefronts, "ideal_wavefronts": t.ideal_wavefronts})
}

/// The line for one launch.
pub(crate) fn record(info: &KernelInfo, registers: u32, dims: LaunchDims, p: &Profile) -> Value {
    let by_class: serde_json::Map<String, Value> = InstrClass::ALL
        .iter()
        .map(|&c| (c.name().to_string(), json!(p.class(c))))
        .collect();
    json!({
        "kernel": info.name,
        "grid": dims.grid,
        "block": dims.block,
        "dynamic_shared_bytes": dims.dynamic_shared_bytes,
        "static_shared_bytes": info.static_shared_bytes,
        "registers_estimate": registers,
        "counters": {
            "warp_instructions": p.warp_instructions,
            "by_class": by_class,
            "thread_instructions": p.thread_instructions,
            "thread_instructions_pred_on": p.thread_instructions_pred_on,
            "branches": p.branches,
            "divergent_branches": p.divergent_branches,
            "global_loads": global(&p.global_loads),
            "global_stores": global(&p.global_stores),
            "shared_loads": shared(&p.shared_loads),
            "shared_stores": shared(&p.shared_stores),
            "atomic_requests": p.atomic_requests,
            "atomic_lanes": p.atomic_lanes,
            "atomic_same_address": p.atomic_same_address,
            "barrier_instructions": p.barrier_instructions,
            "blocks": p.blocks,
        }
    })
}

/// Appends `line` to the profile file; a file that cannot be written is said on stderr (the
/// launch itself succeeded).
pub(crate) fn append(line: &Value) {
    let Some(file) = PROFILE_FILE.as_ref() else {
        return;
    };
    let path = file.lock().unwrap_or_else(|p| p.into_inner());
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&*path)
        .and_then(|mut f| writeln!(f, "{line}"));
    if let Err(e) = written {
        eprintln!(
            "ferrocuda PTX emulator: {PROFILE_ENV}: cannot append to {}: {e}",
            path.display()
        );
    }
}
