//! `fentry[:module]:function`, `fentry:bpf:[prog_id:]prog_name` (and fexit).

use super::{
    count_error, nonempty, parse_attach_uint, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span,
};

/// The parser of `fentry`, `fexit` attach points.
pub(super) const FENTRY: Hooks = Hooks {
    kinds: &[ProbeKind::Fentry, ProbeKind::Fexit],
    spec,
};
pub(super) const FEXIT: Hooks = FENTRY;

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    if !(2..=4).contains(&n) {
        return Err(count_error(kind, "1 or 2", parts, span));
    }
    if parts[1].text == "bpf" {
        return match n {
            3 => Ok(AttachSpec::Fentry {
                module: Some("bpf".into()),
                func: nonempty(&parts[2], "program name")?,
                prog_id: None,
            }),
            4 => {
                let prog_id = if parts[2].text == "*" {
                    None
                } else {
                    Some(parse_attach_uint(&parts[2].text).map_err(|_| AttachError {
                        span: parts[2].span,
                        message: "bpf program id must be a number or '*'".into(),
                        help: None,
                    })?)
                };
                Ok(AttachSpec::Fentry {
                    module: Some("bpf".into()),
                    func: nonempty(&parts[3], "program name")?,
                    prog_id,
                })
            }
            _ => Err(AttachError {
                span,
                message: "the 'bpf' form of this probe requires a program name".into(),
                help: Some("`fentry:bpf:[prog_id:]prog_name`".into()),
            }),
        };
    }
    match n {
        2 => Ok(AttachSpec::Fentry {
            module: None,
            func: nonempty(&parts[1], "function")?,
            prog_id: None,
        }),
        3 => Ok(AttachSpec::Fentry {
            module: Some(nonempty(&parts[1], "module")?),
            func: nonempty(&parts[2], "function")?,
            prog_id: None,
        }),
        _ => Err(AttachError {
            span,
            message: "only the 'bpf' form of this probe takes 3 arguments".into(),
            help: None,
        }),
    }
}
