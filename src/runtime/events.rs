//! Turning ring-buffer records into output: the 8-byte header (`u32 kind`, `u32 id`, see
//! `codegen::emit::output`) selects an [`EventTable`] entry; the bytes after it are that
//! entry's arguments.
//!
//! Input: one record at a time. Output: bytes appended to the caller's buffer, map side
//! effects (`clear`, `zero`), and [`Step::Exit`] for `exit()`. Invariant: a malformed record
//! (unknown kind or id, too short) is reported once on stderr and skipped, never a panic.

use std::collections::HashSet;
use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

use super::format::decode::decode;
use super::format::time::format_local;
use super::format::{Printer, Resolver};
use super::snapshot;
use crate::plan::record::{EventKind, RECORD_HEADER_SIZE};
use crate::plan::{CompiledScript, PrintSpec};
use crate::sys::Map;

/// What the loop does after a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Continue,
    /// `exit()` ran: stop after this record.
    Exit,
}

/// Dispatches records of one script.
pub struct EventSink<'a> {
    pub script: &'a CompiledScript,
    /// The kernel maps, in [`CompiledScript::maps`] order.
    pub maps: &'a [Map],
    pub printer: Printer,
    pub resolver: &'a dyn Resolver,
    /// `--unsafe`: `system()` may run commands.
    pub unsafe_mode: bool,
    /// `--no-warnings`: `warnf()` prints nothing.
    pub no_warnings: bool,
    /// A stop (SIGINT/SIGTERM) came: `system()` records left in the buffers run no command
    /// (each takes a fork and an exec; a probe that fires for each of them would keep the
    /// run from ever reaching END).
    pub stopping: bool,
    /// `errorf()` messages handled so far (a `test:` probe that reports one fails).
    pub errors: usize,
    /// The perf events of the `watchpoint:ADDR` probes, by address, for `unwatch(addr)`.
    /// Invariant: the events stay open while records are handled (the driver closes them
    /// after the last one).
    pub watchpoints: Vec<(u64, std::os::fd::RawFd)>,
    /// `-v`: say what `unwatch()` did.
    pub verbose: bool,
    warned: HashSet<(u32, u32)>,
}

const KINDS: [EventKind; 12] = [
    EventKind::Printf,
    EventKind::Print,
    EventKind::Time,
    EventKind::Exit,
    EventKind::Cat,
    EventKind::System,
    EventKind::Join,
    EventKind::Strftime,
    EventKind::Clear,
    EventKind::Zero,
    EventKind::HelperError,
    EventKind::Unwatch,
];

impl<'a> EventSink<'a> {
    pub fn new(
        script: &'a CompiledScript,
        maps: &'a [Map],
        printer: Printer,
        resolver: &'a dyn Resolver,
        unsafe_mode: bool,
    ) -> EventSink<'a> {
        EventSink {
            script,
            maps,
            printer,
            resolver,
            unsafe_mode,
            no_warnings: false,
            stopping: false,
            errors: 0,
            watchpoints: Vec::new(),
            verbose: false,
            warned: HashSet::new(),
        }
    }

    fn warn(&mut self, kind: u32, id: u32, why: &str) {
        if self.warned.insert((kind, id)) {
            eprintln!("strobe: skipping records of kind {kind} id {id}: {why}");
        }
    }

    /// An `errorf`/`warnf` message: bpftrace's log line on stderr (one trailing newline of the
    /// text dropped), or its JSON message on the output.
    fn diagnostic(&mut self, out: &mut Vec<u8>, d: &crate::plan::PrintfDiag, text: &[u8]) {
        let text = text.strip_suffix(b"\n").unwrap_or(text);
        if d.error {
            self.errors += 1;
        }
        if self.no_warnings && !d.error {
            return;
        }
        let what = if d.error { "ERROR" } else { "WARNING" };
        match self.printer.format {
            super::format::OutputFormat::Text => {
                use std::io::Write;
                let mut line = format!("{}: {what}: ", d.location).into_bytes();
                line.extend_from_slice(text);
                line.push(b'\n');
                line.extend_from_slice(d.expansion_text.as_bytes());
                let _ = std::io::stderr().write_all(&line);
            }
            super::format::OutputFormat::Json => {
                let ty = if d.error { "errorf" } else { "warnf" };
                out.extend_from_slice(format!("{{\"type\": \"{ty}\", \"msg\": ").as_bytes());
                super::format::json::write_json_str(out, text);
                out.extend_from_slice(b", \"filename\": ");
                super::format::json::write_json_str(out, d.filename.as_bytes());
                out.extend_from_slice(
                    format!(", \"line\": {}, \"col\": {}}}\n", d.line, d.col).as_bytes(),
                );
            }
        }
    }

    /// A helper failure reported with `-k`: bpftrace's warning on stderr, or its JSON object
    /// on the output.
    fn helper_error(
        &mut self,
        out: &mut Vec<u8>,
        site: &crate::plan::helper_error::HelperErrorSite,
        data: &[u8],
    ) {
        let Some(bytes) = data.get(..crate::plan::helper_error::HELPER_ERROR_ARG_SIZE) else {
            self.warn(EventKind::HelperError as u32, 0, "record too short");
            return;
        };
        let mut ret = [0u8; 8];
        ret.copy_from_slice(bytes);
        let ret = i64::from_le_bytes(ret);
        match self.printer.format {
            super::format::OutputFormat::Text => {
                use std::io::Write;
                let _ = std::io::stderr().write_all(site.text(ret).as_bytes());
            }
            super::format::OutputFormat::Json => {
                out.extend_from_slice(site.json(ret).as_bytes());
                out.push(b'\n');
            }
        }
    }

    /// `unwatch(addr)`: disables the perf events of every watchpoint probe on `addr`; an
    /// address no probe watches is ignored, as bpftrace's `unwatch` does.
    fn unwatch(&mut self, addr: u64) {
        let mut n = 0;
        for (_, fd) in self.watchpoints.iter().filter(|(a, _)| *a == addr) {
            // SAFETY: the driver keeps these events open while records are handled
            // (the field's invariant).
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(*fd) };
            match crate::sys::PerfEvent::disable_fd(fd) {
                Ok(()) => n += 1,
                Err(e) => eprintln!("strobe: unwatch(0x{addr:x}): {e}"),
            }
        }
        if self.verbose {
            eprintln!("strobe: unwatch(0x{addr:x}): {n} watchpoint event(s) disabled");
        }
    }

    /// Handles one record, appending its output to `out`.
    pub fn handle(&mut self, rec: &[u8], out: &mut Vec<u8>) -> Step {
        if rec.len() < RECORD_HEADER_SIZE {
            self.warn(0, 0, "record shorter than its header");
            return Step::Continue;
        }
        let kind = u32::from_le_bytes([rec[0], rec[1], rec[2], rec[3]]);
        let id = u32::from_le_bytes([rec[4], rec[5], rec[6], rec[7]]);
        let data = &rec[RECORD_HEADER_SIZE..];
        let Some(k) = KINDS.iter().copied().find(|k| *k as u32 == kind) else {
            self.warn(kind, id, "unknown record kind");
            return Step::Continue;
        };
        let ev = &self.script.events;
        let style = self.printer.style;
        let missing = "no such entry in the event table";
        match k {
            EventKind::Exit => return Step::Exit,
            EventKind::Unwatch => match data.get(..8) {
                Some(b) => {
                    let addr = u64::from_le_bytes(b.try_into().unwrap_or_default());
                    self.unwatch(addr);
                }
                None => self.warn(kind, id, "record shorter than its address"),
            },
            EventKind::HelperError => match ev.helper_errors.get(id as usize) {
                Some(site) => {
                    let site = site.clone();
                    self.helper_error(out, &site, data);
                }
                None => self.warn(kind, id, missing),
            },
            EventKind::Printf => match ev.printf.get(id as usize) {
                Some(call) => match call.render(data, self.resolver, style) {
                    Ok(text) if ev.diag_of(id).is_some() => {
                        let d = ev.diag_of(id).cloned().unwrap_or_default();
                        self.diagnostic(out, &d, &text);
                    }
                    Ok(text) => self.printer.printf(out, &text),
                    Err(e) => self.warn(kind, id, &e.to_string()),
                },
                None => self.warn(kind, id, missing),
            },
            EventKind::Print => match ev.print.get(id as usize) {
                Some(PrintSpec::Map { map, top, div }) => {
                    let (top, div) = (*top, *div);
                    if let (Some(spec), Some(m)) = (
                        self.script.maps.get(*map),
                        snapshot::MapParts::of(self.script, self.maps, *map),
                    ) {
                        match snapshot::snapshot(spec, m, self.resolver) {
                            Ok(Some(mut s)) => {
                                if s.entries.is_empty() {
                                    s.entries
                                        .extend(snapshot::empty_scalar_entry(spec, self.resolver));
                                }
                                self.printer.map(out, &s, top, div)
                            }
                            Ok(None) => {}
                            Err(e) => self.warn(kind, id, &e.to_string()),
                        }
                    }
                }
                Some(PrintSpec::Value(ty)) => match decode(ty, data, self.resolver) {
                    Ok(v) => self.printer.value(out, &v),
                    Err(e) => self.warn(kind, id, &e.to_string()),
                },
                None => self.warn(kind, id, missing),
            },
            EventKind::Time | EventKind::Strftime => match ev.time.get(id as usize) {
                Some(fmt) => {
                    let now = SystemTime::now()
                        .duration_since(UNIX_EPOCH)
                        .map_or(0, |d| d.as_nanos() as u64);
                    self.printer.time(out, &format_local(fmt.as_bytes(), now));
                }
                None => self.warn(kind, id, missing),
            },
            EventKind::Cat => match ev.cat.get(id as usize) {
                Some(call) => match call.render(data, self.resolver, style) {
                    Ok(path) => {
                        let path = String::from_utf8_lossy(&path).into_owned();
                        let mut text = Vec::new();
                        let limit = max_cat_bytes();
                        match std::fs::File::open(&path)
                            .and_then(|f| f.take(limit).read_to_end(&mut text))
                        {
                            Ok(_) => self.printer.cat(out, &text),
                            // bpftrace's words.
                            Err(e) => eprintln!(
                                "ERROR: failed to open file '{path}' ({})",
                                crate::sys::Errno(e.raw_os_error().unwrap_or(libc::EIO)).meaning()
                            ),
                        }
                    }
                    Err(e) => self.warn(kind, id, &e.to_string()),
                },
                None => self.warn(kind, id, missing),
            },
            EventKind::System => match ev.system.get(id as usize) {
                Some(_) if !self.unsafe_mode => self.warn(kind, id, "system() needs --unsafe"),
                Some(_) if self.stopping => {}
                Some(call) => match call.render(data, self.resolver, style) {
                    Ok(cmd) => {
                        let cmd = String::from_utf8_lossy(&cmd).into_owned();
                        match std::process::Command::new("/bin/sh")
                            .arg("-c")
                            .arg(&cmd)
                            .output()
                        {
                            Ok(o) => self.printer.syscall(out, &o.stdout),
                            Err(e) => eprintln!("strobe: system(\"{cmd}\"): {e}"),
                        }
                    }
                    Err(e) => self.warn(kind, id, &e.to_string()),
                },
                None => self.warn(kind, id, missing),
            },
            EventKind::Join => match ev.join.get(id as usize) {
                Some(j) => {
                    let elems: Vec<Vec<u8>> = data
                        .chunks(j.elem_size.max(1))
                        .take(j.count)
                        .map(|c| c[..c.iter().position(|&b| b == 0).unwrap_or(c.len())].to_vec())
                        .filter(|e| !e.is_empty())
                        .collect();
                    self.printer.join(out, &elems, j.sep.as_bytes());
                }
                None => self.warn(kind, id, missing),
            },
            EventKind::Clear | EventKind::Zero => {
                let table = if k == EventKind::Clear {
                    &ev.clear
                } else {
                    &ev.zero
                };
                match table
                    .get(id as usize)
                    .and_then(|&m| snapshot::MapParts::of(self.script, self.maps, m))
                {
                    Some(m) => {
                        let r = if k == EventKind::Clear {
                            snapshot::clear(m)
                        } else {
                            snapshot::zero(m)
                        };
                        if let Err(e) = r {
                            self.warn(kind, id, &e.to_string());
                        }
                    }
                    None => self.warn(kind, id, missing),
                }
            }
        }
        Step::Continue
    }
}

/// The most bytes `cat()` prints of a file: `max_cat_bytes` (`STROBE_`/`BPFTRACE_MAX_CAT_BYTES`),
/// 10240 by default as in bpftrace.
fn max_cat_bytes() -> u64 {
    static LIMIT: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        ["STROBE_MAX_CAT_BYTES", "BPFTRACE_MAX_CAT_BYTES"]
            .iter()
            .find_map(|n| std::env::var(n).ok()?.trim().parse().ok())
            .unwrap_or(10240)
    })
}
