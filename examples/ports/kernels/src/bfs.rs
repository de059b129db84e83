//! Rodinia `cuda/bfs/kernel.cu` and `kernel2.cu`: breadth-first search, one frontier level per
//! pair of launches; the host loops while `Kernel2` set the `over` flag. The original's `bool`
//! arrays are `u8` (0 or 1) here: kernel memory of `bool` is refused (docs/kernels.md).

use ferrocuda_std::prelude::*;

/// `MAX_THREADS_PER_BLOCK` of bfs.cu.
pub const MAX_THREADS_PER_BLOCK: u32 = 512;

/// `struct Node`: a node's first edge and edge count in the edge list.
#[ferrocuda_std::pod]
#[repr(C)]
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Node {
    pub starting: i32,
    pub no_of_edges: i32,
}

/// Expands the frontier (`g_graph_mask`): each unvisited neighbour gets cost + 1 and is marked
/// for the next level. Several threads may store the same cost and flag into one neighbour.
#[kernel(name = "Kernel")]
pub fn kernel(
    g_graph_nodes: &[Node],
    g_graph_edges: &[i32],
    g_graph_mask: Out<u8>,
    g_updating_graph_mask: Out<u8>,
    g_graph_visited: &[u8],
    g_cost: Out<i32>,
    no_of_nodes: i32,
) {
    let tid = (thread::block_idx().x * MAX_THREADS_PER_BLOCK + thread::thread_idx().x) as i32;
    if tid < no_of_nodes && g_graph_mask.get(tid) != 0 {
        g_graph_mask.set(tid, 0);
        let node = g_graph_nodes.at(tid);
        for i in node.starting..(node.no_of_edges + node.starting) {
            let id = g_graph_edges.at(i);
            if g_graph_visited.at(id) == 0 {
                g_cost.set(id, g_cost.get(tid) + 1);
                g_updating_graph_mask.set(id, 1);
            }
        }
    }
}

/// Makes the marked nodes the next frontier, visits them and sets `g_over`.
#[kernel(name = "Kernel2")]
pub fn kernel2(
    g_graph_mask: Out<u8>,
    g_updating_graph_mask: Out<u8>,
    g_graph_visited: Out<u8>,
    g_over: Out<u8>,
    no_of_nodes: i32,
) {
    let tid = (thread::block_idx().x * MAX_THREADS_PER_BLOCK + thread::thread_idx().x) as i32;
    if tid < no_of_nodes && g_updating_graph_mask.get(tid) != 0 {
        g_graph_mask.set(tid, 1);
        g_graph_visited.set(tid, 1);
        g_over.set(0, 1);
        g_updating_graph_mask.set(tid, 0);
    }
}
