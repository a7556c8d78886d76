//! bpftool (libbpf 1.x, which refuses legacy `maps` sections) reads and loads what
//! `strobe::asm` + `strobe::elf::write_object` write: `bpftool btf dump file` finds each map's
//! struct through the `.maps` DATASEC, and `bpftool prog loadall` creates the maps, relocates
//! the map references and the bpf-to-bpf call, loads a socket filter and a raw tracepoint
//! program and pins them, after which `bpftool prog run` / `map lookup` show that the loaded
//! code does what the source says. Skips loudly without bpftool (Debian package `bpftool`,
//! installed by scripts/setup) or without CAP_BPF / a bpf filesystem; pins are removed in all
//! paths.

use crate::oracle;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use strobe::sys::{Map, MapCreateOptions, MapType};

/// A socket filter that stores 42 in `counts[0]` and returns `add_seven() + 1`, and a raw
/// tracepoint program (loaded, never attached) that references a ringbuf.
const SOURCE: &str = r#"
.license "GPL"
.map counts type=array key=4 value=8 entries=1
.map events type=ringbuf key=0 value=0 entries=4096

.section "socket"
.globl prog
prog:
    *(u32 *)(r10 - 4) = 0
    r2 = r10
    r2 += -4
    r1 = counts ll
    call bpf_map_lookup_elem
    if r0 == 0 goto out
    r1 = 42
    *(u64 *)(r0 + 0) = r1
    call add_seven
    r0 += 1
    exit
out:
    r0 = 0
    exit

.section "raw_tp/sys_enter"
.globl on_enter
on_enter:
    r1 = events ll
    r0 = 0
    exit

.text
.globl add_seven
add_seven:
    r0 = 7
    exit
"#;

/// bpftool's path, or a loud skip. Debian installs it in /usr/sbin, which a non-login PATH
/// may lack.
fn bpftool(test: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .chain(["/usr/sbin".into(), "/sbin".into()])
        .map(|d| d.join("bpftool"))
        .find(|p| p.is_file());
    if found.is_none() {
        strobe_testkit::skip(
            test,
            "bpftool not found (Debian package `bpftool`; scripts/setup installs it)",
        );
    }
    found
}

/// Runs bpftool, failing the test with its stderr when it fails.
fn run(tool: &Path, args: &[&str]) -> String {
    let out = Command::new(tool).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "bpftool {} failed:\n{}{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The object assembled from [`SOURCE`], written into `dir`.
fn write_sample(dir: &Path) -> PathBuf {
    let src = strobe::diag::SourceFile::new("prog.s", SOURCE);
    let obj = strobe::asm::assemble(&src).expect("assembles");
    let path = dir.join("prog.o");
    std::fs::write(&path, strobe::elf::write_object(&obj).unwrap()).unwrap();
    path
}

/// One type of a `bpftool btf dump` listing: `[id] KIND 'name' key=value …` and, for
/// structs, its member lines `'name' type_id=N bits_offset=M`.
#[derive(Debug, Default)]
struct DumpedType {
    kind: String,
    name: String,
    attrs: HashMap<String, String>,
    members: Vec<(String, u32)>,
}

fn quoted(s: &str) -> String {
    s.split('\'').nth(1).unwrap_or("").to_string()
}

fn parse_btf_dump(text: &str) -> HashMap<u32, DumpedType> {
    let mut types = HashMap::new();
    let mut current = None;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix('[') {
            let (id, rest) = rest.split_once("] ").expect("`[id] KIND …` line");
            let id: u32 = id.parse().unwrap();
            let mut words = rest.split_whitespace();
            let kind = words.next().unwrap().to_string();
            let name = quoted(rest);
            let attrs = words
                .filter_map(|w| w.trim_end_matches(',').split_once('='))
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            let t = DumpedType {
                kind,
                name,
                attrs,
                members: Vec::new(),
            };
            types.insert(id, t);
            current = Some(id);
        } else if let (Some(id), Some(member)) = (current, line.strip_prefix('\t')) {
            let type_id = member
                .split_whitespace()
                .find_map(|w| w.strip_prefix("type_id="))
                .expect("member has a type_id")
                .parse()
                .unwrap();
            let t = types.get_mut(&id).unwrap();
            t.members.push((quoted(member), type_id));
        }
    }
    types
}

/// Each map's fields as bpftool decodes them: VAR → struct → `int (*)[N]` members → N.
fn maps_from_dump(types: &HashMap<u32, DumpedType>) -> Vec<(String, Vec<(String, u32)>)> {
    let attr = |id: u32, key: &str| -> u32 {
        let t = &types[&id];
        t.attrs[key].parse().unwrap()
    };
    let mut vars: Vec<(&u32, &DumpedType)> =
        types.iter().filter(|(_, t)| t.kind == "VAR").collect();
    vars.sort_by_key(|(id, _)| **id);
    vars.into_iter()
        .map(|(_, var)| {
            let shape = &types[&var.attrs["type_id"].parse::<u32>().unwrap()];
            assert_eq!(
                shape.kind, "STRUCT",
                "map {} is a VAR of a struct",
                var.name
            );
            assert_eq!(var.attrs["linkage"], "global");
            let fields = shape
                .members
                .iter()
                .map(|(name, ptr)| {
                    assert_eq!(types[ptr].kind, "PTR", "{name} is a pointer");
                    let array = attr(*ptr, "type_id");
                    assert_eq!(types[&array].kind, "ARRAY", "{name} points to an array");
                    (name.clone(), attr(array, "nr_elems"))
                })
                .collect();
            (var.name.clone(), fields)
        })
        .collect()
}

#[test]
fn bpftool_dumps_each_maps_struct_through_the_maps_datasec() {
    let test = "bpftool_dumps_each_maps_struct_through_the_maps_datasec";
    let Some(tool) = bpftool(test) else { return };
    let dir = oracle::TempDir::new("bpftool-btf");
    let obj = write_sample(dir.path());
    let text = run(&tool, &["btf", "dump", "file", obj.to_str().unwrap()]);
    let types = parse_btf_dump(&text);
    assert_eq!(
        maps_from_dump(&types),
        [
            (
                "counts".to_string(),
                vec![
                    ("type".to_string(), 2), // BPF_MAP_TYPE_ARRAY
                    ("key_size".to_string(), 4),
                    ("value_size".to_string(), 8),
                    ("max_entries".to_string(), 1),
                ]
            ),
            (
                "events".to_string(),
                vec![
                    ("type".to_string(), 27), // BPF_MAP_TYPE_RINGBUF
                    ("max_entries".to_string(), 4096),
                ]
            ),
        ],
        "{text}"
    );
    let datasec = types
        .values()
        .find(|t| t.kind == "DATASEC")
        .unwrap_or_else(|| panic!("no DATASEC in\n{text}"));
    assert_eq!(datasec.name, ".maps");
}

/// A directory under the bpf filesystem, removed (with every pin in it) on drop, so that a
/// failing assertion leaves no pinned program behind.
struct PinDir(PathBuf);

impl Drop for PinDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A bpf filesystem at /sys/fs/bpf, mounting one when there is none.
fn bpffs(test: &str) -> Option<PathBuf> {
    let root = PathBuf::from("/sys/fs/bpf");
    let mounted = || {
        std::fs::read_to_string("/proc/self/mounts").is_ok_and(|m| {
            m.lines().any(|l| {
                let f: Vec<&str> = l.split_whitespace().collect();
                f.get(1) == Some(&"/sys/fs/bpf") && f.get(2) == Some(&"bpf")
            })
        })
    };
    if !mounted() {
        let res = strobe::sys::env::mount_pseudo_fs(c"bpf", &root);
        // Another test process may have mounted it meanwhile (EBUSY): look again.
        if !mounted() {
            let why = res.err().map_or("no error".to_string(), |e| e.to_string());
            strobe_testkit::skip(test, &format!("cannot mount bpffs at /sys/fs/bpf: {why}"));
            return None;
        }
    }
    Some(root)
}

/// The raw text of `"key":value` in a one-line JSON object (numbers, strings, arrays).
fn json_field<'a>(json: &'a str, key: &str) -> &'a str {
    let pat = format!("\"{key}\":");
    let start = json
        .find(&pat)
        .unwrap_or_else(|| panic!("no {key} in {json}"))
        + pat.len();
    let rest = &json[start..];
    let end = if rest.starts_with('[') {
        rest.find(']').unwrap() + 1
    } else {
        rest.find([',', '}']).unwrap()
    };
    rest[..end].trim_matches('"')
}

#[test]
fn bpftool_loads_pins_and_runs_an_assembled_object() {
    let test = "bpftool_loads_pins_and_runs_an_assembled_object";
    let Some(tool) = bpftool(test) else { return };
    let probe = MapCreateOptions {
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        ..Default::default()
    };
    if let Err(e) = Map::create(MapType::Array, &probe) {
        strobe_testkit::skip(test, &format!("cannot create a BPF map: {e}"));
        return;
    }
    let Some(root) = bpffs(test) else { return };
    let pins = PinDir(root.join(format!("strobe-test-{}", std::process::id())));
    let _ = std::fs::remove_dir_all(&pins.0);
    std::fs::create_dir(&pins.0).unwrap();
    let (progs, maps) = (pins.0.join("progs"), pins.0.join("maps"));
    let tmp = oracle::TempDir::new("bpftool-load");
    let obj = write_sample(tmp.path());
    let p = |p: &Path| p.to_str().unwrap().to_string();

    run(
        &tool,
        &[
            "prog",
            "loadall",
            &p(&obj),
            &p(&progs),
            "pinmaps",
            &p(&maps),
        ],
    );

    let prog = run(
        &tool,
        &["-j", "prog", "show", "pinned", &p(&progs.join("prog"))],
    );
    assert_eq!(json_field(&prog, "type"), "socket_filter", "{prog}");
    assert_eq!(json_field(&prog, "name"), "prog");
    let counts = run(
        &tool,
        &["-j", "map", "show", "pinned", &p(&maps.join("counts"))],
    );
    assert_eq!(json_field(&counts, "type"), "array", "{counts}");
    assert_eq!(json_field(&counts, "bytes_key"), "4");
    assert_eq!(json_field(&counts, "bytes_value"), "8");
    assert_eq!(json_field(&counts, "max_entries"), "1");
    let counts_id = json_field(&counts, "id");
    assert_eq!(
        json_field(&prog, "map_ids"),
        format!("[{counts_id}]"),
        "the socket program references exactly the `counts` map"
    );
    let listed = run(&tool, &["map", "show", "id", counts_id]);
    assert!(listed.contains("name counts"), "{listed}");

    let raw_tp = run(
        &tool,
        &["-j", "prog", "show", "pinned", &p(&progs.join("on_enter"))],
    );
    assert_eq!(json_field(&raw_tp, "type"), "raw_tracepoint", "{raw_tp}");
    let events = run(
        &tool,
        &["-j", "map", "show", "pinned", &p(&maps.join("events"))],
    );
    assert_eq!(json_field(&events, "type"), "ringbuf", "{events}");
    assert_eq!(json_field(&events, "max_entries"), "4096");
    assert_eq!(
        json_field(&raw_tp, "map_ids"),
        format!("[{}]", json_field(&events, "id"))
    );

    // What the loaded code does: the return value goes through the relocated bpf-to-bpf call,
    // the map value through the relocated map reference.
    let packet = tmp.path().join("packet");
    std::fs::write(&packet, [0u8; 64]).unwrap();
    let ran = run(
        &tool,
        &[
            "prog",
            "run",
            "pinned",
            &p(&progs.join("prog")),
            "data_in",
            &p(&packet),
        ],
    );
    assert!(ran.contains("Return value: 8,"), "add_seven() + 1: {ran}");
    let value = run(
        &tool,
        &[
            "-j",
            "map",
            "lookup",
            "pinned",
            &p(&maps.join("counts")),
            "key",
            "0",
            "0",
            "0",
            "0",
        ],
    );
    assert_eq!(
        json_field(&value, "value"),
        r#"["0x2a","0x00","0x00","0x00","0x00","0x00","0x00","0x00"]"#,
        "the program stored 42 in counts[0]"
    );
}
