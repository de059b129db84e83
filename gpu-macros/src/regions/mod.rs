//! Region splitting, for the CPU expansion: a kernel body whose barriers (`sync_threads()`) sit
//! at its top level or inside `while`/`for` loops at its top level is cut at them into regions,
//! and each region becomes a loop over the block's threads (POCL's and MCUDA's loop fission).
//! The variables a later region uses stay between regions in per-thread slots, one array per
//! variable (`ferrocuda_std::cpu::Slots`); a region reads the ones it names and writes back the
//! ones it may have changed (`codegen`). A loop with a barrier in it asks every thread for its
//! decision (another trip or not) and stops the block with a divergence report if they differ
//! (`ferrocuda_std::cpu::Regions`).
//!
//! Splitting is optimistic: the macro cannot look into the functions the body calls (nor into
//! warp operations' neighbours), and takes them as barrier-free; a barrier or warp operation
//! reached inside a region moves the rest of that region onto coroutines at run time
//! (`ferrocuda_std::cpu`'s fallback). A barrier of the body itself anywhere else than above (inside
//! an `if`, a closure, a `loop`), a grid sync or a mutable parameter keep the coroutine path, and
//! [`plan()`] says why. A body with no barrier is one region: the elementwise loop.
//!
//! `break`, `continue` and `return` may leave a split loop from anywhere in its regions (in an
//! `if`, a `match`, a nested loop without a barrier; labelled or not): the thread stops running
//! the trip's regions and waits where it went (`Regions::leave`); when every thread that has not
//! returned is waiting, the block goes there (after the loop, or its next trip), and a thread
//! others do not follow to a barrier is barrier divergence, as on the coroutine path. A `let`
//! without a value is cut into one `let` per name and carried once assigned (`unassigned`). Items declared in the body (`const`, `static`, `use`, `fn`)
//! are hoisted above the regions, and so are block-uniform `let`s (`uniform`).
//!
//! The passes, bottom to top (each file imports only files above it in this list):
//! - `names`: name and syntax queries every pass uses, and the generated code's hygienic names;
//! - `collective` (a collective call's syntax and its split and step code) and `unassigned`
//!   (a `let` without a value: cut per name, then tracked while unassigned);
//! - `segments`: the data the passes hand on ([`Seg`](segments::Seg), [`Plan`]);
//! - the analyses over segments: `collective_segs` (grouping `mma`s, the states' declarations),
//!   `uniform` (block-uniform values, hoisted and decided once), `carried` (what crosses a
//!   region boundary, what may be recomputed instead);
//! - `plan`: the parse pass, which cuts a body into segments, checks them and runs the analyses;
//! - `codegen` then `elementwise`: generate the code from the plan (never calling the planner).

mod carried;
mod codegen;
mod codegen_loops;
mod codegen_region;
mod collective;
mod collective_segs;
mod elementwise;
mod names;
mod plan;
mod rewrite;
mod segments;
mod unassigned;
mod uniform;
mod uniform_expr;

pub(crate) use codegen::regions;
pub(crate) use elementwise::elementwise;
pub(crate) use names::regions_ident;
pub(crate) use plan::{barrier_stmt, plan};
pub(crate) use segments::Plan;
