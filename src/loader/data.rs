//! Global data for `strobe load`: each `.rodata*` / `.data*` / `.bss*` section of a clang
//! object becomes a single-entry array map (value = the section), created once and shared by
//! every clone, and the instructions that point into a section become
//! `ld_imm64 src=BPF_PSEUDO_MAP_VALUE` (imm = the map's fd, second imm = offset in the value).
//!
//! Input: the object's [`DataSection`]s and a program section. Output: [`DataMap`]s (filled,
//! `.rodata` frozen) and the section with its data relocations rewritten to name the data
//! section, so [`Template::from_section`](crate::template::Template::from_section) turns them
//! into `MapValue` relocations.
//! Map names follow libbpf so `bpftool map` shows the same thing for both loaders: up to 8
//! bytes of the object's name, then `.rodata` / `.data` / `.bss`; a custom section
//! (`.rodata.str1.1`) by its own name; at most 15 bytes.

use crate::asm::Section;
use crate::elf::{DataSection, DataSymbols};
use crate::sys::{Errno, Map, MapCreateOptions, MapFlags, MapType, UpdateFlags};

use crate::asm::isa::{CODE_LD_IMM64, PSEUDO_MAP_VALUE};
/// The kernel's object name limit, without the NUL.
const NAME_MAX: usize = 15;

/// One data section's map.
#[derive(Debug)]
pub struct DataMap {
    /// The section (`.rodata`): the name program relocations use for it.
    pub section: String,
    /// The kernel's name for the map (`clang_gl.rodata`), also its pin name.
    pub name: String,
    pub map: Map,
    pub readonly: bool,
}

/// The kernel name of the map for data section `section` of an object named `object`.
pub fn data_map_name(object: &str, section: &str) -> String {
    // A custom section (a second dot) is named on its own, as libbpf does.
    let custom = section.get(1..).is_some_and(|rest| rest.contains('.'));
    let room = NAME_MAX.saturating_sub(section.len()).min(8);
    let prefix: String = if custom {
        String::new()
    } else {
        object
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .take(room)
            .collect()
    };
    format!("{prefix}{section}")
        .chars()
        .take(NAME_MAX)
        .collect()
}

/// Creates, fills and (for constants) freezes one map per data section.
pub fn create_data_maps(object: &str, data: &[DataSection]) -> Result<Vec<DataMap>, String> {
    data.iter()
        .map(|d| {
            let name = data_map_name(object, &d.name);
            let size = u32::try_from(d.bytes.len())
                .map_err(|_| format!("data section {}: too large", d.name))?;
            let create = |flags: MapFlags| {
                Map::create(
                    MapType::Array,
                    &MapCreateOptions {
                        name: &name,
                        key_size: 4,
                        value_size: size,
                        max_entries: 1,
                        flags,
                        ..Default::default()
                    },
                )
            };
            // Read-only for programs lets the verifier treat constants as known values; kernels
            // before 5.2 do not know the flag.
            let map = if d.readonly {
                match create(MapFlags::RDONLY_PROG) {
                    Err(e) if e.errno == Errno::EINVAL => create(MapFlags::empty()),
                    r => r,
                }
            } else {
                create(MapFlags::empty())
            }
            .map_err(|e| format!("map {name} for section {}: {e}", d.name))?;
            map.update(&0u32.to_ne_bytes(), &d.bytes, UpdateFlags::empty())
                .map_err(|e| format!("map {name}: writing the initial contents: {e}"))?;
            if d.readonly {
                match map.freeze() {
                    // Before 5.2 there is no freezing; the program still only reads it.
                    Err(e) if e.errno == Errno::EINVAL => {}
                    r => r.map_err(|e| format!("map {name}: {e}"))?,
                }
            }
            Ok(DataMap {
                section: d.name.clone(),
                name,
                map,
                readonly: d.readonly,
            })
        })
        .collect()
}

/// Rewrites `section`'s relocations that point into global data: the `ld_imm64` gets
/// `src=BPF_PSEUDO_MAP_VALUE`, its second half the offset (symbol offset + the addend clang
/// left in the first immediate), and the relocation names the data section. Relocations naming
/// anything else are left alone.
pub fn link_data(section: &mut Section, data: &[DataSection]) -> Result<(), String> {
    let symbols = DataSymbols::new(data);
    for r in &mut section.relocs {
        let Some((i, sym_off)) = symbols.locate(&r.symbol)? else {
            continue;
        };
        let at = r.insn;
        let is_ld = section.insns.get(at).map(|i| i.code) == Some(CODE_LD_IMM64)
            && at + 1 < section.insns.len();
        if !is_ld {
            return Err(format!(
                "instruction {at} refers to global `{}` but is not an ld_imm64",
                r.symbol
            ));
        }
        let addend = i64::from(section.insns[at].imm);
        let off = (sym_off as i64)
            .checked_add(addend)
            .filter(|o| (0..data[i].bytes.len() as i64).contains(o))
            .ok_or_else(|| {
                format!(
                    "instruction {at}: `{}`{addend:+} lies outside section {}",
                    r.symbol, data[i].name
                )
            })?;
        section.insns[at].set_src(PSEUDO_MAP_VALUE);
        section.insns[at].imm = 0;
        section.insns[at + 1].imm = off as i32;
        r.symbol = data[i].name.clone();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::{Insn, Reg, Reloc};

    #[test]
    fn map_names_follow_libbpf() {
        assert_eq!(data_map_name("clang_globals", ".rodata"), "clang_gl.rodata");
        assert_eq!(data_map_name("clang_globals", ".bss"), "clang_gl.bss");
        assert_eq!(data_map_name("a-b", ".data"), "a_b.data");
        assert_eq!(data_map_name("x", ".rodata.str1.1"), ".rodata.str1.1");
        assert_eq!(
            data_map_name("x", ".data.a_very_long_name"),
            ".data.a_very_lo"
        );
    }

    #[test]
    fn link_points_ld_imm64_at_the_value_with_symbol_offset_plus_addend() {
        let data = [DataSection {
            name: ".data".into(),
            bytes: vec![0; 32],
            readonly: false,
            symbols: vec![("a".into(), 0), ("b".into(), 16)],
        }];
        let mut insns = Insn::ld_imm64(Reg::R1, 0).to_vec();
        insns.extend(Insn::ld_imm64(Reg::R2, 0));
        insns[2].imm = 4; // `.data + 4`
        insns.extend(Insn::ld_imm64(Reg::R3, 0));
        insns.push(Insn::exit());
        let mut s = Section {
            name: "raw_tp/x".into(),
            insns,
            symbols: vec![],
            relocs: vec![
                Reloc {
                    insn: 0,
                    symbol: "b".into(),
                },
                Reloc {
                    insn: 2,
                    symbol: ".data".into(),
                },
                Reloc {
                    insn: 4,
                    symbol: "some_map".into(),
                },
            ],
        };
        link_data(&mut s, &data).unwrap();
        assert_eq!(
            (s.insns[0].src(), s.insns[0].imm, s.insns[1].imm),
            (2, 0, 16)
        );
        assert_eq!(
            (s.insns[2].src(), s.insns[2].imm, s.insns[3].imm),
            (2, 0, 4)
        );
        assert_eq!(s.insns[4].src(), 0, "map references are left alone");
        let names: Vec<&str> = s.relocs.iter().map(|r| r.symbol.as_str()).collect();
        assert_eq!(names, [".data", ".data", "some_map"]);

        // An addend past the section is bad input, not a wild pointer.
        s.insns[2].imm = 40;
        s.relocs[1].symbol = ".data".into();
        assert!(link_data(&mut s, &data).unwrap_err().contains("outside"));
    }

    /// CPU time of this thread (a ratio of wall-clock times is skewed on a busy machine).
    fn cpu_seconds() -> f64 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime fills the timespec we own.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
        ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
    }

    #[test]
    fn linking_many_globals_is_near_linear() {
        // `n` variables and one reference to each: 8 × n = 1k against 1 × n = 8k (equal work
        // when linear; 8× when every reference scans every symbol).
        let secs = |n: usize, reps: usize| {
            let data = [DataSection {
                name: ".data".into(),
                bytes: vec![0; 8 * n],
                readonly: false,
                symbols: (0..n).map(|i| (format!("v{i}"), 8 * i as u64)).collect(),
            }];
            let mut insns = Vec::new();
            let mut relocs = Vec::new();
            for i in 0..n {
                relocs.push(Reloc {
                    insn: insns.len(),
                    symbol: format!("v{i}"),
                });
                insns.extend(Insn::ld_imm64(Reg::R1, 0));
            }
            insns.push(Insn::exit());
            let s = Section {
                name: "raw_tp/x".into(),
                insns,
                symbols: vec![],
                relocs,
            };
            (0..3)
                .map(|_| {
                    let t = cpu_seconds();
                    for _ in 0..reps {
                        let mut s = s.clone();
                        link_data(&mut s, &data).unwrap();
                        assert_eq!(s.insns[2 * (n - 1) + 1].imm, 8 * (n as i32 - 1));
                    }
                    cpu_seconds() - t
                })
                .fold(f64::MAX, f64::min)
        };
        let (a, b) = (secs(1_000, 8), secs(8_000, 1));
        assert!(
            b / a.max(1e-4) < 4.0,
            "8k globals took {:.1}× 8 × 1k",
            b / a
        );
    }
}
