//! The CPU device's memory: an upload, a zeroed buffer or a copy back (`to_vec`) that does not
//! fit is `Error::OutOfMemory` with the bytes asked for and free, never an abort.

mod support;

use ferrocuda::{CpuOptions, Device, Error};

/// The (requested, free, total) of an `OutOfMemory` error.
fn out_of_memory<T>(result: ferrocuda::Result<T>) -> (usize, usize, usize) {
    match result {
        Err(Error::OutOfMemory {
            requested,
            free,
            total,
            ..
        }) => (requested, free, total),
        Err(other) => panic!("expected OutOfMemory, got {other}"),
        Ok(_) => panic!("expected OutOfMemory, it fitted"),
    }
}

/// A read-only, zero-filled slice of `bytes` that costs no memory: anonymous pages reserved
/// without swap (`MAP_NORESERVE`) are only committed when written. `None` where the kernel
/// refuses it (strict overcommit, `vm.overcommit_memory = 2`).
struct ZeroPages {
    at: *mut libc::c_void,
    bytes: usize,
}

impl ZeroPages {
    fn map(bytes: usize) -> Option<ZeroPages> {
        // SAFETY: a fresh anonymous mapping, no address hint; the result is checked.
        let at = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        (at != libc::MAP_FAILED).then_some(ZeroPages { at, bytes })
    }

    fn as_f32(&self) -> &[f32] {
        // SAFETY: the mapping is readable, page-aligned (so f32-aligned), `bytes` long and lives
        // as long as `self`; zero bytes are a valid f32.
        unsafe { std::slice::from_raw_parts(self.at as *const f32, self.bytes / 4) }
    }
}

impl Drop for ZeroPages {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once; no slice of it outlives `self`.
        unsafe { libc::munmap(self.at, self.bytes) };
    }
}

#[test]
fn uploading_more_than_the_host_has_is_out_of_memory_not_an_abort() {
    let device = Device::cpu();
    let Ok((_, total)) = device.memory_info() else {
        support::say_skipped(
            "cpu_upload_out_of_memory",
            "no /proc/meminfo on this system",
        );
        return;
    };
    // Twice the host's memory, as a real slice: copying it into a buffer cannot fit.
    let bytes = (total * 2).next_multiple_of(1 << 21);
    let Some(pages) = ZeroPages::map(bytes) else {
        support::say_skipped(
            "cpu_upload_out_of_memory",
            "the kernel refuses a MAP_NORESERVE mapping of twice its memory",
        );
        return;
    };
    let (requested, free, all) = out_of_memory(device.upload(pages.as_f32()));
    assert_eq!((requested, all), (bytes, total));
    assert!(free < requested);
    // The device is fine afterwards.
    assert_eq!(device.upload(&pages.as_f32()[..1000]).unwrap().len(), 1000);
}

#[test]
fn a_memory_limit_makes_upload_alloc_zeroed_and_to_vec_out_of_memory_past_it() {
    const KIB: usize = 1024;
    let device = Device::cpu_with(CpuOptions {
        memory_limit: Some(1024 * KIB),
        ..CpuOptions::from_env().unwrap()
    })
    .unwrap();
    assert_eq!(device.memory_info().unwrap(), (1024 * KIB, 1024 * KIB));
    let held = device.upload(&vec![7u32; 128 * KIB]).unwrap(); // 512 KiB
    assert_eq!(device.memory_info().unwrap(), (512 * KIB, 1024 * KIB));
    assert_eq!(
        out_of_memory(device.alloc_zeroed::<u8>(768 * KIB)),
        (768 * KIB, 512 * KIB, 1024 * KIB)
    );
    assert_eq!(
        out_of_memory(device.upload(&vec![0u8; 768 * KIB])),
        (768 * KIB, 512 * KIB, 1024 * KIB)
    );
    let more = device.alloc_zeroed::<u32>(96 * KIB).unwrap(); // 384 KiB: 896 held
                                                              // The copy back needs 512 KiB of the 128 left.
    assert_eq!(
        out_of_memory(held.to_vec()),
        (512 * KIB, 128 * KIB, 1024 * KIB)
    );
    // Dropping a buffer gives its bytes back.
    drop(more);
    assert_eq!(device.memory_info().unwrap(), (512 * KIB, 1024 * KIB));
    assert_eq!(held.to_vec().unwrap(), vec![7u32; 128 * KIB]);
    drop(held);
    assert_eq!(device.memory_info().unwrap(), (1024 * KIB, 1024 * KIB));
}
