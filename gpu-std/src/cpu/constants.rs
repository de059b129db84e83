//! Constant tables on the CPU executor: the launch's tables (each module keeps its own, set with
//! `Module::set_constant`), which `ConstTable::view` finds by name while a block runs.

use core::cell::Cell;
use std::sync::{Arc, OnceLock};
use std::vec::Vec;

/// The constant tables of a module: each table's name and bytes (in 8-byte words, so every element
/// type is aligned). Tables are replaced whole, never written in place, so a launch that holds a
/// table keeps reading the bytes it started with.
#[derive(Clone, Debug, Default)]
pub struct ConstantTables {
    /// Name, length in bytes, bytes.
    tables: Vec<(&'static str, usize, Arc<[u64]>)>,
}

impl ConstantTables {
    /// No tables: every table reads as zeros.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets table `name` to `bytes`.
    pub fn set(&mut self, name: &'static str, bytes: &[u8]) {
        let mut words = std::vec![0u64; bytes.len().div_ceil(8)];
        bytemuck::cast_slice_mut::<u64, u8>(&mut words)[..bytes.len()].copy_from_slice(bytes);
        let words: Arc<[u64]> = words.into();
        match self.tables.iter_mut().find(|(n, _, _)| *n == name) {
            Some((_, len, table)) => (*len, *table) = (bytes.len(), words),
            None => self.tables.push((name, bytes.len(), words)),
        }
    }

    /// Table `name`'s words, if it was set.
    fn words(&self, name: &str) -> Option<&Arc<[u64]>> {
        self.tables
            .iter()
            .find(|(n, _, _)| *n == name)
            .map(|(_, _, t)| t)
    }

    /// Each table that was set: its name and bytes.
    pub fn iter(&self) -> impl Iterator<Item = (&'static str, &[u8])> {
        self.tables
            .iter()
            .map(|(name, len, words)| (*name, &bytemuck::cast_slice::<u64, u8>(words)[..*len]))
    }
}

std::thread_local! {
    /// The tables of the launch whose block runs on this OS thread (null: none).
    static CURRENT: Cell<*const ConstantTables> = const { Cell::new(core::ptr::null()) };
}

/// Runs `f` (a block's CPU entry) with `tables` as the launch's constant tables on this OS thread.
/// An executor internal.
pub fn with_constants<R>(tables: &ConstantTables, f: impl FnOnce() -> R) -> R {
    super::context::with_current(&CURRENT, tables, f)
}

/// Table `name` of the running launch, at least `bytes` long: the module's copy, or zeros if it
/// was never set (as the driver zeroes `.const` on a GPU).
pub(crate) fn constant_table(name: &str, bytes: usize) -> Arc<[u64]> {
    let current = CURRENT.with(Cell::get);
    // SAFETY: a non-null pointer was set by `with_constants` from a reference that outlives its
    // `f`, and is put back before `with_constants` returns or unwinds.
    let found = unsafe { current.as_ref() }.and_then(|tables| tables.words(name));
    match found {
        Some(table) if table.len() * 8 >= bytes => table.clone(),
        _ => zeros(bytes),
    }
}

/// At least `bytes` of zeros.
fn zeros(bytes: usize) -> Arc<[u64]> {
    static ZEROS: OnceLock<Arc<[u64]>> = OnceLock::new();
    let words = crate::machine::CONSTANT_MEMORY_BYTES / 8;
    let zeros = ZEROS.get_or_init(|| std::vec![0u64; words].into());
    if bytes <= words * 8 {
        zeros.clone()
    } else {
        std::vec![0u64; bytes.div_ceil(8)].into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::constant! {
        static TABLE: [i32; 3];
    }

    #[test]
    fn a_view_reads_the_tables_of_the_launch_and_zeros_outside_one() {
        let mut tables = ConstantTables::new();
        tables.set("TABLE", bytemuck::cast_slice(&[5i32, -6, 7]));
        let inside = with_constants(&tables, || TABLE.view());
        let outside = TABLE.view();
        assert_eq!((inside.get(0), inside.get(1), inside.get(2)), (5, -6, 7));
        assert_eq!(outside.get(2), 0);
        // Replacing a table leaves views of the old one as they were.
        tables.set("TABLE", bytemuck::cast_slice(&[1i32, 2, 3]));
        assert_eq!(inside.get(1), -6);
        assert_eq!(with_constants(&tables, || TABLE.get(1)), 2);
        let set: Vec<_> = tables.iter().collect();
        assert_eq!(set, [("TABLE", bytemuck::cast_slice(&[1i32, 2, 3]))]);
    }

    #[test]
    #[should_panic(expected = "index 3 out of bounds for a constant table of length 3")]
    fn an_index_past_the_table_panics() {
        let _ = TABLE.get(3);
    }
}
