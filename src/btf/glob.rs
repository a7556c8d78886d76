//! Shell-style name patterns as bpftrace uses them for probe targets: `*` (any run), `?` (one
//! character), `[abc]`/`[a-z]`/`[!a]` classes, `{a,b}` alternatives (nested allowed) and `\`
//! escapes. Input: a pattern string. Output: a compiled [`Glob`] that matches names in time
//! linear in the name for each alternative, and knows its literal prefix so sorted indexes can
//! narrow the candidates before matching.

/// Why a pattern does not compile.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    #[error("unclosed `{{` in pattern `{pattern}`")]
    UnclosedBrace { pattern: String },
    #[error("unmatched `}}` in pattern `{pattern}`")]
    UnmatchedBrace { pattern: String },
    #[error("unclosed `[` in pattern `{pattern}`")]
    UnclosedClass { pattern: String },
    #[error("pattern `{pattern}` ends with a lone `\\`")]
    TrailingEscape { pattern: String },
    #[error("pattern `{pattern}` expands to more than {limit} alternatives")]
    TooManyAlternatives { pattern: String, limit: usize },
}

const MAX_ALTERNATIVES: usize = 1024;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Lit(u8),
    Any,
    Star,
    Class {
        negated: bool,
        ranges: Vec<(u8, u8)>,
    },
}

/// One alternative, compiled: either literal runs separated by `*` (the common case, matched
/// with `starts_with`/`find`/`ends_with`), or general tokens.
#[derive(Clone, Debug)]
enum Alt {
    Segments {
        /// Literal runs between stars; the first is anchored at the start unless
        /// `leading_star`, the last at the end unless `trailing_star`.
        segs: Vec<String>,
        leading_star: bool,
        trailing_star: bool,
    },
    Tokens(Vec<Tok>),
}

impl Alt {
    fn compile(toks: Vec<Tok>) -> Alt {
        if !toks.iter().all(|t| matches!(t, Tok::Lit(_) | Tok::Star)) {
            return Alt::Tokens(toks);
        }
        let leading_star = toks.first() == Some(&Tok::Star);
        let trailing_star = toks.last() == Some(&Tok::Star);
        let segs = toks
            .split(|t| *t == Tok::Star)
            .filter(|s| !s.is_empty())
            .map(|s| {
                let bytes: Vec<u8> = s
                    .iter()
                    .map(|t| match t {
                        Tok::Lit(c) => *c,
                        _ => 0,
                    })
                    .collect();
                // Runs between stars of a UTF-8 pattern (escapes removed) are UTF-8 again.
                String::from_utf8_lossy(&bytes).into_owned()
            })
            .collect();
        Alt::Segments {
            segs,
            leading_star,
            trailing_star,
        }
    }

    fn matches(&self, n: &str) -> bool {
        match self {
            Alt::Tokens(t) => match_toks(t, n.as_bytes()),
            Alt::Segments {
                segs,
                leading_star,
                trailing_star,
            } => match_segments(segs, *leading_star, *trailing_star, n),
        }
    }
}

/// Star-separated literals match greedily left to right: the first segment must be a prefix
/// (unless a star leads), the last a suffix (unless a star trails), and the middle ones are
/// found in order in between; the leftmost occurrence is always the best choice.
fn match_segments(segs: &[String], lead: bool, trail: bool, n: &str) -> bool {
    if segs.is_empty() {
        return lead || n.is_empty();
    }
    let mut lo = 0;
    let mut hi = n.len();
    let mut mid = segs;
    if !lead {
        let s = &segs[0];
        if !n.starts_with(s.as_str()) {
            return false;
        }
        lo = s.len();
        mid = &mid[1..];
        if segs.len() == 1 && !trail {
            return n.len() == s.len();
        }
    }
    if !trail {
        let Some((s, rest)) = mid.split_last() else {
            return true;
        };
        if hi < lo + s.len() || !n.ends_with(s.as_str()) {
            return false;
        }
        hi -= s.len();
        mid = rest;
    }
    for s in mid {
        // `str::find` is SIMD-accelerated for short needles; `lo`/`hi` are char boundaries
        // because they border matched UTF-8 runs.
        match n.get(lo..hi).and_then(|h| h.find(s.as_str())) {
            Some(p) => lo += p + s.len(),
            None => return false,
        }
    }
    true
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub struct Glob {
    pattern: String,
    alts: Vec<Alt>,
    prefix: String,
    literal: bool,
}

impl Glob {
    /// Compiles `pattern`.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        let alts_text = expand_braces(pattern)?;
        let mut alts = Vec::with_capacity(alts_text.len());
        for a in &alts_text {
            alts.push(tokenize(a, pattern)?);
        }
        let literal = alts.len() == 1 && alts[0].iter().all(|t| matches!(t, Tok::Lit(_)));
        let prefix = common_literal_prefix(&alts);
        let alts = alts.into_iter().map(Alt::compile).collect();
        Ok(Glob {
            pattern: pattern.to_string(),
            alts,
            prefix,
            literal,
        })
    }

    /// Whether `s` contains any glob metacharacter (`*?[{`); a plain name is looked up exactly.
    pub fn is_pattern(s: &str) -> bool {
        s.bytes().any(|b| matches!(b, b'*' | b'?' | b'[' | b'{'))
    }

    /// The source text.
    pub fn as_str(&self) -> &str {
        &self.pattern
    }

    /// The longest string every match starts with.
    pub fn literal_prefix(&self) -> &str {
        &self.prefix
    }

    /// Whether the pattern has no wildcards at all (it matches exactly one name).
    pub fn is_literal(&self) -> bool {
        self.literal
    }

    /// Whether `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        self.alts.iter().any(|a| a.matches(name))
    }
}

/// Expands `{a,b}` alternatives (nested) into plain patterns; escapes are kept for tokenize.
fn expand_braces(p: &str) -> Result<Vec<String>, GlobError> {
    let b = p.as_bytes();
    // Find the first top-level `{` not escaped and not inside a class.
    let mut i = 0;
    let mut open = None;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' => {
                // Skip the class; unclosed classes are reported by tokenize.
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'!' || b[j] == b'^') {
                    j += 1;
                }
                if j < b.len() && b[j] == b']' {
                    j += 1;
                }
                while j < b.len() && b[j] != b']' {
                    j += 1;
                }
                i = j;
            }
            b'{' => {
                open = Some(i);
                break;
            }
            b'}' => {
                return Err(GlobError::UnmatchedBrace {
                    pattern: p.to_string(),
                })
            }
            _ => {}
        }
        i += 1;
    }
    let Some(open) = open else {
        return Ok(vec![p.to_string()]);
    };
    // Find its matching `}` and the top-level commas inside.
    let mut depth = 0usize;
    let mut commas = Vec::new();
    let mut close = None;
    let mut j = open;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    close = Some(j);
                    break;
                }
            }
            b',' if depth == 1 => commas.push(j),
            _ => {}
        }
        j += 1;
    }
    let Some(close) = close else {
        return Err(GlobError::UnclosedBrace {
            pattern: p.to_string(),
        });
    };
    let head = &p[..open];
    let tail = &p[close + 1..];
    let mut bounds = vec![open];
    bounds.extend(&commas);
    bounds.push(close);
    let mut out = Vec::new();
    for w in bounds.windows(2) {
        let middle = &p[w[0] + 1..w[1]];
        for expanded in expand_braces(&format!("{head}{middle}{tail}"))? {
            out.push(expanded);
            if out.len() > MAX_ALTERNATIVES {
                return Err(GlobError::TooManyAlternatives {
                    pattern: p.to_string(),
                    limit: MAX_ALTERNATIVES,
                });
            }
        }
    }
    Ok(out)
}

fn tokenize(a: &str, pattern: &str) -> Result<Vec<Tok>, GlobError> {
    let b = a.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                i += 1;
                let Some(&c) = b.get(i) else {
                    return Err(GlobError::TrailingEscape {
                        pattern: pattern.to_string(),
                    });
                };
                out.push(Tok::Lit(c));
            }
            b'*' => {
                if out.last() != Some(&Tok::Star) {
                    out.push(Tok::Star);
                }
            }
            b'?' => out.push(Tok::Any),
            b'[' => {
                let mut j = i + 1;
                let negated = matches!(b.get(j), Some(b'!' | b'^'));
                if negated {
                    j += 1;
                }
                let mut ranges = Vec::new();
                let mut first = true;
                loop {
                    let Some(&c) = b.get(j) else {
                        return Err(GlobError::UnclosedClass {
                            pattern: pattern.to_string(),
                        });
                    };
                    if c == b']' && !first {
                        break;
                    }
                    first = false;
                    if b.get(j + 1) == Some(&b'-') && b.get(j + 2).is_some_and(|&e| e != b']') {
                        ranges.push((c, b[j + 2]));
                        j += 3;
                    } else {
                        ranges.push((c, c));
                        j += 1;
                    }
                }
                out.push(Tok::Class { negated, ranges });
                i = j;
            }
            c => out.push(Tok::Lit(c)),
        }
        i += 1;
    }
    Ok(out)
}

fn common_literal_prefix(alts: &[Vec<Tok>]) -> String {
    let lit = |a: &Vec<Tok>| -> Vec<u8> {
        a.iter()
            .map_while(|t| match t {
                Tok::Lit(c) => Some(*c),
                _ => None,
            })
            .collect()
    };
    let mut prefix = alts.first().map(lit).unwrap_or_default();
    for a in alts.iter().skip(1) {
        let l = lit(a);
        let n = prefix.iter().zip(&l).take_while(|(x, y)| x == y).count();
        prefix.truncate(n);
    }
    // A prefix cut inside a multi-byte character is shortened to the last whole character.
    loop {
        match String::from_utf8(prefix) {
            Ok(s) => return s,
            Err(e) => {
                let mut v = e.into_bytes();
                v.pop();
                prefix = v;
            }
        }
    }
}

fn class_has(negated: bool, ranges: &[(u8, u8)], c: u8) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != negated
}

/// Matches with single-star backtracking: on a mismatch, retry from the last `*` one
/// character further. Linear in practice, O(n·m) worst case.
fn match_toks(p: &[Tok], n: &[u8]) -> bool {
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        let step = match p.get(pi) {
            Some(Tok::Lit(c)) => *c == n[ni],
            Some(Tok::Any) => true,
            Some(Tok::Class { negated, ranges }) => class_has(*negated, ranges, n[ni]),
            Some(Tok::Star) => {
                star = Some((pi, ni));
                pi += 1;
                continue;
            }
            None => false,
        };
        if step {
            pi += 1;
            ni += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|t| *t == Tok::Star)
}

/// Whether a name is a wildcard pattern rather than one exact name.
pub fn has_wildcard(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Shell-style match of `*` (any run) and `?` (any one character).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == n[ni]) {
            pi += 1;
            ni += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ni));
            pi += 1;
        } else if let Some((sp, sn)) = star {
            pi = sp + 1;
            ni = sn + 1;
            star = Some((sp, sn + 1));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, n: &str) -> bool {
        Glob::new(p).unwrap().matches(n)
    }

    #[test]
    fn star_question_and_classes_match_like_shell() {
        assert!(m("vfs_*", "vfs_read"));
        assert!(!m("vfs_*", "xvfs_read"));
        assert!(m("*_read", "vfs_read"));
        assert!(!m("*_read", "vfs_readv"));
        assert!(m("*read*", "read"));
        assert!(m("vfs_rea?", "vfs_read"));
        assert!(!m("vfs_rea?", "vfs_rea"));
        assert!(m("sys_[a-c]*", "sys_bpf"));
        assert!(!m("sys_[!a-c]*", "sys_bpf"));
        assert!(m("a\\*b", "a*b"));
        assert!(!m("a\\*b", "axb"));
        assert!(m("*", ""));
        assert!(m("a*b*c", "aXXbYYbc"));
    }

    #[test]
    fn braces_expand_to_alternatives_including_nested() {
        let g = Glob::new("tcp_{v4,v6}_connect").unwrap();
        assert!(g.matches("tcp_v4_connect") && g.matches("tcp_v6_connect"));
        assert!(!g.matches("tcp_v5_connect"));
        assert_eq!(g.literal_prefix(), "tcp_v");
        let g = Glob::new("{a{b,c},d}x").unwrap();
        assert!(g.matches("abx") && g.matches("acx") && g.matches("dx"));
        assert!(!g.matches("ax"));
        assert_eq!(g.literal_prefix(), "");
    }

    #[test]
    fn literal_prefix_stops_at_first_wildcard() {
        assert_eq!(Glob::new("vfs_*").unwrap().literal_prefix(), "vfs_");
        assert_eq!(Glob::new("*_read").unwrap().literal_prefix(), "");
        assert!(Glob::new("vfs_read").unwrap().is_literal());
        assert!(!Glob::new("vfs_rea?").unwrap().is_literal());
    }

    #[test]
    fn malformed_patterns_are_errors() {
        assert!(matches!(
            Glob::new("a{b"),
            Err(GlobError::UnclosedBrace { .. })
        ));
        assert!(matches!(
            Glob::new("a}b"),
            Err(GlobError::UnmatchedBrace { .. })
        ));
        assert!(matches!(
            Glob::new("a[b"),
            Err(GlobError::UnclosedClass { .. })
        ));
        assert!(matches!(
            Glob::new("ab\\"),
            Err(GlobError::TrailingEscape { .. })
        ));
        let many = "{a,b,c,d}".repeat(6);
        assert!(matches!(
            Glob::new(&many),
            Err(GlobError::TooManyAlternatives { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn literal_and_star_fast_path_agrees_with_token_matcher(p in "[ab*]{0,8}", n in "[ab]{0,10}") {
            let toks = tokenize(&p, &p).unwrap();
            let fast = Alt::compile(toks.clone());
            let is_fast = matches!(fast, Alt::Segments { .. });
            proptest::prop_assert!(is_fast);
            proptest::prop_assert_eq!(fast.matches(&n), match_toks(&toks, n.as_bytes()), "{} vs {}", p, n);
        }

        #[test]
        fn arbitrary_patterns_never_panic(p in "[a-c*?\\[\\]{},!^\\\\-]{0,16}", n in "[a-c]{0,8}") {
            if let Ok(g) = Glob::new(&p) {
                let _ = g.matches(&n);
            }
        }
    }
}
