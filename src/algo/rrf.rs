//! Reciprocal rank fusion (Cormack, Clarke and Büttcher, SIGIR 2009).

use std::collections::BTreeMap;

/// Fuses ranked lists: an item scores `Σ 1 / (k + rank)` over the lists that hold it (rank
/// from 1). Returns (item, score) best first; ties go to the smaller item. An item repeated
/// within one list counts at its best rank only.
///
/// # Complexity
/// O(L log L) for L items over all lists.
///
/// # Example
/// ```
/// use memtrace::algo::reciprocal_rank_fusion;
/// let fused = reciprocal_rank_fusion(&[vec!["a", "b"], vec!["b", "c"]], 60.0);
/// assert_eq!(fused[0].0, "b");
/// ```
pub fn reciprocal_rank_fusion<T: Ord + Clone>(rankings: &[Vec<T>], k: f64) -> Vec<(T, f64)> {
    let mut scores: BTreeMap<T, f64> = BTreeMap::new();
    for list in rankings {
        let mut seen = std::collections::BTreeSet::new();
        for (i, item) in list.iter().enumerate() {
            if !seen.insert(item) {
                continue;
            }
            *scores.entry(item.clone()).or_insert(0.0) += 1.0 / (k + (i + 1) as f64);
        }
    }
    let mut fused: Vec<(T, f64)> = scores.into_iter().collect();
    // Stable sort: the BTreeMap order breaks ties.
    fused.sort_by(|a, b| b.1.total_cmp(&a.1));
    fused
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_follow_the_formula() {
        let fused = reciprocal_rank_fusion(&[vec![3, 1, 2], vec![1, 4], vec![1, 1]], 60.0);
        let get = |x| fused.iter().find(|p| p.0 == x).map(|p| p.1).unwrap();
        assert!((get(1) - (1.0 / 62.0 + 1.0 / 61.0 + 1.0 / 61.0)).abs() < 1e-12);
        assert!((get(4) - 1.0 / 62.0).abs() < 1e-12);
        assert_eq!(fused[0].0, 1);
        // 3 (1/61) beats 2 (1/63) and 4 (1/62); order is 1, 3, 4, 2.
        assert_eq!(
            fused.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec![1, 3, 4, 2]
        );
    }

    #[test]
    fn ties_go_to_the_smaller_item() {
        let fused = reciprocal_rank_fusion(&[vec!["b"], vec!["a"]], 60.0);
        assert_eq!(
            fused.iter().map(|p| p.0).collect::<Vec<_>>(),
            vec!["a", "b"]
        );
    }
}
