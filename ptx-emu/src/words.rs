//! An allocation's bytes as 64-bit atomic words, in memory the emulator allocated (device
//! memory; host memory it hands out, whose device address is its host address) or in the host
//! program's own memory (registered with `cuMemHostRegister`), so that the host and kernels
//! read and write the same bytes, as mapped memory is on a GPU.

use std::alloc::Layout;
use std::ptr::NonNull;
use std::sync::atomic::AtomicU64;

pub(crate) struct Words {
    ptr: NonNull<AtomicU64>,
    len: usize,
    /// How the words were allocated, when the emulator did (and frees them on drop); `None`
    /// for the host program's memory.
    owned: Option<Layout>,
}

// SAFETY: the words are only ever accessed as atomics (`get`), which are Sync and Send; the
// memory stays valid for the life of `Words` (owned: freed on drop; the host's: its registration
// contract, see `Words::borrowed`).
unsafe impl Send for Words {}
// SAFETY: as for Send.
unsafe impl Sync for Words {}

impl Words {
    /// `len` zeroed words aligned to `align` bytes (a power of two, at least 8). `None` if the
    /// host cannot allocate them.
    pub(crate) fn zeroed(len: usize, align: usize) -> Option<Words> {
        let layout = Layout::from_size_align(len.max(1).checked_mul(8)?, align.max(8)).ok()?;
        // SAFETY: the layout's size is not zero.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        Some(Words {
            // All-zero bytes are a valid AtomicU64 (0).
            ptr: NonNull::new(ptr.cast())?,
            len,
            owned: Some(layout),
        })
    }

    /// The host program's `len` words at `ptr`.
    ///
    /// # Safety
    /// `ptr` is 8-byte aligned and valid for reads and writes of `len * 8` bytes until the
    /// `Words` is dropped, and nothing accesses them meanwhile except through these words or
    /// while no kernel runs (what `cuMemHostRegister` asks of its caller).
    pub(crate) unsafe fn borrowed(ptr: NonNull<u8>, len: usize) -> Words {
        Words {
            ptr: ptr.cast(),
            len,
            owned: None,
        }
    }

    /// The host address of the first word, exposed: the host program reads and writes the
    /// words through a pointer made from it.
    pub(crate) fn address(&self) -> u64 {
        self.ptr.as_ptr().expose_provenance() as u64
    }

    /// Word `i` (panics past the end, as a slice's index does).
    #[inline]
    pub(crate) fn get(&self, i: usize) -> &AtomicU64 {
        assert!(i < self.len, "word {i} of {}", self.len);
        // SAFETY: in bounds (checked), and valid for the life of `self` (the constructors'
        // contracts).
        unsafe { &*self.ptr.as_ptr().add(i) }
    }
}

impl Drop for Words {
    fn drop(&mut self) {
        if let Some(layout) = self.owned {
            // SAFETY: allocated by `zeroed` with this layout, and freed only here.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr().cast(), layout) };
        }
    }
}
