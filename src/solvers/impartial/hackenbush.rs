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

impl RootedTree {
    /// `parents[i]` = the parent of vertex i + 1 (what
    /// [`RootedTree::from_parents`] reads back).
    pub fn parents(&self) -> &[usize] {
        &self.parent[1..]
    }

    /// The tree after cutting the edge from vertex `v ≥ 1` to its parent:
    /// `v` and everything above it fall; the other vertices keep their
    /// order (renumbered 0, 1, …).
    ///
    /// # Panics
    /// If `v` is 0 or out of range.
    pub fn cut(&self, v: usize) -> RootedTree {
        assert!(
            (1..self.parent.len()).contains(&v),
            "no edge below vertex {v}"
        );
        let n = self.parent.len();
        // A vertex falls when its path to the root passes v; parents may
        // come after their children, so follow each path.
        let mut falls = vec![None::<bool>; n];
        falls[0] = Some(false);
        falls[v] = Some(true);
        for u in 1..n {
            let mut path = Vec::new();
            let mut w = u;
            while falls[w].is_none() {
                path.push(w);
                w = self.parent[w];
            }
            let f = falls[w];
            for x in path {
                falls[x] = f;
            }
        }
        let mut new_id = vec![usize::MAX; n];
        let mut next = 0;
        for u in 0..n {
            if falls[u] == Some(false) {
                new_id[u] = next;
                next += 1;
            }
        }
        let mut parent = vec![0; next];
        for u in 1..n {
            if falls[u] == Some(false) {
                parent[new_id[u]] = new_id[self.parent[u]];
            }
        }
        RootedTree { parent }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Grundy value as the mex of the options' values (the definition,
    /// no colon principle): the independent check.
    fn mex_value(t: &RootedTree) -> u64 {
        let options: Vec<u64> = (1..=t.edges()).map(|v| mex_value(&t.cut(v))).collect();
        (0..).find(|g| !options.contains(g)).unwrap()
    }

    /// Every tree of up to 6 edges (parents numbered before children, which
    /// gives every shape) and a few with parents after children.
    #[test]
    fn colon_principle_equals_the_mex_of_the_cuts() {
        fn all(edges: usize) -> Vec<Vec<usize>> {
            let mut out = vec![vec![]];
            for i in 0..edges {
                out = out
                    .into_iter()
                    .flat_map(|p| {
                        (0..=i).map(move |q| {
                            let mut p = p.clone();
                            p.push(q);
                            p
                        })
                    })
                    .collect();
            }
            out
        }
        let mut checked = 0;
        for edges in 0..=6 {
            for p in all(edges) {
                let t = RootedTree::from_parents(&p).unwrap();
                assert_eq!(t.grundy(), mex_value(&t), "tree {p:?}");
                checked += 1;
            }
        }
        assert_eq!(checked, 1 + 1 + 2 + 6 + 24 + 120 + 720);
        for p in [vec![2, 0], vec![3, 0, 0], vec![0, 3, 1, 1]] {
            let t = RootedTree::from_parents(&p).unwrap();
            assert_eq!(t.grundy(), mex_value(&t), "tree {p:?}");
        }
    }

    /// Winning Ways (Berlekamp, Conway, Guy), ch. 7: a stalk of n edges is
    /// the nimber n; two stalks on one vertex (a "V" of 1 and 1) is 0, a
    /// stalk of 1 under it gives 1.
    #[test]
    fn stalks_and_the_colon_principle_of_winning_ways() {
        for n in 0..10 {
            assert_eq!(RootedTree::stalk(n).grundy(), n as u64);
        }
        assert_eq!(RootedTree::from_parents(&[0, 0]).unwrap().grundy(), 0);
        assert_eq!(RootedTree::from_parents(&[0, 1, 1]).unwrap().grundy(), 1);
        // Branches 2 and 3 on the ground: 2 xor 3 = 1.
        assert_eq!(
            RootedTree::from_parents(&[0, 1, 0, 3, 4]).unwrap().grundy(),
            1
        );
    }

    #[test]
    fn a_cut_drops_the_branch_above_it() {
        let t = RootedTree::from_parents(&[0, 1, 1, 0]).unwrap();
        assert_eq!(t.cut(1).parents(), &[0]);
        assert_eq!(t.cut(2).parents(), &[0, 1, 0]);
        assert_eq!(t.cut(4).parents(), &[0, 1, 1]);
    }
}
