//! Shell-style wildcards as bpftrace uses them in attach points: `*` (any run, possibly
//! empty), `?` (one character), `[abc]`/`[a-z]` classes, and `{a,b}` alternatives.

/// Whether `name` matches `pattern` in full.
pub fn glob_match(pattern: &str, name: &str) -> bool {
    if let Some(open) = pattern.find('{') {
        if let Some(close) = pattern[open..].find('}').map(|c| open + c) {
            let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
            return pattern[open + 1..close]
                .split(',')
                .any(|alt| glob_match(&format!("{head}{alt}{tail}"), name));
        }
    }
    matches(pattern.as_bytes(), name.as_bytes())
}

/// Iterative matcher with single-star backtracking: linear in practice, never exponential.
fn matches(p: &[u8], s: &[u8]) -> bool {
    let (mut pi, mut si) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while si < s.len() {
        if pi < p.len() {
            match p[pi] {
                b'*' => {
                    star = Some((pi, si));
                    pi += 1;
                    continue;
                }
                b'?' => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                b'[' => {
                    if let Some((hit, len)) = class(&p[pi..], s[si]) {
                        if hit {
                            pi += len;
                            si += 1;
                            continue;
                        }
                    } else if s[si] == b'[' {
                        pi += 1;
                        si += 1;
                        continue;
                    }
                }
                c if c == s[si] => {
                    pi += 1;
                    si += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, ss)) => {
                pi = sp + 1;
                si = ss + 1;
                star = Some((sp, ss + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

/// A `[...]` class at the start of `p`: whether `c` is in it, and the class's length; `None`
/// when the bracket is not closed (then it is a literal `[`).
fn class(p: &[u8], c: u8) -> Option<(bool, usize)> {
    let end = p.iter().skip(1).position(|&b| b == b']')? + 1;
    let body = &p[1..end];
    let (negate, body) = match body.first() {
        Some(b'!' | b'^') => (true, &body[1..]),
        _ => (false, body),
    };
    let mut hit = false;
    let mut i = 0;
    while i < body.len() {
        if i + 2 < body.len() && body[i + 1] == b'-' {
            hit |= (body[i]..=body[i + 2]).contains(&c);
            i += 3;
        } else {
            hit |= body[i] == c;
            i += 1;
        }
    }
    Some((hit != negate, end + 1))
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn glob_matches_stars_classes_and_alternatives() {
        assert!(glob_match("vfs_*", "vfs_read"));
        assert!(glob_match("vfs_*", "vfs_"));
        assert!(!glob_match("vfs_*", "do_vfs_read"));
        assert!(glob_match("*_read*", "vfs_readv"));
        assert!(glob_match("tcp_v?_connect", "tcp_v4_connect"));
        assert!(glob_match("tcp_v[46]_connect", "tcp_v6_connect"));
        assert!(!glob_match("tcp_v[!46]_connect", "tcp_v6_connect"));
        assert!(glob_match("tcp_{v4,v6}_connect", "tcp_v4_connect"));
        assert!(!glob_match("tcp_{v4,v6}_connect", "tcp_v5_connect"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
        assert!(glob_match("[", "["));
    }
}
