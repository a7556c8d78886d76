//! Generates the instruction-set tables from the data in `isa/`.
//!
//! Input: `isa/opcodes.txt`, `isa/map_types.txt` and `isa/prog_types.txt` (`kind name value key=value…` rows), `isa/helpers.txt` (the
//! kernel's helper list) and `isa/kprobe_regs.txt`. Output: `$OUT_DIR/isa_tables.rs`, included
//! by `src/asm/isa.rs`: one Rust enum per kind with `value()`, `name()`, one accessor per key,
//! `from_value()` and `ALL`. Invariant: no Rust source spells an opcode number; a malformed data
//! row stops the build with the file and line.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;

/// Each kind in opcodes.txt: the Rust enum it becomes, the type of its value, its doc line.
const KINDS: &[(&str, &str, &str, &str)] = &[
    (
        "class",
        "Class",
        "u8",
        "Instruction class: the low 3 bits of the opcode.",
    ),
    (
        "source",
        "Source",
        "u8",
        "ALU/JMP operand source: the immediate (`K`) or `src_reg` (`X`).",
    ),
    ("size", "Size", "u8", "Load/store access size."),
    ("mode", "Mode", "u8", "Load/store addressing mode."),
    (
        "alu",
        "AluOp",
        "u8",
        "ALU operation written `dst OP= src`; `off()` selects the signed forms.",
    ),
    (
        "alu_special",
        "AluSpecial",
        "u8",
        "ALU operations with their own syntax (neg, movsx, byte swaps).",
    ),
    (
        "endian",
        "Endian",
        "u8",
        "Byte-swap kind: value is the source bit of the `end` opcode.",
    ),
    (
        "movsx",
        "MovsxWidth",
        "i16",
        "Sign-extension width of `movsx`: value is the `off` field.",
    ),
    (
        "jmp",
        "JmpOp",
        "u8",
        "Conditional jump operation: `if dst OP src goto +off`.",
    ),
    (
        "jmp_special",
        "JmpSpecial",
        "u8",
        "Jump-class operations with their own syntax (goto, call, exit).",
    ),
    (
        "atomic",
        "AtomicOp",
        "i32",
        "Atomic operation of a `stx` `atomic`-mode instruction: value is `imm`.",
    ),
    (
        "pseudo",
        "Pseudo",
        "u8",
        "What an `ld_imm64` immediate means: value is its `src_reg` (BPF_PSEUDO_*).",
    ),
    (
        "call",
        "CallKind",
        "u8",
        "What a call's `imm` means: value is its `src_reg`.",
    ),
    (
        "map_type",
        "MapType",
        "u32",
        "Map type (`enum bpf_map_type`), from isa/map_types.txt.",
    ),
    (
        "prog_type",
        "ProgType",
        "u32",
        "Program type (`enum bpf_prog_type`), from isa/prog_types.txt.",
    ),
];

/// Keys whose values are strings / numbers, and the Rust type of the numbers.
const STR_KEYS: &[&str] = &["asm", "form", "neg"];
const NUM_KEYS: &[(&str, &str)] = &[("off", "i16"), ("bytes", "u8"), ("since", "u8")];

struct Row {
    name: String,
    value: i64,
    keys: BTreeMap<String, String>,
}

fn fail(file: &str, line: usize, msg: &str) -> ! {
    panic!("{file}:{line}: {msg}")
}

fn parse_num(s: &str) -> Option<i64> {
    if let Some(h) = s.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else {
        s.parse().ok()
    }
}

fn camel(name: &str) -> String {
    name.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// Lines without comments, with their 1-based numbers.
fn data_lines(text: &str) -> impl Iterator<Item = (usize, Vec<&str>)> {
    text.lines().enumerate().filter_map(|(i, l)| {
        let l = l.split('#').next().unwrap_or("");
        let words: Vec<&str> = l.split_whitespace().collect();
        (!words.is_empty()).then_some((i + 1, words))
    })
}

fn read(dir: &Path, file: &str) -> String {
    let path = dir.join(file);
    println!("cargo:rerun-if-changed={}", path.display());
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn parse_rows(kinds: &mut BTreeMap<String, Vec<Row>>, file: &str, text: &str) {
    for (line, w) in data_lines(text) {
        // `asm==` is the key `asm` with value `=`: split at the first '='.
        if w.len() < 3 {
            fail(file, line, "expected `kind name value [key=value…]`");
        }
        if !KINDS.iter().any(|k| k.0 == w[0]) {
            fail(file, line, &format!("unknown kind `{}`", w[0]));
        }
        let value = parse_num(w[2]).unwrap_or_else(|| fail(file, line, "bad value"));
        let mut keys = BTreeMap::new();
        for kv in &w[3..] {
            let Some((k, v)) = kv.split_once('=') else {
                fail(file, line, &format!("expected key=value, got `{kv}`"));
            };
            if !STR_KEYS.contains(&k) && !NUM_KEYS.iter().any(|n| n.0 == k) {
                fail(file, line, &format!("unknown key `{k}`"));
            }
            let v = if k == "since" {
                v.strip_prefix('v')
                    .unwrap_or_else(|| fail(file, line, "since=vN"))
                    .to_string()
            } else {
                v.to_string()
            };
            keys.insert(k.to_string(), v);
        }
        let rows = kinds.entry(w[0].to_string()).or_default();
        if rows.iter().any(|r| r.name == w[1]) {
            fail(file, line, &format!("duplicate name `{}`", w[1]));
        }
        rows.push(Row {
            name: w[1].to_string(),
            value,
            keys,
        });
    }
}

fn gen_enum(out: &mut String, rust: &str, ty: &str, doc: &str, rows: &[Row]) {
    let n = rows.len();
    let _ = writeln!(out, "#[doc = {doc:?}]");
    let _ = writeln!(
        out,
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]"
    );
    // Map and program types are also the syscall layer's enums: `as u32` must be the value.
    let explicit = rust == "MapType" || rust == "ProgType";
    if explicit {
        let _ = writeln!(out, "#[repr(u32)]");
    }
    let _ = writeln!(out, "pub enum {rust} {{");
    for r in rows {
        let value = if explicit {
            format!(" = {}", r.value)
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "    #[doc(alias = {:?})]\n    {}{value},",
            r.name,
            camel(&r.name)
        );
    }
    let _ = writeln!(out, "}}\nimpl {rust} {{");
    let all: Vec<String> = rows
        .iter()
        .map(|r| format!("{rust}::{}", camel(&r.name)))
        .collect();
    let _ = writeln!(
        out,
        "    pub const ALL: [{rust}; {n}] = [{}];",
        all.join(", ")
    );
    let arms = |f: &dyn Fn(&Row) -> String| -> String {
        rows.iter()
            .map(|r| format!("            {rust}::{} => {},\n", camel(&r.name), f(r)))
            .collect()
    };
    let _ = writeln!(
        out,
        "    /// The encoded value (see isa/opcodes.txt).\n    pub const fn value(self) -> {ty} {{\n        match self {{\n{}        }}\n    }}",
        arms(&|r| format!("{}", r.value))
    );
    let _ = writeln!(
        out,
        "    /// The name in isa/opcodes.txt.\n    pub const fn name(self) -> &'static str {{\n        match self {{\n{}        }}\n    }}",
        arms(&|r| format!("{:?}", r.name))
    );
    for key in STR_KEYS {
        if rows.iter().any(|r| r.keys.contains_key(*key)) {
            let _ = writeln!(
                out,
                "    /// The `{key}` column (empty when absent).\n    pub const fn {key}(self) -> &'static str {{\n        match self {{\n{}        }}\n    }}",
                arms(&|r| format!("{:?}", r.keys.get(*key).map_or("", |s| s.as_str())))
            );
        }
    }
    for (key, kty) in NUM_KEYS {
        if rows.iter().any(|r| r.keys.contains_key(*key)) || *key == "since" {
            let default = if *key == "since" { "1" } else { "0" };
            let _ = writeln!(
                out,
                "    /// The `{key}` column ({default} when absent).\n    pub const fn {key}(self) -> {kty} {{\n        match self {{\n{}        }}\n    }}",
                arms(&|r| r.keys.get(*key).map_or(default, |s| s.as_str()).to_string())
            );
        }
    }
    let _ = writeln!(
        out,
        "    /// The first row with this value.\n    pub const fn from_value(v: {ty}) -> Option<{rust}> {{\n        match v {{"
    );
    let mut seen = Vec::new();
    for r in rows {
        if !seen.contains(&r.value) {
            seen.push(r.value);
            let _ = writeln!(
                out,
                "            {} => Some({rust}::{}),",
                r.value,
                camel(&r.name)
            );
        }
    }
    let _ = writeln!(out, "            _ => None,\n        }}\n    }}");
    let _ = writeln!(
        out,
        "    /// Looks a row up by its name in isa/opcodes.txt.\n    pub fn from_name(s: &str) -> Option<{rust}> {{\n        match s {{"
    );
    for r in rows {
        let _ = writeln!(
            out,
            "            {:?} => Some({rust}::{}),",
            r.name,
            camel(&r.name)
        );
    }
    let _ = writeln!(out, "            _ => None,\n        }}\n    }}\n}}\n");
}

fn gen_helpers(out: &mut String, text: &str) {
    let file = "isa/helpers.txt";
    let mut rows = Vec::new();
    for (line, w) in data_lines(text) {
        if w.len() < 3 || w.len() > 8 {
            fail(
                file,
                line,
                "expected `id name return [kind:name…]` with at most 5 arguments",
            );
        }
        let id: u32 = w[0].parse().unwrap_or_else(|_| fail(file, line, "bad id"));
        if id as usize != rows.len() {
            fail(
                file,
                line,
                &format!("ids must be consecutive from 0; expected {}", rows.len()),
            );
        }
        let args: Vec<(String, String)> = w[3..]
            .iter()
            .map(|a| {
                let (k, n) = a
                    .split_once(':')
                    .unwrap_or_else(|| fail(file, line, "argument must be kind:name"));
                (camel(k), n.to_string())
            })
            .collect();
        rows.push((w[1].to_string(), camel(w[2]), args));
    }
    let n = rows.len();
    out.push_str(
        "/// A BPF helper function (`enum bpf_func_id`), generated from isa/helpers.txt.\n",
    );
    out.push_str(
        "#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]\npub enum Helper {\n",
    );
    for (name, _, _) in &rows {
        let _ = writeln!(
            out,
            "    #[doc(alias = \"bpf_{name}\")]\n    {},",
            camel(name)
        );
    }
    out.push_str("}\n");
    let _ = writeln!(out, "const HELPERS: [HelperInfo; {n}] = [");
    for (name, ret, args) in &rows {
        let args: Vec<String> = args
            .iter()
            .map(|(k, n)| format!("(ArgKind::{k}, {n:?})"))
            .collect();
        let _ = writeln!(
            out,
            "    HelperInfo {{ helper: Helper::{}, name: {name:?}, ret: RetKind::{ret}, args: &[{}] }},",
            camel(name),
            args.join(", ")
        );
    }
    out.push_str("];\n");
    out.push_str("fn helper_by_name(s: &str) -> Option<Helper> {\n    match s {\n");
    for (name, _, _) in &rows {
        let _ = writeln!(out, "        {name:?} => Some(Helper::{}),", camel(name));
    }
    out.push_str("        _ => None,\n    }\n}\n");
}

fn gen_kprobe_regs(out: &mut String, text: &str) {
    let file = "isa/kprobe_regs.txt";
    out.push_str("/// Per-architecture kprobe context registers, from isa/kprobe_regs.txt.\n");
    out.push_str("pub static KPROBE_REGS: &[KprobeReg] = &[\n");
    for (line, w) in data_lines(text) {
        if w.len() != 4 {
            fail(file, line, "expected `arch role reg offset`");
        }
        let off: u16 = w[3]
            .parse()
            .unwrap_or_else(|_| fail(file, line, "bad offset"));
        let _ = writeln!(
            out,
            "    KprobeReg {{ arch: {:?}, role: {:?}, reg: {:?}, offset: {off} }},",
            w[0], w[1], w[2]
        );
    }
    out.push_str("];\n");
}

pub fn generate() {
    let root = std::env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR");
    let dir = Path::new(&root).join("isa");
    let mut out = String::from("// @generated by build/isa.rs from isa/*.txt; do not edit.\n\n");
    let mut kinds = BTreeMap::new();
    for file in ["opcodes.txt", "map_types.txt", "prog_types.txt"] {
        parse_rows(&mut kinds, &format!("isa/{file}"), &read(&dir, file));
    }
    for (kind, rust, ty, doc) in KINDS {
        let rows = kinds
            .get(*kind)
            .unwrap_or_else(|| panic!("isa/: no `{kind}` rows"));
        gen_enum(&mut out, rust, ty, doc, rows);
    }
    gen_helpers(&mut out, &read(&dir, "helpers.txt"));
    gen_kprobe_regs(&mut out, &read(&dir, "kprobe_regs.txt"));
    let out_dir = std::env::var("OUT_DIR").expect("OUT_DIR");
    std::fs::write(Path::new(&out_dir).join("isa_tables.rs"), out).expect("write isa_tables.rs");
}
