//! Stacks (`kstack`, `ustack`) and single symbols (`ksym`, `usym`) as bpftrace prints them.
//!
//! Input: frame addresses already read from the kernel, each with the symbol the runtime's
//! resolver found for it (kallsyms for kernel frames, ELF symbols for user frames).
//! Output: bpftrace's text: a stack starts with a newline and has one frame per line —
//! `bpftrace` mode indents 8 spaces (4 in map keys) and shows `name+offset`, `perf` mode shows a tab, the hex
//! address and the symbol (user frames add ` (module)`, or ` ([unknown])` when unresolved),
//! `raw` mode only the hex address.
//! With DWARF (`show_debug_info`, on by default), a user frame adds `@file.c:LINE` in
//! `bpftrace` mode, and each call the compiler inlined at the address comes first as its own
//! line: `[inlined] f@file.c:LINE` (`perf` mode: `\taddr f (inlined)`, never file and line).
//! An unresolved address prints as `0x…` hex. Invariant: never fails, whatever the frames.

use super::value::write_display;
pub use crate::plan::layout::StackMode;

/// A resolved symbol: `name+offset`, and for user frames the object it lives in.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Sym {
    pub name: String,
    pub offset: u64,
    pub module: Option<String>,
    /// The source line of the address (DWARF), printed in `bpftrace` mode.
    pub source: Option<SourceLine>,
    /// Calls inlined at the address, innermost first (DWARF).
    pub inlined: Vec<InlinedCall>,
}

/// `file:line` of a code address.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SourceLine {
    pub file: String,
    pub line: u32,
}

/// A function the compiler inlined at a frame's address, and where its code there came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InlinedCall {
    pub name: String,
    pub source: Option<SourceLine>,
}

/// One frame: its address and the symbol it resolved to, if any.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    pub addr: u64,
    pub sym: Option<Sym>,
}

/// A resolved stack ready to print.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Stack {
    pub frames: Vec<Frame>,
    pub mode: StackMode,
    /// User stack: perf mode appends ` (module)` to resolved frames.
    pub user: bool,
}

impl Stack {
    /// bpftrace's text for a stack printed as a value (printf, map values): a leading newline,
    /// then one line per frame, `bpftrace` mode indented 8 spaces. Frames stop at the first
    /// zero address, as the kernel's stack map pads with zeros.
    pub fn render(&self) -> Vec<u8> {
        self.render_indented(8)
    }

    /// The same with another indent: bpftrace 0.17 indents stacks in map keys by 4.
    pub fn render_indented(&self, indent: usize) -> Vec<u8> {
        let mut out = vec![b'\n'];
        for f in self
            .frames
            .iter()
            .take_while(|f| f.addr != 0 || self.mode == StackMode::BuildId)
        {
            let inlined = f.sym.as_ref().map_or(&[][..], |s| &s.inlined[..]);
            match self.mode {
                StackMode::Bpftrace => {
                    for c in inlined {
                        out.resize(out.len() + indent.min(64), b' ');
                        write_display(&mut out, format_args!("[inlined] {}", c.name));
                        write_source(&mut out, c.source.as_ref());
                        out.push(b'\n');
                    }
                    out.resize(out.len() + indent.min(64), b' ');
                    write_frame_sym(&mut out, f, false);
                    write_source(&mut out, f.sym.as_ref().and_then(|s| s.source.as_ref()));
                }
                StackMode::Perf => {
                    for c in inlined {
                        write_display(
                            &mut out,
                            format_args!("\t{:x} {} (inlined)\n", f.addr, c.name),
                        );
                    }
                    out.push(b'\t');
                    write_display(&mut out, format_args!("{:x} ", f.addr));
                    write_frame_sym(&mut out, f, self.user);
                }
                StackMode::Raw => write_display(&mut out, format_args!("{:x}", f.addr)),
                StackMode::BuildId => match &f.sym {
                    Some(s) => {
                        write_display(&mut out, format_args!("{} 0x{:02x}", s.name, s.offset))
                    }
                    None => write_display(&mut out, format_args!("{:x}", f.addr)),
                },
            }
            out.push(b'\n');
        }
        out
    }
}

fn write_source(out: &mut Vec<u8>, s: Option<&SourceLine>) {
    if let Some(s) = s {
        write_display(out, format_args!("@{}:{}", s.file, s.line));
    }
}

fn write_frame_sym(out: &mut Vec<u8>, f: &Frame, with_module: bool) {
    match &f.sym {
        Some(s) => {
            write_display(out, format_args!("{}+{}", s.name, s.offset));
            if with_module {
                if let Some(m) = &s.module {
                    write_display(out, format_args!(" ({m})"));
                }
            }
        }
        None => {
            write_display(out, format_args!("0x{:x}", f.addr));
            if with_module {
                out.extend_from_slice(b" ([unknown])");
            }
        }
    }
}

/// `ksym(addr)` / `usym(addr)`: the symbol name without offset, or the address in C++
/// `void*` form (`0x…`, and `0` for a null address) when it does not resolve.
pub fn sym_text(addr: u64, name: Option<&str>) -> String {
    match name {
        Some(n) => n.to_string(),
        None if addr == 0 => "0".to_string(),
        None => format!("0x{addr:x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stack(mode: StackMode, user: bool) -> Stack {
        Stack {
            frames: vec![
                Frame {
                    addr: 0xffffffff81001234,
                    sym: Some(Sym {
                        name: "do_sys_open".into(),
                        offset: 20,
                        module: Some("/usr/lib/libc.so.6".into()),
                        ..Default::default()
                    }),
                },
                Frame {
                    addr: 0x7f00,
                    sym: None,
                },
                Frame { addr: 0, sym: None },
                Frame {
                    addr: 0x1,
                    sym: None,
                },
            ],
            mode,
            user,
        }
    }

    #[test]
    fn bpftrace_mode_indents_eight_spaces_and_stops_at_zero() {
        let s = stack(StackMode::Bpftrace, false).render();
        assert_eq!(s, b"\n        do_sys_open+20\n        0x7f00\n");
    }

    #[test]
    fn perf_mode_shows_tab_address_and_module_for_user_frames() {
        let s = stack(StackMode::Perf, true).render();
        assert_eq!(
            String::from_utf8(s).unwrap(),
            "\n\tffffffff81001234 do_sys_open+20 (/usr/lib/libc.so.6)\n\t7f00 0x7f00 ([unknown])\n"
        );
        let k = stack(StackMode::Perf, false).render();
        assert!(String::from_utf8(k).unwrap().contains("do_sys_open+20\n"));
    }

    fn inlined_stack(mode: StackMode) -> String {
        let src = |line| {
            Some(SourceLine {
                file: "/src/t.c".into(),
                line,
            })
        };
        let st = Stack {
            frames: vec![Frame {
                addr: 0x401166,
                sym: Some(Sym {
                    name: "mywrapper".into(),
                    offset: 48,
                    module: Some("/bin/t".into()),
                    source: src(22),
                    inlined: vec![
                        InlinedCall {
                            name: "myclock".into(),
                            source: src(15),
                        },
                        InlinedCall {
                            name: "mywrapper_inlined".into(),
                            source: None,
                        },
                    ],
                }),
            }],
            mode,
            user: true,
        };
        String::from_utf8(st.render()).unwrap()
    }

    #[test]
    fn bpftrace_mode_prints_inlined_calls_first_and_file_line() {
        assert_eq!(
            inlined_stack(StackMode::Bpftrace),
            "\n        [inlined] myclock@/src/t.c:15\n        [inlined] mywrapper_inlined\n        mywrapper+48@/src/t.c:22\n"
        );
    }

    #[test]
    fn perf_mode_marks_inlined_calls_and_omits_file_line() {
        assert_eq!(
            inlined_stack(StackMode::Perf),
            "\n\t401166 myclock (inlined)\n\t401166 mywrapper_inlined (inlined)\n\t401166 mywrapper+48 (/bin/t)\n"
        );
    }

    #[test]
    fn raw_mode_prints_hex_addresses_only() {
        assert_eq!(
            stack(StackMode::Raw, false).render(),
            b"\nffffffff81001234\n7f00\n"
        );
    }

    #[test]
    fn unresolved_symbols_print_like_a_void_pointer() {
        assert_eq!(sym_text(0, None), "0");
        assert_eq!(sym_text(0x10, None), "0x10");
        assert_eq!(sym_text(0x10, Some("f")), "f");
    }
}
