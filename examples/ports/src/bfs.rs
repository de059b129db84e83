//! Rodinia bfs (`cuda/bfs/bfs.cu`): each node's level from node 0, `Kernel` then `Kernel2` per
//! level, until no thread set the `over` flag (one byte copied down and back each level).

use crate::{compare_exact, rng, Comparison, Port};
use ferrocuda_host::{launch, Module, Result};
use ports_kernels::bfs::{kernel, kernel2, Node, MAX_THREADS_PER_BLOCK};
use rand::Rng;

pub struct Input {
    pub nodes: Vec<Node>,
    pub edges: Vec<i32>,
    pub source: usize,
}

pub struct Bfs;

impl Port for Bfs {
    const NAME: &'static str = "Rodinia bfs";
    type Input = Input;
    type Output = Vec<i32>;
    type Reference = Vec<i32>;

    fn describe(input: &Input) -> String {
        format!(
            "{} nodes, {} edges (both directions), from node {}",
            input.nodes.len(),
            input.edges.len(),
            input.source
        )
    }

    /// A random graph as Rodinia's generator makes them: each node joined to a few random others,
    /// each edge listed at both ends.
    fn input(seed: u64, scale: usize) -> Input {
        let mut rng = rng(seed);
        let n = 4000 * scale;
        let mut adjacency = vec![Vec::new(); n];
        for a in 0..n {
            for _ in 0..rng.random_range(1..=3) {
                let b = rng.random_range(0..n);
                adjacency[a].push(b as i32);
                adjacency[b].push(a as i32);
            }
        }
        let (mut nodes, mut edges) = (Vec::with_capacity(n), Vec::new());
        for list in adjacency {
            nodes.push(Node {
                starting: edges.len() as i32,
                no_of_edges: list.len() as i32,
            });
            edges.extend(list);
        }
        Input {
            nodes,
            edges,
            source: 0,
        }
    }

    fn run(module: &Module, input: &Input) -> Result<Vec<i32>> {
        let device = module.device();
        let no_of_nodes = input.nodes.len();
        let (num_of_blocks, num_of_threads_per_block) =
            if no_of_nodes > MAX_THREADS_PER_BLOCK as usize {
                (
                    no_of_nodes.div_ceil(MAX_THREADS_PER_BLOCK as usize),
                    MAX_THREADS_PER_BLOCK as usize,
                )
            } else {
                (1, no_of_nodes)
            };
        let mut mask = vec![0u8; no_of_nodes];
        let mut visited = vec![0u8; no_of_nodes];
        let mut cost = vec![-1i32; no_of_nodes];
        mask[input.source] = 1;
        visited[input.source] = 1;
        cost[input.source] = 0;

        let graph_nodes = device.upload(&input.nodes)?;
        let graph_edges = device.upload(&input.edges)?;
        let mut graph_mask = device.upload(&mask)?;
        let mut updating_graph_mask = device.alloc_zeroed::<u8>(no_of_nodes)?;
        let mut graph_visited = device.upload(&visited)?;
        let mut d_cost = device.upload(&cost)?;
        let mut over = device.alloc_zeroed::<u8>(1)?;
        let n = no_of_nodes as i32;
        loop {
            // if no thread changes this value then the loop stops
            over.copy_from(&[0])?;
            launch!(
                module,
                kernel[num_of_blocks, num_of_threads_per_block](
                    &graph_nodes,
                    &graph_edges,
                    &mut graph_mask,
                    &mut updating_graph_mask,
                    &graph_visited,
                    &mut d_cost,
                    n
                )
            )?;
            launch!(
                module,
                kernel2[num_of_blocks, num_of_threads_per_block](
                    &mut graph_mask,
                    &mut updating_graph_mask,
                    &mut graph_visited,
                    &mut over,
                    n
                )
            )?;
            if over.to_vec()?[0] == 0 {
                break;
            }
        }
        d_cost.to_vec()
    }

    /// A queue-based breadth-first search.
    fn reference(input: &Input) -> Vec<i32> {
        let mut cost = vec![-1; input.nodes.len()];
        let mut queue = std::collections::VecDeque::from([input.source]);
        cost[input.source] = 0;
        while let Some(a) = queue.pop_front() {
            let node = input.nodes[a];
            for &b in
                &input.edges[node.starting as usize..(node.starting + node.no_of_edges) as usize]
            {
                if cost[b as usize] < 0 {
                    cost[b as usize] = cost[a] + 1;
                    queue.push_back(b as usize);
                }
            }
        }
        cost
    }

    fn compare(got: &Vec<i32>, want: &Vec<i32>) -> Comparison {
        compare_exact("cost", got, want)
    }
}
