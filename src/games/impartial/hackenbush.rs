//! Green Hackenbush on rooted trees (Berlekamp–Conway–Guy, *Winning Ways*,
//! ch. 7).
//!
//! A rooted tree stands on the ground at its root; a move cuts one edge, and
//! everything no longer connected to the ground disappears. **Colon
//! principle**: the branches above a vertex can be replaced by one stalk of
//! length equal to the nim-sum of their values, and an edge below a subtree of
//! value g gives value g + 1. So `G(v) = ⊕ (G(c) + 1)` over the children c
//! of v, and the tree's value is `G(root)`; a stalk of n edges has value n.

/// A rooted tree: vertex 0 is the root (on the ground); every other vertex v
/// has one edge to `parent(v)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RootedTree {
    parent: Vec<usize>,
}

impl RootedTree {
    /// A tree from `parents[i]` = the parent of vertex i + 1 (vertices
    /// 1…len; the root 0 has no parent). E.g. `[0, 1, 2]` is a stalk of 3
    /// edges, `[0, 0]` two edges on the ground.
    ///
    /// # Errors
    /// If a parent is out of range or the edges contain a cycle (some vertex
    /// does not reach the root).
    pub fn from_parents(parents: &[usize]) -> Result<Self, String> {
        let n = parents.len() + 1;
        let mut parent = vec![0usize; n];
        for (i, &p) in parents.iter().enumerate() {
            if p >= n {
                return Err(format!(
                    "vertex {}: parent {p} out of range 0…{}",
                    i + 1,
                    n - 1
                ));
            }
            parent[i + 1] = p;
        }
        // Every vertex must reach the root within n steps.
        for v in 1..n {
            let mut u = v;
            let mut steps = 0;
            while u != 0 {
                u = parent[u];
                steps += 1;
                if steps > n {
                    return Err(format!("vertex {v} does not reach the root (cycle)"));
                }
            }
        }
        Ok(RootedTree { parent })
    }

    /// A stalk (path) of `len` edges standing on the ground.
    pub fn stalk(len: usize) -> Self {
        RootedTree {
            parent: (0..=len).map(|v| v.saturating_sub(1)).collect(),
        }
    }

    /// Number of edges.
    pub fn edges(&self) -> usize {
        self.parent.len() - 1
    }

    /// The parent of vertex `v ≥ 1`.
    ///
    /// # Panics
    /// If `v` is 0 or out of range.
    pub fn parent(&self, v: usize) -> usize {
        assert!(v >= 1, "the root has no parent");
        self.parent[v]
    }

    /// The Grundy value by the colon principle: O(vertices).
    pub fn grundy(&self) -> u64 {
        let n = self.parent.len();
        // Children before parents: order vertices by depth, deepest first.
        let mut depth = vec![usize::MAX; n];
        depth[0] = 0;
        fn depth_of(v: usize, parent: &[usize], depth: &mut [usize]) -> usize {
            let mut path = Vec::new();
            let mut u = v;
            while depth[u] == usize::MAX {
                path.push(u);
                u = parent[u];
            }
            let mut d = depth[u];
            for &w in path.iter().rev() {
                d += 1;
                depth[w] = d;
            }
            depth[v]
        }
        for v in 1..n {
            depth_of(v, &self.parent, &mut depth);
        }
        let mut order: Vec<usize> = (1..n).collect();
        order.sort_by_key(|&v| std::cmp::Reverse(depth[v]));
        let mut g = vec![0u64; n];
        for v in order {
            let p = self.parent[v];
            g[p] ^= g[v] + 1;
        }
        g[0]
    }
}
