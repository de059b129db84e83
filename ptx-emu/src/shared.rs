//! A block's shared memory with a race check: for every byte, the last writer and the readers
//! since the last barrier. Two threads touching the same byte between barriers, one of them
//! writing, with no barrier (`bar.sync`) or warp synchronisation of the same warp between, is a
//! race: what a missing `bar.sync` leaves. Atomics neither race nor are recorded.

/// Several threads (or warps) read the byte in this epoch.
const SEVERAL: u16 = u16::MAX;

#[derive(Clone, Copy, Default)]
struct Shadow {
    writer: u16,
    reader: u16,
    reader_warp: u16,
    /// Epochs are the block's barrier count + 1: 0 means never.
    write_epoch: u32,
    read_epoch: u32,
    /// The writer's / latest reader's warp-synchronisation count at the access.
    write_sync: u32,
    read_sync: u32,
    /// Whether any thread has stored to the byte (hardware does not zero shared memory).
    written: bool,
}

pub(crate) struct SharedMemory {
    pub bytes: Vec<u8>,
    shadow: Vec<Shadow>,
    /// The barrier epoch (starts at 1).
    pub epoch: u32,
    /// Per warp, how many warp-level synchronisations (`bar.warp.sync`, `shfl.sync`,
    /// `vote.sync`) it has completed.
    pub warp_syncs: Vec<u32>,
}

/// What an access to shared memory conflicts with.
pub(crate) enum Conflict {
    /// Another thread's access since the last barrier (`other` is `u32::MAX` for several).
    Race { other: u32, other_wrote: bool },
    /// The byte was never stored to in this block: its value is whatever the hardware left.
    Uninitialized,
}

/// The byte's last write, if another thread made it in this epoch and no warp synchronisation
/// of the same warp orders it before thread `t`'s access, is a race.
#[inline]
fn check_last_write(s: &Shadow, t: u16, warp: u16, epoch: u32, sync: u32) -> Result<(), Conflict> {
    let ordered = s.writer / 32 == warp && s.write_sync < sync;
    if s.write_epoch == epoch && s.writer != t && !ordered {
        return Err(Conflict::Race {
            other: s.writer as u32,
            other_wrote: true,
        });
    }
    Ok(())
}

impl SharedMemory {
    pub fn new() -> Self {
        SharedMemory {
            bytes: Vec::new(),
            shadow: Vec::new(),
            epoch: 1,
            warp_syncs: Vec::new(),
        }
    }

    /// Zeroed bytes and a fresh shadow for a new block.
    pub fn reset(&mut self, len: usize, warps: usize) {
        self.bytes.clear();
        self.bytes.resize(len, 0);
        self.shadow.clear();
        self.shadow.resize(len, Shadow::default());
        self.epoch = 1;
        self.warp_syncs.clear();
        self.warp_syncs.resize(warps, 0);
    }

    /// What an access by `thread` is recorded with: its id, its warp, the barrier epoch and its
    /// warp's count of warp-level synchronisations.
    #[inline(always)]
    fn accessor(&self, thread: u32) -> (u16, u16, u32, u32) {
        let warp = (thread / 32) as u16;
        (
            thread as u16,
            warp,
            self.epoch,
            self.warp_syncs[warp as usize],
        )
    }

    /// Records a read of `[offset, offset + len)` by `thread` (in bounds), or the conflict it
    /// makes (with the byte's offset).
    // Inlined into both instances of `thread::run` (as into the one there was before).
    #[inline(always)]
    pub fn read(
        &mut self,
        thread: u32,
        offset: usize,
        len: usize,
    ) -> Result<(), (usize, Conflict)> {
        let (t, warp, epoch, sync) = self.accessor(thread);
        for (i, s) in self.shadow[offset..offset + len].iter_mut().enumerate() {
            if !s.written {
                return Err((offset + i, Conflict::Uninitialized));
            }
            check_last_write(s, t, warp, epoch, sync).map_err(|c| (offset + i, c))?;
            if s.read_epoch != epoch {
                *s = Shadow {
                    reader: t,
                    reader_warp: warp,
                    read_epoch: epoch,
                    read_sync: sync,
                    ..*s
                };
            } else if s.reader != t {
                s.reader = SEVERAL;
                if s.reader_warp != warp {
                    s.reader_warp = SEVERAL;
                }
                s.read_sync = s.read_sync.max(sync);
            }
        }
        Ok(())
    }

    /// Records a write of `[offset, offset + len)` by `thread` (in bounds), or the race it makes
    /// (with the byte's offset).
    // Inlined into both instances of `thread::run` (as into the one there was before).
    #[inline(always)]
    pub fn write(
        &mut self,
        thread: u32,
        offset: usize,
        len: usize,
    ) -> Result<(), (usize, Conflict)> {
        let (t, warp, epoch, sync) = self.accessor(thread);
        for (i, s) in self.shadow[offset..offset + len].iter_mut().enumerate() {
            check_last_write(s, t, warp, epoch, sync).map_err(|c| (offset + i, c))?;
            if s.read_epoch == epoch
                && s.reader != t
                && !(s.reader_warp == warp && s.read_sync < sync)
            {
                let other = if s.reader == SEVERAL {
                    u32::MAX
                } else {
                    s.reader as u32
                };
                return Err((
                    offset + i,
                    Conflict::Race {
                        other,
                        other_wrote: false,
                    },
                ));
            }
            s.writer = t;
            s.write_epoch = epoch;
            s.write_sync = sync;
            s.written = true;
        }
        Ok(())
    }

    /// An atomic on `[offset, offset + len)`: it neither races nor is recorded, but reads the
    /// old value, so the bytes must have been stored to.
    #[inline]
    pub fn atomic(&self, offset: usize, len: usize) -> Result<(), (usize, Conflict)> {
        match self.shadow[offset..offset + len]
            .iter()
            .position(|s| !s.written)
        {
            Some(i) => Err((offset + i, Conflict::Uninitialized)),
            None => Ok(()),
        }
    }
}
