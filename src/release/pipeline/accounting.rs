//! How the privacy budgets of a release's measurements compose over the hierarchy.
//!
//! Neighbouring datasets differ by one entity in one group (Kuo et al. Definition 1).
//! That group lies in exactly one leaf, so the change touches exactly one node per
//! level: the leaf and its ancestors. A measurement of a node with budget ε therefore
//! costs ε for the entities below that node and nothing for any other entity.
//!
//! The guarantee of a set of measurements is the largest total charged along one
//! root-to-leaf path: [`guarantee`]. This single function is sequential composition
//! across levels (the charges on one path add) and parallel composition within a level
//! (the nodes of a level are disjoint, so only one of them is on any path). Release code
//! states its ε only through it.
//!
//! # Citations
//! McSherry, "Privacy Integrated Queries", SIGMOD 2009 (parallel composition); Kuo et
//! al., PVLDB 2018, Theorem 5.6.

use crate::privacy::Loss;
use std::collections::HashMap;

use crate::data::{Hierarchy, NodeId};

/// One measurement's cost: budget `budget` (an ε or a ρ) spent on the groups below `node`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Charge {
    pub node: NodeId,
    pub budget: Loss,
}

/// The guarantee (pure ε-DP, or ρ-zCDP) of all `charges` together: the maximum, over
/// leaves, of the sum of the charges on the leaf and its ancestors. `None` when nothing
/// was measured (no privacy is spent).
pub fn guarantee(hierarchy: &Hierarchy, charges: &[Charge]) -> Option<Loss> {
    if charges.is_empty() {
        return None;
    }
    let mut per_node: Vec<Option<Loss>> = vec![None; hierarchy.len()];
    for c in charges {
        let slot = &mut per_node[c.node.index()];
        *slot = Some(match slot.take() {
            None => c.budget.clone(),
            Some(e) => e.compose(&c.budget),
        });
    }
    // Path sums top-down: nodes are stored level by level, parents first.
    let mut path: Vec<Option<Loss>> = vec![None; hierarchy.len()];
    for (i, node) in hierarchy.nodes().iter().enumerate() {
        let above = node.parent.and_then(|p| path[p.index()].clone());
        path[i] = match (above, per_node[i].take()) {
            (None, own) => own,
            (above, None) => above,
            (Some(a), Some(o)) => Some(a.compose(&o)),
        };
    }
    hierarchy
        .level_nodes(hierarchy.leaf_level())
        .filter_map(|leaf| path[leaf.index()].clone())
        .max_by(|a, b| a.to_rho().cmp(&b.to_rho()))
}

/// The charges of a whole release, for millions of regions: each node's charge is an
/// index into the distinct budgets spent, so a charge costs 8 bytes and no exact
/// rational is copied per region. Its [`Charges::guarantee`] is [`guarantee`]'s, computed
/// on the indices: path sums are formed once per distinct pair of budgets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Charges {
    budgets: Vec<Loss>,
    charges: Vec<(NodeId, u32)>,
}

impl Charges {
    pub fn new() -> Self {
        Self::default()
    }

    /// The index of `budget` among the distinct budgets, added if new.
    fn intern(&mut self, budget: &Loss) -> u32 {
        match self.budgets.iter().position(|b| b == budget) {
            Some(i) => i as u32,
            None => {
                self.budgets.push(budget.clone());
                (self.budgets.len() - 1) as u32
            }
        }
    }

    /// Records a measurement of `node` with budget `budget`.
    pub fn push(&mut self, node: NodeId, budget: &Loss) {
        let i = self.intern(budget);
        self.charges.push((node, i));
    }

    /// Records measurements of every node in `nodes` with the same budget.
    pub fn extend(&mut self, nodes: impl IntoIterator<Item = NodeId>, budget: &Loss) {
        let i = self.intern(budget);
        self.charges.extend(nodes.into_iter().map(|n| (n, i)));
    }

    /// Adds another set of charges.
    pub fn append(&mut self, other: &Charges) {
        for &(node, i) in &other.charges {
            let j = self.intern(&other.budgets[i as usize]);
            self.charges.push((node, j));
        }
    }

    pub fn len(&self) -> usize {
        self.charges.len()
    }

    pub fn is_empty(&self) -> bool {
        self.charges.is_empty()
    }

    /// The ε-DP guarantee of all the charges: see [`guarantee`].
    pub fn guarantee(&self, hierarchy: &Hierarchy) -> Option<Loss> {
        if self.charges.is_empty() {
            return None;
        }
        // Sums of budgets, interned: `values[i]`, with each sum of two formed once.
        let mut values: Vec<Loss> = self.budgets.clone();
        let mut sums: HashMap<(u32, u32), u32> = HashMap::new();
        let mut add = |a: u32, b: u32, values: &mut Vec<Loss>| -> u32 {
            let key = (a.min(b), a.max(b));
            *sums.entry(key).or_insert_with(|| {
                let sum = values[a as usize].compose(&values[b as usize]);
                match values.iter().position(|v| *v == sum) {
                    Some(i) => i as u32,
                    None => {
                        values.push(sum);
                        (values.len() - 1) as u32
                    }
                }
            })
        };
        const NONE: u32 = u32::MAX;
        let mut per_node: Vec<u32> = vec![NONE; hierarchy.len()];
        for &(node, i) in &self.charges {
            let slot = &mut per_node[node.index()];
            *slot = if *slot == NONE {
                i
            } else {
                add(*slot, i, &mut values)
            };
        }
        // Path sums top-down: nodes are stored level by level, parents first.
        for i in 0..hierarchy.len() {
            let above = hierarchy.nodes()[i]
                .parent
                .map_or(NONE, |p| per_node[p.index()]);
            let own = per_node[i];
            per_node[i] = match (above, own) {
                (NONE, own) => own,
                (above, NONE) => above,
                (a, o) => add(a, o, &mut values),
            };
        }
        let mut leaf_values: Vec<u32> = hierarchy
            .level_nodes(hierarchy.leaf_level())
            .map(|leaf| per_node[leaf.index()])
            .filter(|&v| v != NONE)
            .collect();
        leaf_values.sort_unstable();
        leaf_values.dedup();
        leaf_values
            .into_iter()
            .map(|v| values[v as usize].clone())
            .max_by(|a, b| a.to_rho().cmp(&b.to_rho()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::LevelId;
    use crate::data::tests::tiny;

    fn e(s: &str) -> Loss {
        Loss::Pure(crate::privacy::Epsilon::parse(s).unwrap())
    }

    #[test]
    fn levels_add_and_siblings_do_not() {
        let d = tiny();
        let h = &d.hierarchy;
        let budgets = [e("0.2"), e("1/3"), e("0.5")];
        let charges: Vec<Charge> = h
            .levels()
            .flat_map(|l| h.level_nodes(l).map(move |n| (l, n)))
            .map(|(l, n)| Charge {
                node: n,
                budget: budgets[l.0].clone(),
            })
            .collect();
        assert_eq!(
            guarantee(h, &charges),
            Some(e("0.2").compose(&e("1/3")).compose(&e("0.5")))
        );
    }

    #[test]
    fn uneven_paths_take_the_maximum() {
        let d = tiny();
        let h = &d.hierarchy;
        let a = h.find("US/A").unwrap();
        let b1 = h.find("US/B/b1").unwrap();
        // 0.3 on state A (covers a1, a2), 0.5 on leaf b1 alone: the worst path is via b1.
        let charges = vec![
            Charge {
                node: a,
                budget: e("0.3"),
            },
            Charge {
                node: b1,
                budget: e("0.5"),
            },
        ];
        assert_eq!(guarantee(h, &charges), Some(e("0.5")));
        // Two measurements of the same node add.
        let charges = vec![
            Charge {
                node: a,
                budget: e("0.3"),
            },
            Charge {
                node: a,
                budget: e("0.3"),
            },
        ];
        assert_eq!(guarantee(h, &charges), Some(e("0.6")));
        // A root measurement (e.g. estimating K) is charged to every path.
        let mut charges: Vec<Charge> = h
            .level_nodes(LevelId(2))
            .map(|n| Charge {
                node: n,
                budget: e("1"),
            })
            .collect();
        charges.push(Charge {
            node: h.root(),
            budget: e("0.001"),
        });
        assert_eq!(guarantee(h, &charges), Some(e("1.001")));
        assert_eq!(guarantee(h, &[]), None);
    }

    #[test]
    fn interned_charges_give_the_same_guarantee() {
        let d = tiny();
        let h = &d.hierarchy;
        let a = h.find("US/A").unwrap();
        let b1 = h.find("US/B/b1").unwrap();
        let cases: Vec<Vec<Charge>> = vec![
            vec![],
            vec![
                Charge {
                    node: a,
                    budget: e("0.3"),
                },
                Charge {
                    node: b1,
                    budget: e("0.5"),
                },
            ],
            vec![
                Charge {
                    node: a,
                    budget: e("0.3"),
                },
                Charge {
                    node: a,
                    budget: e("1/7"),
                },
                Charge {
                    node: h.root(),
                    budget: e("1/3"),
                },
                Charge {
                    node: b1,
                    budget: e("0.5"),
                },
            ],
            h.levels()
                .flat_map(|l| h.level_nodes(l).map(move |n| (l, n)))
                .map(|(l, n)| Charge {
                    node: n,
                    budget: [e("0.2"), e("1/3"), e("0.5")][l.0].clone(),
                })
                .collect(),
        ];
        for charges in cases {
            let mut interned = Charges::new();
            for c in &charges {
                interned.push(c.node, &c.budget);
            }
            assert_eq!(interned.guarantee(h), guarantee(h, &charges));
            let mut appended = Charges::new();
            appended.append(&interned);
            assert_eq!(appended.guarantee(h), guarantee(h, &charges));
        }
    }
}
