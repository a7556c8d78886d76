//! The isa/ data against the kernel: the helper table matches the installed uapi header, and
//! the form corpus covers every row of the opcode tables.

use std::collections::BTreeSet;

use strobe::asm::isa::{
    AluOp, AluSpecial, AtomicOp, CallKind, Endian, Helper, JmpOp, JmpSpecial, MovsxWidth, Pseudo,
    Size,
};
use strobe::asm::{Call, Decoded};
use strobe_testkit::forms::all_forms;

/// `(id, name)` from the header's `__BPF_FUNC_MAPPER` list, in either of its two spellings:
/// `FN(name),` (ids by position, before kernel 6.2) or `FN(name, id, ##ctx)`.
fn header_helpers(h: &str) -> Vec<(u32, String)> {
    let start = h.find("FN(unspec").expect("FN(unspec in the helper mapper");
    let mut out = Vec::new();
    for line in h[start..].lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("FN(") {
            let inner = &rest[..rest.find(')').expect("closing paren")];
            let mut parts = inner.split(',').map(str::trim);
            let name = parts.next().unwrap().to_string();
            let id = match parts.next() {
                Some(id) => id.parse().expect("numeric helper id"),
                None => out.len() as u32,
            };
            out.push((id, name));
        }
        if !t.ends_with('\\') {
            break;
        }
    }
    out
}

#[test]
fn helper_table_matches_the_installed_uapi_header() {
    let path = "/usr/include/linux/bpf.h";
    let Ok(h) = std::fs::read_to_string(path) else {
        strobe_testkit::skip(
            "helper_table_matches_the_installed_uapi_header",
            "no /usr/include/linux/bpf.h (install linux-libc-dev)",
        );
        return;
    };
    let kernel = header_helpers(&h);
    assert!(
        kernel.len() > 200,
        "parsed only {} helpers from {path}",
        kernel.len()
    );
    for (id, name) in &kernel {
        let ours = Helper::from_id(*id).map(|h| h.name());
        assert_eq!(
            ours,
            Some(name.as_str()),
            "helper id {id} in {path} is `{name}`"
        );
    }
    // Ids beyond the header's are allowed (the header may be older than isa/helpers.txt).
    let max = kernel.iter().map(|k| k.0).max().unwrap_or(0);
    assert!(Helper::all().count() as u32 > max);
}

#[test]
fn header_parser_reads_both_mapper_spellings() {
    let old = "#define __BPF_FUNC_MAPPER(FN)\t\\\n\tFN(unspec),\t\\\n\tFN(map_lookup_elem),\n";
    let new = "#define ___BPF_FUNC_MAPPER(FN, ctx...)\t\\\n\tFN(unspec, 0, ##ctx)\t\\\n\tFN(map_lookup_elem, 1, ##ctx)\t\\\n\t/* */\n";
    let want = vec![
        (0, "unspec".to_string()),
        (1, "map_lookup_elem".to_string()),
    ];
    assert_eq!(header_helpers(old), want);
    assert_eq!(header_helpers(new), want);
}

#[test]
fn form_corpus_covers_every_row_of_the_opcode_tables() {
    let forms = all_forms();
    let mut seen = BTreeSet::new();
    for d in &forms {
        let special = match d {
            Decoded::Neg { .. } => Some(AluSpecial::Neg.name()),
            Decoded::Movsx { .. } => Some(AluSpecial::Movsx.name()),
            Decoded::Endian { .. } => Some(AluSpecial::End.name()),
            Decoded::AddrSpaceCast { .. } => Some(AluSpecial::AddrSpaceCast.name()),
            Decoded::Ja { .. } => Some(JmpSpecial::Ja.name()),
            Decoded::Call(_) => Some(JmpSpecial::Call.name()),
            Decoded::Exit => Some(JmpSpecial::Exit.name()),
            Decoded::MayGoto { .. } => Some(JmpSpecial::MayGoto.name()),
            _ => None,
        };
        if let Some(s) = special {
            seen.insert(format!("special {s}"));
        }
        let w = |wide: bool| if wide { "64" } else { "32" };
        match *d {
            Decoded::Alu { wide, op, src, .. } => {
                seen.insert(format!(
                    "alu{} {} {}",
                    w(wide),
                    op.name(),
                    matches!(src, strobe::asm::Operand::Reg(_))
                ));
            }
            Decoded::Jmp { wide, op, src, .. } => {
                seen.insert(format!(
                    "jmp{} {} {}",
                    w(wide),
                    op.name(),
                    matches!(src, strobe::asm::Operand::Reg(_))
                ));
            }
            Decoded::Movsx { wide, width, .. } => {
                seen.insert(format!("movsx{} {}", w(wide), width.name()));
            }
            Decoded::Endian { kind, .. } => {
                seen.insert(format!("endian {}", kind.name()));
            }
            Decoded::LdImm64 { pseudo, .. } => {
                seen.insert(format!("pseudo {}", pseudo.name()));
            }
            Decoded::Atomic { op, size, .. } => {
                seen.insert(format!("atomic {} {}", op.name(), size.name()));
            }
            Decoded::Load { size, sx, .. } => {
                seen.insert(format!("load {} {sx}", size.name()));
            }
            Decoded::Call(c) => {
                let k = match c {
                    Call::Helper(_) => CallKind::Helper,
                    Call::Local(_) => CallKind::Local,
                    Call::Kfunc { .. } => CallKind::Kfunc,
                };
                seen.insert(format!("call {}", k.name()));
            }
            _ => {}
        }
    }
    let mut want = Vec::new();
    for wide in ["64", "32"] {
        for reg in [false, true] {
            want.extend(AluOp::ALL.map(|o| format!("alu{wide} {} {reg}", o.name())));
            want.extend(JmpOp::ALL.map(|o| format!("jmp{wide} {} {reg}", o.name())));
        }
        want.extend(
            MovsxWidth::ALL
                .iter()
                .filter(|m| wide == "64" || **m != MovsxWidth::S32)
                .map(|m| format!("movsx{wide} {}", m.name())),
        );
    }
    want.extend(Endian::ALL.map(|e| format!("endian {}", e.name())));
    want.extend(AluSpecial::ALL.map(|s| format!("special {}", s.name())));
    want.extend(JmpSpecial::ALL.map(|s| format!("special {}", s.name())));
    want.extend(Pseudo::ALL.map(|p| format!("pseudo {}", p.name())));
    want.extend(CallKind::ALL.map(|k| format!("call {}", k.name())));
    for size in Size::ALL {
        want.push(format!("load {} false", size.name()));
        if size != Size::Dw {
            want.push(format!("load {} true", size.name()));
        }
    }
    for op in AtomicOp::ALL {
        for size in [Size::W, Size::Dw] {
            want.push(format!("atomic {} {}", op.name(), size.name()));
        }
    }
    let missing: Vec<&String> = want.iter().filter(|w| !seen.contains(*w)).collect();
    assert!(
        missing.is_empty(),
        "forms missing from the corpus: {missing:?}"
    );
}

#[test]
fn x86_64_kprobe_offsets_match_the_installed_pt_regs() {
    let path = "/usr/include/x86_64-linux-gnu/asm/ptrace.h";
    let Ok(h) = std::fs::read_to_string(path) else {
        strobe_testkit::skip(
            "x86_64_kprobe_offsets_match_the_installed_pt_regs",
            "no x86_64 asm/ptrace.h (install linux-libc-dev)",
        );
        return;
    };
    // The header has the i386 layout first and the x86_64 one (all `unsigned long`) second.
    let start = h.rfind("struct pt_regs {").expect("struct pt_regs");
    let body = &h[start..start + h[start..].find("};").expect("end of struct")];
    let fields: Vec<&str> = body
        .lines()
        .filter_map(|l| l.trim().strip_prefix("unsigned long "))
        .map(|l| l.trim_end_matches(';').trim())
        .collect();
    assert!(fields.len() >= 21, "parsed {fields:?}");
    let regs: Vec<_> = strobe::asm::isa::KPROBE_REGS
        .iter()
        .filter(|r| r.arch == "x86_64")
        .collect();
    assert!(regs.len() >= 9);
    for r in regs {
        let idx = fields
            .iter()
            // The uapi header spells `ax` as `rax`, `orig_ax` as `orig_rax`, `flags` as
            // `eflags` (bpftrace's and the kernel's internal names are the short ones);
            // bpftrace's `pc` is `rip`.
            .position(|f| {
                *f == r.reg
                    || (r.reg == "pc" && *f == "rip")
                    || *f == format!("r{}", r.reg)
                    || *f == format!("e{}", r.reg)
                    || f.replace("orig_r", "orig_") == r.reg
            })
            .unwrap_or_else(|| panic!("{} not in {path}", r.reg));
        assert_eq!(usize::from(r.offset), idx * 8, "{} ({})", r.reg, r.role);
    }
}
