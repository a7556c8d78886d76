//! `--aot FILE`: a standalone executable that runs one script, as bpftrace's ahead-of-time
//! mode makes. strobe needs no compiler at run time, so the executable is a copy of strobe
//! itself with the script's command line appended after the ELF image:
//! `[strobe][args, NUL-separated][u64 LE length of args]["STROBEAOT1"]`. At start, strobe looks
//! for that trailer at the end of its own file (`/proc/self/exe`, three system calls) and,
//! when present, runs the stored command line with the flags given to the executable.
//!
//! The executable takes what bpftrace's AOT runtime takes: `-o FILE`, `-f FORMAT`, `-q`, `-v`,
//! `-h`, `-V`, and named program options after `--` (`prog -- --depth=3`); positional
//! parameters were fixed when it was made.

use std::ffi::OsString;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};

use super::{EXIT_INPUT, EXIT_OK, EXIT_USAGE};

const MAGIC: &[u8; 10] = b"STROBEAOT1";
const TRAILER: usize = MAGIC.len() + 8;

/// The stored command line of this executable when it is an `--aot` one, and the length of
/// the strobe image before it.
fn embedded_in(file: &mut std::fs::File) -> Option<(Vec<OsString>, u64)> {
    let size = file.metadata().ok()?.len();
    if size < TRAILER as u64 {
        return None;
    }
    let mut tail = [0u8; TRAILER];
    file.seek(SeekFrom::Start(size - TRAILER as u64)).ok()?;
    file.read_exact(&mut tail).ok()?;
    if &tail[8..] != MAGIC {
        return None;
    }
    let len = u64::from_le_bytes(tail[..8].try_into().ok()?);
    let start = size.checked_sub(TRAILER as u64 + len)?;
    let mut payload = vec![0u8; usize::try_from(len).ok()?];
    file.seek(SeekFrom::Start(start)).ok()?;
    file.read_exact(&mut payload).ok()?;
    Some((decode(&payload), start))
}

fn encode(args: &[OsString]) -> Vec<u8> {
    let mut out = Vec::new();
    for a in args {
        out.extend_from_slice(a.as_bytes());
        out.push(0);
    }
    out
}

fn decode(payload: &[u8]) -> Vec<OsString> {
    let body = payload.strip_suffix(&[0]).unwrap_or(payload);
    if body.is_empty() && payload.is_empty() {
        return Vec::new();
    }
    body.split(|b| *b == 0)
        .map(|a| OsString::from_vec(a.to_vec()))
        .collect()
}

/// The stored command line when the running executable is an `--aot` one.
pub fn embedded() -> Option<Vec<OsString>> {
    let mut f = std::fs::File::open("/proc/self/exe").ok()?;
    embedded_in(&mut f).map(|(args, _)| args)
}

/// Writes the executable for `stored` (a command line of the default mode, without `--aot`)
/// to `out`.
pub fn write(out: &str, stored: &[OsString]) -> Result<(), String> {
    let mut exe = std::fs::File::open("/proc/self/exe")
        .map_err(|e| format!("cannot read strobe's own executable: {e}"))?;
    // An --aot executable making another one copies only the strobe image.
    let image_len = match embedded_in(&mut exe) {
        Some((_, start)) => start,
        None => exe
            .metadata()
            .map_err(|e| format!("cannot read strobe's own executable: {e}"))?
            .len(),
    };
    exe.seek(SeekFrom::Start(0))
        .map_err(|e| format!("cannot read strobe's own executable: {e}"))?;
    let mut write_all = || -> std::io::Result<()> {
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::remove_file(out);
        let mut dst = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o755)
            .open(out)?;
        std::io::copy(&mut (&mut exe).take(image_len), &mut dst)?;
        let payload = encode(stored);
        dst.write_all(&payload)?;
        dst.write_all(&(payload.len() as u64).to_le_bytes())?;
        dst.write_all(MAGIC)?;
        dst.flush()
    };
    write_all().map_err(|e| format!("cannot write '{out}': {e}"))
}

/// The command line without `--aot FILE` / `--aot=FILE`, and FILE.
pub fn strip_aot_flag(args: &[OsString]) -> (Vec<OsString>, Option<String>) {
    let mut kept = Vec::with_capacity(args.len());
    let mut out = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--" {
            kept.push(a.clone());
            kept.extend(it.by_ref().cloned());
            break;
        }
        if a == "--aot" {
            out = it.next().map(|v| v.to_string_lossy().into_owned());
        } else if let Some(v) = a.to_str().and_then(|s| s.strip_prefix("--aot=")) {
            out = Some(v.to_string());
        } else {
            kept.push(a.clone());
        }
    }
    (kept, out)
}

/// Runs an `--aot` executable: `stored` is its command line, `given` the arguments it was
/// started with (without argv[0]).
pub fn run(stored: Vec<OsString>, given: &[OsString]) -> i32 {
    let mut flags: Vec<OsString> = Vec::new();
    let mut named: Vec<OsString> = Vec::new();
    let mut it = given.iter();
    while let Some(a) = it.next() {
        let s = a.to_string_lossy();
        match s.as_ref() {
            "-h" | "--help" => {
                println!(
                    "USAGE: {} [-o FILE] [-f FORMAT] [-q] [-v] [-- --NAME[=VALUE]...]\n\n\
                     Runs the bpftrace script it was made from (strobe --aot).",
                    std::env::args().next().unwrap_or_default()
                );
                return EXIT_OK;
            }
            "-V" | "--version" => {
                return super::print_stdout(super::version::banner());
            }
            "-q" | "-v" => flags.push(a.clone()),
            "-o" | "-f" | "-d" => {
                let Some(v) = it.next() else {
                    eprintln!("ERROR: option '{s}' needs a value");
                    return EXIT_USAGE;
                };
                flags.push(a.clone());
                flags.push(v.clone());
            }
            "--" => named.extend(it.by_ref().cloned()),
            _ if s.starts_with("--") => named.push(a.clone()),
            _ if s.starts_with('-') && s.len() > 1 => {
                eprintln!("ERROR: unknown option '{s}'");
                return EXIT_USAGE;
            }
            _ => {
                eprintln!("ERROR: AOT does not support positional parameters");
                return EXIT_INPUT;
            }
        }
    }
    if named.iter().any(|n| !n.as_bytes().starts_with(b"--")) {
        eprintln!("ERROR: AOT does not support positional parameters");
        return EXIT_INPUT;
    }
    // The stored line's own named options (if any) give way to the ones given now.
    let base: Vec<OsString> = stored.into_iter().take_while(|a| a != "--").collect();
    let mut args = flags;
    args.extend(base);
    args.push("--".into());
    args.extend(named);
    super::trace::run(&args)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    #[test]
    fn payload_round_trips_through_a_file() {
        let dir = std::env::temp_dir().join(format!("strobe-aot-{}", std::process::id()));
        std::fs::write(&dir, b"\x7fELF image bytes").unwrap();
        let stored = os(&["-e", "BEGIN { print(1); }", "x y"]);
        let mut f = std::fs::OpenOptions::new().append(true).open(&dir).unwrap();
        let payload = encode(&stored);
        f.write_all(&payload).unwrap();
        f.write_all(&(payload.len() as u64).to_le_bytes()).unwrap();
        f.write_all(MAGIC).unwrap();
        drop(f);
        let mut f = std::fs::File::open(&dir).unwrap();
        let (args, start) = embedded_in(&mut f).unwrap();
        assert_eq!(args, stored);
        assert_eq!(start, 16);
        std::fs::remove_file(&dir).unwrap();
    }

    #[test]
    fn a_plain_file_has_no_payload() {
        let mut f = std::fs::File::open("/proc/self/exe").unwrap();
        assert!(embedded_in(&mut f).is_none());
    }

    #[test]
    fn aot_flag_is_taken_out_of_the_command_line() {
        let (kept, out) = strip_aot_flag(&os(&["-e", "p", "--aot", "/tmp/x", "1"]));
        assert_eq!(kept, os(&["-e", "p", "1"]));
        assert_eq!(out.as_deref(), Some("/tmp/x"));
        let (kept, out) = strip_aot_flag(&os(&["--aot=/tmp/y", "f.bt", "--", "--aot", "z"]));
        assert_eq!(kept, os(&["f.bt", "--", "--aot", "z"]));
        assert_eq!(out.as_deref(), Some("/tmp/y"));
    }
}
