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

/// A race found: the other thread, and whether it wrote.
pub(crate) struct Race {
    pub other: u32,
    pub other_wrote: bool,
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

    /// Records a read of `[offset, offset + len)` by `thread` (in bounds), or the race it makes.
    #[inline]
    pub fn read(&mut self, thread: u32, offset: usize, len: usize) -> Result<(), Race> {
        let (epoch, warp) = (self.epoch, (thread / 32) as u16);
        let sync = self.warp_syncs[warp as usize];
        let t = thread as u16;
        for s in &mut self.shadow[offset..offset + len] {
            if s.write_epoch == epoch
                && s.writer != t
                && !(s.writer / 32 == warp && s.write_sync < sync)
            {
                return Err(Race {
                    other: s.writer as u32,
                    other_wrote: true,
                });
            }
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

    /// Records a write of `[offset, offset + len)` by `thread` (in bounds), or the race it makes.
    #[inline]
    pub fn write(&mut self, thread: u32, offset: usize, len: usize) -> Result<(), Race> {
        let (epoch, warp) = (self.epoch, (thread / 32) as u16);
        let sync = self.warp_syncs[warp as usize];
        let t = thread as u16;
        for s in &mut self.shadow[offset..offset + len] {
            if s.write_epoch == epoch
                && s.writer != t
                && !(s.writer / 32 == warp && s.write_sync < sync)
            {
                return Err(Race {
                    other: s.writer as u32,
                    other_wrote: true,
                });
            }
            if s.read_epoch == epoch
                && s.reader != t
                && !(s.reader_warp == warp && s.read_sync < sync)
            {
                let other = if s.reader == SEVERAL {
                    u32::MAX
                } else {
                    s.reader as u32
                };
                return Err(Race {
                    other,
                    other_wrote: false,
                });
            }
            s.writer = t;
            s.write_epoch = epoch;
            s.write_sync = sync;
        }
        Ok(())
    }
}
