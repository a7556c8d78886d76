//! Which maps the compiler gives a short-string key class, checked through a whole compile
//! (the class decision reads the checked program; the specs come from the plan).

use crate::codegen::lower::key_class::*;
use crate::diag::SourceFile;
use crate::kernel::info::MockKernel;
use crate::plan::{KeyClass, MapRole, MapSpec};
use std::collections::BTreeMap;

fn compile(src: &str) -> (BTreeMap<String, u32>, Vec<MapSpec>) {
    let out = crate::compile::compile(
        &SourceFile::new("t.bt", src),
        &MockKernel::fixture(),
        &crate::sema::CheckOptions::default(),
    );
    assert!(!out.has_errors(), "{:?}", out.diagnostics);
    let cp = out.checked.expect("checked");
    (classed_maps(&cp), out.script.expect("script").maps)
}

#[test]
fn aggregations_keyed_by_a_str_read_get_a_class_with_a_shared_counter() {
    let (classed, maps) = compile(
        "uprobe:/bin/bash:readline { @[str(arg0)] = count(); @h[str(arg1)] = hist(arg2); } \
         interval:s:1 { print(@); clear(@h); zero(@); }",
    );
    assert_eq!(classed.keys().collect::<Vec<_>>(), ["@", "@h"]);
    let class = maps.iter().find(|m| m.name == "@#64").expect("class map");
    assert_eq!(class.key_size, 64);
    assert!(matches!(&class.role, MapRole::KeyClass(c)
        if c.of == "@" && c.full_size == 1024 && c.count_slot == 0));
    let hist = maps.iter().find(|m| m.name == "@h#64").expect("hist class");
    assert_eq!(
        hist.key_size, 72,
        "the bucket index follows the short string"
    );
    let count = maps
        .iter()
        .find(|m| m.role == MapRole::KeyCount)
        .expect("counter");
    assert_eq!((count.value_size, count.max_entries), (16, 1));
}

#[test]
fn maps_read_deleted_iterated_or_keyed_otherwise_keep_one_map() {
    for src in [
        "uprobe:/bin/bash:readline { @[str(arg0)] = count(); $x = @[str(arg0)]; }",
        "uprobe:/bin/bash:readline { @[str(arg0)] = count(); delete(@, str(arg0)); }",
        "uprobe:/bin/bash:readline { @[str(arg0)] = count(); if (has_key(@, \"a\")) { exit(); } }",
        "uprobe:/bin/bash:readline { @[str(arg0)] = count(); for ($kv : @) { print($kv); } }",
        "uprobe:/bin/bash:readline { @[str(arg0)] = count(); @[\"lit\"] = count(); }",
        "uprobe:/bin/bash:readline { @[str(arg0)] = count(); print(len(@)); }",
        "uprobe:/bin/bash:readline { @[str(arg0, 16)] = count(); }",
        "uprobe:/bin/bash:readline { @[str(arg0)] = str(arg1); }",
        "uprobe:/bin/bash:readline { @[pid, str(arg0)] = count(); }",
    ] {
        let (classed, maps) = compile(src);
        assert!(classed.is_empty(), "{src}: {classed:?}");
        assert!(maps.iter().all(|m| !m.name.contains('#')), "{src}");
    }
}

#[test]
fn widening_zero_extends_the_string_and_moves_the_bucket() {
    let c = KeyClass {
        of: "@".into(),
        str_size: 64,
        full_size: 1024,
        count_slot: 0,
    };
    let mut short = vec![0u8; 72];
    short[..3].copy_from_slice(b"abc");
    short[64..].copy_from_slice(&7u64.to_le_bytes());
    let wide = c.widen(&short);
    assert_eq!(wide.len(), 1032);
    assert_eq!(&wide[..4], b"abc\0");
    assert!(wide[3..1024].iter().all(|&b| b == 0));
    assert_eq!(&wide[1024..], &7u64.to_le_bytes());
    assert_eq!(c.widen(&short[..64]).len(), 1024);
}
