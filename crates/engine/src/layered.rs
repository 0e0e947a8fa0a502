//! Reading through layers: the merge of sorted layers, newest first, in which a key's newest
//! entry is a value or a tombstone (docs/PAGED_STORE.md, build order step 3: a read sees the
//! delta, then the frozen delta of a running checkpoint, then the base snapshot; a row deleted
//! since the last checkpoint is a tombstone in the delta that hides the base's copy).
//!
//! Owns [`Layered`] and its item type [`LayerItem`]. It knows nothing of rows or of the base:
//! each layer is any iterator of `(key, Some(value) | None)` in ascending key order, and a
//! layer that reads from disk yields `Err` where a read failed.
//!
//! Invariants: each layer's keys strictly ascend (checked in debug builds); for a key present
//! in several layers the newest layer's entry (the lowest index) wins and the older ones are
//! passed over; a tombstone yields nothing (it hides the key); an error from any layer is
//! yielded once and ends the merge, so a failed read is never taken for a missing row; each
//! `next` advances every layer by at most the number of keys it passes over, and reads each
//! layer's next entry only once it needs it.

/// One entry of a layer: a key with its value, or with `None` (a tombstone), or a failed read.
pub type LayerItem<K, V, E> = Result<(K, Option<V>), E>;

/// A layer: its entries in ascending key order.
pub type Layer<'a, K, V, E> = Box<dyn Iterator<Item = LayerItem<K, V, E>> + 'a>;

/// The merge of layers, newest first (module docs). Yields `(key, value)` in ascending key
/// order, one per key that some layer holds and whose newest entry is not a tombstone.
pub struct Layered<'a, K, V, E> {
    layers: Vec<Layer<'a, K, V, E>>,
    /// Each layer's next entry, read but not yet merged (None: not read yet, or exhausted).
    heads: Vec<Option<(K, Option<V>)>>,
    /// Layers that returned None.
    exhausted: Vec<bool>,
    /// The last key merged from each layer, to check its order (debug builds).
    #[cfg(debug_assertions)]
    last: Vec<Option<K>>,
    done: bool,
}

impl<'a, K: Ord + Clone, V, E> Layered<'a, K, V, E> {
    /// `layers[0]` is the newest.
    pub fn new(layers: Vec<Layer<'a, K, V, E>>) -> Self {
        let n = layers.len();
        Layered {
            layers,
            heads: (0..n).map(|_| None).collect(),
            exhausted: vec![false; n],
            #[cfg(debug_assertions)]
            last: (0..n).map(|_| None).collect(),
            done: false,
        }
    }

    /// Reads the next entry of every layer whose head was merged.
    fn fill(&mut self) -> Result<(), E> {
        for i in 0..self.layers.len() {
            if self.heads[i].is_some() || self.exhausted[i] {
                continue;
            }
            match self.layers[i].next() {
                Some(Ok(entry)) => {
                    self.note(i, &entry.0);
                    self.heads[i] = Some(entry);
                }
                Some(Err(e)) => return Err(e),
                None => self.exhausted[i] = true,
            }
        }
        Ok(())
    }

    /// The newest layer whose head has the smallest key (None: every layer is exhausted).
    fn smallest(&self) -> Option<usize> {
        let mut best: Option<(usize, &K)> = None;
        for (i, head) in self.heads.iter().enumerate() {
            if let Some((k, _)) = head {
                if best.is_none_or(|(_, b)| k < b) {
                    best = Some((i, k));
                }
            }
        }
        best.map(|(i, _)| i)
    }

    #[cfg(debug_assertions)]
    fn note(&mut self, layer: usize, key: &K) {
        let prev = self.last[layer].replace(key.clone());
        debug_assert!(
            prev.is_none_or(|p| p < *key),
            "layer {layer} yielded keys out of ascending order"
        );
    }

    #[cfg(not(debug_assertions))]
    fn note(&mut self, _layer: usize, _key: &K) {}
}

impl<K: Ord + Clone, V, E> Iterator for Layered<'_, K, V, E> {
    type Item = Result<(K, V), E>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            if let Err(e) = self.fill() {
                self.done = true;
                return Some(Err(e));
            }
            let Some(i) = self.smallest() else {
                break;
            };
            let Some((key, value)) = self.heads[i].take() else {
                break;
            };
            // Older layers' entries for the same key are shadowed: merged without a look.
            for head in &mut self.heads[i + 1..] {
                if head.as_ref().is_some_and(|(k, _)| *k == key) {
                    *head = None;
                }
            }
            if let Some(v) = value {
                return Some(Ok((key, v)));
            }
        }
        self.done = true;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    type Entries = Vec<(u8, Option<u32>)>;

    fn layer(entries: &Entries) -> Layer<'_, u8, u32, String> {
        Box::new(entries.iter().map(|&(k, v)| Ok((k, v))))
    }

    /// The model: apply the layers oldest first into a map (a tombstone removes).
    fn model(layers: &[Entries]) -> Vec<(u8, u32)> {
        let mut m = BTreeMap::new();
        for l in layers.iter().rev() {
            for &(k, v) in l {
                match v {
                    Some(v) => m.insert(k, v),
                    None => m.remove(&k),
                };
            }
        }
        m.into_iter().collect()
    }

    #[test]
    fn newest_wins_and_tombstones_hide_older_values() {
        let delta = vec![(2, None), (4, Some(40)), (9, Some(90))];
        let frozen = vec![(1, None), (2, Some(21)), (5, Some(51))];
        let base = vec![(1, Some(10)), (2, Some(20)), (4, Some(4)), (7, Some(70))];
        let got: Vec<(u8, u32)> = Layered::new(vec![layer(&delta), layer(&frozen), layer(&base)])
            .map(Result::unwrap)
            .collect();
        assert_eq!(got, [(4, 40), (5, 51), (7, 70), (9, 90)]);
        assert_eq!(got, model(&[delta, frozen, base]));
    }

    #[test]
    fn a_failed_read_is_yielded_once_and_ends_the_merge() {
        let delta: Entries = vec![(1, Some(1)), (8, Some(8))];
        let base: Vec<LayerItem<u8, u32, String>> = vec![
            Ok((2, Some(2))),
            Err("checksum mismatch in 000012.sst".to_string()),
            Ok((9, Some(9))),
        ];
        let got: Vec<Result<(u8, u32), String>> =
            Layered::new(vec![layer(&delta), Box::new(base.into_iter())]).collect();
        assert_eq!(
            got,
            [
                Ok((1, 1)),
                Ok((2, 2)),
                Err("checksum mismatch in 000012.sst".to_string())
            ]
        );
    }

    #[test]
    fn no_layers_or_only_tombstones_yield_nothing() {
        assert_eq!(Layered::<u8, u32, String>::new(vec![]).count(), 0);
        let delta: Entries = vec![(1, None), (2, None)];
        let base: Entries = vec![(1, Some(1)), (2, Some(2))];
        assert_eq!(Layered::new(vec![layer(&delta), layer(&base)]).count(), 0);
    }

    fn sorted_layer() -> impl Strategy<Value = Entries> {
        proptest::collection::btree_map(0u8..40, proptest::option::weighted(0.7, 0u32..1000), 0..30)
            .prop_map(|m| m.into_iter().collect())
    }

    proptest! {
        #[test]
        fn the_merge_equals_applying_the_layers_oldest_first(
            layers in proptest::collection::vec(sorted_layer(), 0..5)
        ) {
            let got: Vec<(u8, u32)> = Layered::new(layers.iter().map(layer).collect())
                .map(Result::unwrap)
                .collect();
            prop_assert_eq!(got, model(&layers));
        }
    }
}
