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

/// Names longer than this get no suggestion: a typo in a name this long is rare, and the
/// edit distance costs the product of the two lengths.
pub const MAX_SUGGEST_LEN: usize = 128;

/// [`edit_distance`] when it is at most `limit`, else `None`; rows are dropped as soon as no
/// cell of two consecutive ones is within `limit` (no later cell can be).
pub fn edit_distance_within(a: &[char], b: &[char], limit: usize) -> Option<usize> {
    if a.len().abs_diff(b.len()) > limit {
        return None;
    }
    let w = b.len() + 1;
    let mut rows = [
        vec![0usize; w],
        vec![0usize; w],
        (0..w).collect::<Vec<usize>>(),
    ];
    let mut prev_min = 0;
    for i in 1..=a.len() {
        rows.rotate_left(1);
        let [r2, r1, r0] = &mut rows;
        r0[0] = i;
        let mut row_min = i;
        for j in 1..w {
            let sub = r1[j - 1] + usize::from(a[i - 1] != b[j - 1]);
            let mut best = sub.min(r1[j] + 1).min(r0[j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(r2[j - 2] + 1);
            }
            r0[j] = best;
            row_min = row_min.min(best);
        }
        if row_min > limit && prev_min > limit {
            return None;
        }
        prev_min = row_min;
    }
    let d = rows[2][b.len()];
    (d <= limit).then_some(d)
}

/// The candidate closest to `name`, if it is close enough to be a plausible typo
/// (at most a third of the name's length, and at least one edit allowed). Linear in the
/// number of candidates: candidates whose length alone rules them out cost no distance.
pub fn nearest<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let a: Vec<char> = name.chars().collect();
    if a.len() > MAX_SUGGEST_LEN {
        return None;
    }
    let limit = (a.len() / 3).max(1);
    let mut b = Vec::new();
    candidates
        .into_iter()
        .filter(|c| c.len() <= 4 * (MAX_SUGGEST_LEN + limit))
        .filter_map(|c| {
            b.clear();
            b.extend(c.chars());
            edit_distance_within(&a, &b, limit).map(|d| (d, c))
        })
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

    #[test]
    fn bounded_distance_agrees_with_the_full_one() {
        let words = [
            "",
            "a",
            "ab",
            "ba",
            "abc",
            "acb",
            "kitten",
            "sitting",
            "printf",
            "prinft",
            "pid",
            "tid",
            "count",
            "cout",
            "vfs_read",
            "vfs_write",
            "@map_12",
            "@map_21",
        ];
        for x in words {
            for y in words {
                let (a, b): (Vec<char>, Vec<char>) = (x.chars().collect(), y.chars().collect());
                let full = edit_distance(x, y);
                for limit in 0..8 {
                    let want = (full <= limit).then_some(full);
                    assert_eq!(edit_distance_within(&a, &b, limit), want, "{x} {y} {limit}");
                }
            }
        }
    }

    #[test]
    fn a_huge_name_gets_no_suggestion_and_costs_little() {
        let long = "x".repeat(1 << 20);
        let t = std::time::Instant::now();
        assert_eq!(nearest(&long, [long.as_str(), "x"]), None);
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
    }
}
