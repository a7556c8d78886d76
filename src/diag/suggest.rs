//! "Did you mean …?" suggestions: the nearest candidate by edit distance.

/// Edit distance counting insertions, deletions, substitutions and swaps of two adjacent
/// characters as one edit each (optimal string alignment), since swaps are the commonest typo.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        for j in 0..=b.len() {
            d[i * w + j] = if i == 0 || j == 0 {
                i + j
            } else {
                let sub = d[(i - 1) * w + j - 1] + usize::from(a[i - 1] != b[j - 1]);
                let mut best = sub.min(d[(i - 1) * w + j] + 1).min(d[i * w + j - 1] + 1);
                if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                    best = best.min(d[(i - 2) * w + j - 2] + 1);
                }
                best
            };
        }
    }
    d[a.len() * w + b.len()]
}

/// The candidate closest to `name`, if it is close enough to be a plausible typo
/// (at most a third of the name's length, and at least one edit allowed).
pub fn nearest<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, c)| (d, c.len().abs_diff(name.len()), c))
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_finds_a_close_typo_and_rejects_far_names() {
        let names = ["printf", "print", "pid", "tid"];
        assert_eq!(nearest("prinft", names), Some("printf"));
        assert_eq!(nearest("pidd", names), Some("pid"));
        assert_eq!(nearest("completely", names), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("ab", "ba"), 1);
    }
}
