//! usdt targets: the `.note.stapsdt` notes of the binaries a target names, by provider and
//! name; without a provider a name must be unique (bpftrace's rule).

use std::path::PathBuf;

use super::{binaries, glob_match, has_wildcard, Cx, ExpandError, Target, TargetKind, UsdtNote};

pub(super) fn expand(
    cx: &Cx<'_>,
    target: &str,
    provider: Option<&str>,
    name: &str,
) -> Result<Vec<Target>, ExpandError> {
    let k = cx.k;
    let paths = binaries(k, &cx.probe, target)?;
    let several = paths.len() > 1 || has_wildcard(target);
    // An empty provider (`usdt:::name`, `usdt:PATH::name`) is any provider.
    let prov = provider.filter(|p| !p.is_empty()).unwrap_or("*");
    let mut notes: Vec<(PathBuf, UsdtNote)> = Vec::new();
    for path in paths {
        let found = match k.usdt_probes(&path) {
            Ok(n) => n,
            Err(_) if several => continue,
            Err(e) => return Err(cx.kerr(e)),
        };
        notes.extend(
            found
                .into_iter()
                .filter(|n| glob_match(prov, &n.provider) && glob_match(name, &n.name))
                .map(|n| (path.clone(), n)),
        );
    }
    let mut providers: Vec<&str> = notes.iter().map(|(_, n)| n.provider.as_str()).collect();
    providers.sort_unstable();
    providers.dedup();
    if provider.is_none() && !has_wildcard(name) && providers.len() > 1 {
        return Err(ExpandError::AmbiguousUsdt {
            probe: cx.probe.clone(),
            count: notes.len(),
            providers: providers.join(", "),
        });
    }
    Ok(notes
        .into_iter()
        .map(|(path, n)| Target {
            name: format!("usdt:{}:{}:{}", path.display(), n.provider, n.name),
            kind: TargetKind::Usdt { path, note: n },
        })
        .collect())
}
