//! Kernel versions and the `KERNELS` filter of a test case.
//!
//! Input: a kernel release string (`uname -r`, e.g. `6.12.117+deb13-amd64`) and a filter
//! written in a case file. Output: whether the case applies to that kernel.
//!
//! Filter syntax: whitespace- or comma-separated terms. A bare version (`6.1`, `5.10.223`) is a
//! member of a set: the kernel must match one of them (a version matches every kernel that
//! shares its leading components, so `6.1` matches `6.1.0-50-amd64`). A comparison
//! (`>= 6.6`, `<6.12`, `!= 6.1`) must hold; all comparisons must hold. So `5.10 6.1` means
//! "5.10 or 6.1", and `>= 5.11 < 6.12` means "from 5.11 up to, not including, 6.12".
//! Comparisons use only the components written in the filter, so `< 6.12` excludes
//! `6.12.117`, and `<= 6.1` includes `6.1.176`.

use std::cmp::Ordering;
use std::fmt;

/// A kernel version as its numeric components (`6.12.117+deb13-amd64` → `[6, 12, 117]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelVersion(pub Vec<u32>);

impl KernelVersion {
    /// Reads the leading dotted numbers of a release string; `None` when it has none.
    pub fn parse(release: &str) -> Option<KernelVersion> {
        let mut parts = Vec::new();
        for piece in release.split('.') {
            let digits: String = piece.chars().take_while(char::is_ascii_digit).collect();
            if digits.is_empty() {
                break;
            }
            parts.push(digits.parse().ok()?);
            if digits.len() != piece.len() {
                break;
            }
        }
        (!parts.is_empty()).then_some(KernelVersion(parts))
    }

    /// The running kernel's version, from uname(2).
    pub fn running() -> Option<KernelVersion> {
        // SAFETY: utsname is plain old data and uname fills it completely on success.
        let mut uts: libc::utsname = unsafe { std::mem::zeroed() };
        if unsafe { libc::uname(&mut uts) } != 0 {
            return None;
        }
        let release: Vec<u8> = uts
            .release
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        KernelVersion::parse(&String::from_utf8_lossy(&release))
    }

    /// Compares only as many components as `other` has, so `6.12.117` equals `6.12`.
    fn cmp_prefix(&self, other: &KernelVersion) -> Ordering {
        for (i, want) in other.0.iter().enumerate() {
            let have = self.0.get(i).copied().unwrap_or(0);
            match have.cmp(want) {
                Ordering::Equal => continue,
                unequal => return unequal,
            }
        }
        Ordering::Equal
    }
}

impl fmt::Display for KernelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(u32::to_string).collect();
        f.write_str(&parts.join("."))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Ge,
    Gt,
    Le,
    Lt,
    Eq,
    Ne,
}

impl Op {
    fn holds(self, ord: Ordering) -> bool {
        match self {
            Op::Ge => ord != Ordering::Less,
            Op::Gt => ord == Ordering::Greater,
            Op::Le => ord != Ordering::Greater,
            Op::Lt => ord == Ordering::Less,
            Op::Eq => ord == Ordering::Equal,
            Op::Ne => ord != Ordering::Equal,
        }
    }
}

/// A parsed `KERNELS` value; see the module documentation for its meaning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelFilter {
    text: String,
    members: Vec<KernelVersion>,
    comparisons: Vec<(Op, KernelVersion)>,
}

/// Why a `KERNELS` value could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelFilterError {
    #[error("`{term}` is not a kernel version (expected e.g. `6.1` or `5.10.223`)")]
    BadVersion { term: String },
    #[error("`{op}` is missing the version it compares with")]
    MissingVersion { op: String },
    #[error("empty kernel filter")]
    Empty,
}

impl KernelFilter {
    pub fn parse(text: &str) -> Result<KernelFilter, KernelFilterError> {
        let mut filter = KernelFilter {
            text: text.trim().to_string(),
            members: Vec::new(),
            comparisons: Vec::new(),
        };
        let mut tokens = tokenize(text).into_iter().peekable();
        while let Some(tok) = tokens.next() {
            let op = match tok.as_str() {
                ">=" => Some(Op::Ge),
                ">" => Some(Op::Gt),
                "<=" => Some(Op::Le),
                "<" => Some(Op::Lt),
                "==" | "=" => Some(Op::Eq),
                "!=" => Some(Op::Ne),
                _ => None,
            };
            match op {
                Some(op) => {
                    let ver = tokens
                        .next()
                        .ok_or(KernelFilterError::MissingVersion { op: tok.clone() })?;
                    filter.comparisons.push((op, parse_term(&ver)?));
                }
                None => filter.members.push(parse_term(&tok)?),
            }
        }
        if filter.members.is_empty() && filter.comparisons.is_empty() {
            return Err(KernelFilterError::Empty);
        }
        Ok(filter)
    }

    pub fn matches(&self, kernel: &KernelVersion) -> bool {
        let member = self.members.is_empty()
            || self
                .members
                .iter()
                .any(|m| kernel.cmp_prefix(m) == Ordering::Equal);
        member
            && self
                .comparisons
                .iter()
                .all(|(op, v)| op.holds(kernel.cmp_prefix(v)))
    }

    /// The filter as written, for skip reasons.
    pub fn text(&self) -> &str {
        &self.text
    }
}

fn parse_term(term: &str) -> Result<KernelVersion, KernelFilterError> {
    let ok = !term.is_empty()
        && term
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    ok.then(|| KernelVersion::parse(term))
        .flatten()
        .ok_or_else(|| KernelFilterError::BadVersion {
            term: term.to_string(),
        })
}

/// Splits `>=6.6, <6.12` into `>=`, `6.6`, `<`, `6.12`: operators may touch their version.
fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    for word in text.split(|c: char| c.is_whitespace() || c == ',') {
        let split = word
            .find(|c: char| !matches!(c, '<' | '>' | '=' | '!'))
            .unwrap_or(word.len());
        let (op, rest) = word.split_at(split);
        for part in [op, rest] {
            if !part.is_empty() {
                tokens.push(part.to_string());
            }
        }
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> KernelVersion {
        KernelVersion::parse(s).unwrap()
    }

    #[test]
    fn release_strings_keep_only_leading_numbers() {
        assert_eq!(v("6.12.117+deb13-amd64").0, vec![6, 12, 117]);
        assert_eq!(v("6.1.0-50-amd64").0, vec![6, 1, 0]);
        assert_eq!(v("5.10.0-32-amd64").0, vec![5, 10, 0]);
        assert_eq!(v("6.18").0, vec![6, 18]);
        assert_eq!(KernelVersion::parse("amd64"), None);
    }

    #[test]
    fn bare_versions_form_a_set_matched_by_prefix() {
        let f = KernelFilter::parse("5.10 6.1").unwrap();
        assert!(f.matches(&v("5.10.0-32-amd64")));
        assert!(f.matches(&v("6.1.0-50-amd64")));
        assert!(!f.matches(&v("6.12.117+deb13-amd64")));
        assert!(!f.matches(&v("6.10.3")));
    }

    #[test]
    fn comparisons_use_the_filter_precision_and_all_must_hold() {
        let f = KernelFilter::parse(">= 5.11, <6.12").unwrap();
        assert!(!f.matches(&v("5.10.223")));
        assert!(f.matches(&v("6.1.176")));
        assert!(!f.matches(&v("6.12.117")));
        let f = KernelFilter::parse("<=6.1").unwrap();
        assert!(f.matches(&v("6.1.176")));
        assert!(!f.matches(&v("6.2")));
        let f = KernelFilter::parse("!= 6.1").unwrap();
        assert!(!f.matches(&v("6.1.0")));
        assert!(f.matches(&v("6.12.0")));
    }

    #[test]
    fn members_and_comparisons_combine() {
        let f = KernelFilter::parse("6.1 6.12 >= 6.6").unwrap();
        assert!(f.matches(&v("6.12.1")));
        assert!(!f.matches(&v("6.1.1")));
    }

    #[test]
    fn malformed_filters_are_errors() {
        assert_eq!(
            KernelFilter::parse(">= six"),
            Err(KernelFilterError::BadVersion { term: "six".into() })
        );
        assert_eq!(
            KernelFilter::parse("6.1 >="),
            Err(KernelFilterError::MissingVersion { op: ">=".into() })
        );
        assert_eq!(KernelFilter::parse(" , "), Err(KernelFilterError::Empty));
        assert!(KernelFilter::parse("6..1").is_err());
    }

    #[test]
    fn running_kernel_version_is_readable() {
        assert!(KernelVersion::running().is_some());
    }
}
