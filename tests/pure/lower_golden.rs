//! `-d asm` goldens: the listing of one small script per feature, to review changes in code
//! shape (not the proof of correctness: the run_* tests run the code). `BLESS=1 cargo test
//! --test pure lower_golden::` rewrites the files after a reviewed change.

use std::path::Path;

use strobe::codegen::lower::listing::listing;
use strobe::compile::compile;
use strobe::diag::SourceFile;
use strobe::kernel::info::MockKernel;
use strobe::sema::CheckOptions;

const SCRIPTS: &[(&str, &str)] = &[
    (
        "printf",
        "BEGIN { printf(\"hello %d %s\\n\", 42, comm); exit(); }",
    ),
    ("count_by_comm", "interval:ms:100 { @[comm] = count(); }"),
    ("hist", "interval:ms:100 { @h = hist(cpu); }"),
    ("lhist", "interval:ms:100 { @l = lhist(cpu, 0, 16, 2); }"),
    (
        "sum_min_max",
        "interval:ms:100 { @s = sum(cpu); @m = min(cpu); @M = max(cpu); }",
    ),
    (
        "avg_stats",
        "interval:ms:100 { @a = avg(cpu); @t = stats(cpu); }",
    ),
    (
        "multi_key",
        "interval:ms:100 { @[pid, comm, cpu] = count(); }",
    ),
    (
        "plain_values",
        "BEGIN { @x = 1; @s[1] = \"str\"; @t = (1, \"two\"); }",
    ),
    (
        "vars_arith",
        "BEGIN { $a = pid; $b = $a * 3 + 1; @r = $b / 2 - $b % 5; }",
    ),
    ("signed_div", "BEGIN { $a = (int32)pid; @r = $a / -3; }"),
    (
        "if_else",
        "BEGIN { if (pid > 1) { @a = 1; } else { @a = 2; } }",
    ),
    ("ternary", "BEGIN { @t = cpu == 0 ? 10 : 20; }"),
    (
        "short_circuit",
        "BEGIN { if (pid > 1 && tid > 1 || cpu == 0) { exit(); } }",
    ),
    (
        "while_loop",
        "BEGIN { $i = 0; while ($i < 4) { $i++; } @i = $i; }",
    ),
    (
        "unroll",
        "BEGIN { $s = 0; unroll(3) { $s += cpu; } @s = $s; }",
    ),
    (
        "for_map",
        "BEGIN { @m[1] = 2; $t = 0; for ($kv : @m) { if ($kv.0 == 3) { break; } $t += $kv.1; } @t = $t; }",
    ),
    (
        "for_range",
        "BEGIN { $t = 0; for ($i : 1..cpu) { $t += $i; } @t = $t; }",
    ),
    (
        "fn_macro_len",
        "macro twice(x) { x + x } fn clamp($v: int64, $hi: int64): int64 { if ($v > $hi) { return $hi; } return $v; } BEGIN { @m[1] = 1; @r = clamp(twice(cpu), 3) + len(@m) + has_key(@m, 1); }",
    ),
    (
        "strings",
        "BEGIN { if (comm == \"strobe\") { printf(\"%s\\n\", comm); } }",
    ),
    (
        "delete_clear",
        "BEGIN { @m[1] = 1; delete(@m[1]); clear(@m); zero(@m); }",
    ),
    (
        "print_time",
        "BEGIN { @x = 1; print(@x); time(\"%H\\n\"); }",
    ),
    ("kstack", "BEGIN { printf(\"%s\\n\", kstack(4)); }"),
    (
        "fentry_args",
        "fentry:vfs_read { @[comm] = sum(args.count); }",
    ),
    ("fexit_retval", "fexit:vfs_read { @ = hist(retval); }"),
    ("predicate", "interval:ms:10 /cpu == 0/ { @ = count(); }"),
];

#[test]
fn asm_listings_match_goldens() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lower_golden");
    let bless = std::env::var_os("BLESS").is_some();
    let mut stale = Vec::new();
    for (name, text) in SCRIPTS {
        let src = SourceFile::new("t.bt", *text);
        let out = compile(&src, &MockKernel::fixture(), &CheckOptions::default());
        let script = out
            .script
            .unwrap_or_else(|| panic!("{name}: {:?}", out.diagnostics));
        let got = format!("# {text}\n{}", listing(&script, &src));
        let path = dir.join(format!("{name}.asm"));
        if bless {
            std::fs::write(&path, &got).expect("write golden");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(want) if want == got => {}
            _ => stale.push(name.to_string()),
        }
    }
    assert!(
        stale.is_empty(),
        "listings differ from tests/lower_golden (review, then BLESS=1): {stale:?}"
    );
}
