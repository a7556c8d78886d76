//! Fuzzing of the `strobe` binary as a user drives it: generated and mutated scripts, random
//! bytes, `/dev/zero` and huge files as the script, with the output read to the end, closed
//! before the first byte (`strobe … | true`) or a full disk. Every run must end within a bound,
//! never panic, and exit with a documented code (0 success, 1 script error, 2 usage error, 141
//! a closed output pipe). `STROBE_FUZZ_CASES` runs more mutations, `STROBE_FUZZ_SEED` others.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::runtime_support;
use runtime_support::have_bpf;

/// The default seed of the generators.
const SEED: u64 = 0x005e_ed13;

/// xorshift64*: the same inputs on every run for a seed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn env_num(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    "\"",
    "\\",
    "/*",
    "*/",
    "//",
    "\n",
    "@",
    "$",
    "#",
    "BEGIN",
    "END",
    "if",
    "else",
    "while",
    "for",
    "unroll",
    "printf(\"%d %s\\n\", ",
    "exit()",
    "@x[comm] = count()",
    "$x = ",
    "str(",
    "kprobe:",
    "tracepoint:",
    "uprobe:/bin/sh:",
    "interval:s:1",
    "+",
    "-",
    "*",
    "/",
    "==",
    "?",
    ":",
    "0x",
    "99999999999999999999",
    "\u{1F980}",
    "\0",
    "\u{7f}",
    "#define X ",
    "#include <",
    "struct S { int a; }",
    "(struct S *)",
    "->",
];

/// One mutation of `base`: bytes flipped, cut, duplicated, or tokens spliced in.
fn mutate(rng: &mut Rng, base: &[u8]) -> Vec<u8> {
    let mut v = base.to_vec();
    for _ in 0..1 + rng.below(6) {
        let at = rng.below(v.len() + 1);
        match rng.below(5) {
            0 if !v.is_empty() => {
                let i = at.min(v.len() - 1);
                v[i] ^= 1 << rng.below(8);
            }
            1 => {
                let end = (at + rng.below(64)).min(v.len());
                v.drain(at..end);
            }
            2 => {
                let end = (at + rng.below(256)).min(v.len());
                let piece = v[at..end].to_vec();
                v.splice(at..at, piece.iter().copied().cycle().take(piece.len() * 4));
            }
            3 => v.truncate(at),
            _ => {
                let t = TOKENS[rng.below(TOKENS.len())].as_bytes();
                v.splice(at..at, t.iter().copied());
            }
        }
    }
    v
}

fn examples() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("examples directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bt"))
        .collect();
    v.sort();
    v.iter().map(|p| std::fs::read(p).unwrap()).collect()
}

/// Where the output goes.
#[derive(Clone, Copy, Debug)]
enum Out {
    /// Read to the end.
    Read,
    /// A pipe whose reading end is closed before strobe starts.
    Closed,
    /// `/dev/full`.
    Full,
}

fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe fills two fresh fds; we own both.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: closing our own read end.
    unsafe { libc::close(fds[0]) };
    // SAFETY: the write end is ours alone.
    Stdio::from(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) })
}

/// Runs strobe with `args` and checks the outcome: ended within `secs`, no panic, a
/// documented exit code. Returns the code.
fn run_checked(args: &[&str], out: Out, secs: u64, what: &str) -> i32 {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_strobe"));
    cmd.args(args).stdin(Stdio::null()).stderr(Stdio::piped());
    match out {
        Out::Read => cmd.stdout(Stdio::piped()),
        Out::Closed => cmd.stdout(closed_pipe()),
        Out::Full => cmd.stdout(Stdio::from(
            std::fs::OpenOptions::new()
                .write(true)
                .open("/dev/full")
                .unwrap(),
        )),
    };
    let started = Instant::now();
    let mut child = cmd.spawn().expect("strobe starts");
    let stdout = child.stdout.take();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(mut o) = stdout {
            let _ = o.read_to_end(&mut v);
        }
        v.len()
    });
    let mut err = child.stderr.take().unwrap();
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        if started.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: {args:?} ({out:?}) still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let _ = t_out.join();
    let stderr = String::from_utf8_lossy(&t_err.join().unwrap()).into_owned();
    let tail: String = stderr.chars().take(2000).collect();
    assert!(
        !stderr.contains("panicked") && !stderr.contains("RUST_BACKTRACE"),
        "{what}: {args:?} ({out:?}) panicked: {tail}"
    );
    let code = status.code().unwrap_or_else(|| {
        panic!("{what}: {args:?} ({out:?}) killed by a signal: {status:?}: {tail}")
    });
    assert!(
        matches!(code, 0 | 1 | 2 | 141),
        "{what}: {args:?} ({out:?}) exit {code}: {tail}"
    );
    code
}

fn scratch_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("strobe-cli-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Mutated examples and token soup as script files, through `--dry-run` (sema against the
/// host's kernel) and `-d ast`, with the output read, closed or full.
#[test]
fn mutated_scripts_through_the_binary_end_cleanly() {
    let dir = scratch_dir();
    let seed = env_num("STROBE_FUZZ_SEED", SEED);
    let count = env_num("STROBE_FUZZ_CASES", 240) as usize;
    let bases = examples();
    let started = Instant::now();
    let mut rng = Rng(seed | 1);
    let mut codes = [0usize; 4];
    for i in 0..count {
        let text = if i % 8 == 7 {
            // Token soup.
            let mut v = Vec::new();
            for _ in 0..rng.below(64) {
                v.extend_from_slice(TOKENS[rng.below(TOKENS.len())].as_bytes());
            }
            v
        } else {
            let base = &bases[rng.below(bases.len())];
            mutate(&mut rng, base)
        };
        let file = dir.join(format!("m{i}.bt"));
        std::fs::write(&file, &text).unwrap();
        let f = file.to_str().unwrap();
        let out = [Out::Read, Out::Closed, Out::Full][i % 3];
        let args: &[&str] = if i % 2 == 0 {
            &["--dry-run", f]
        } else {
            &["-d", "ast", f]
        };
        let code = run_checked(args, out, 30, &format!("seed {seed:#x} case {i}"));
        codes[match code {
            0 => 0,
            1 => 1,
            2 => 2,
            _ => 3,
        }] += 1;
    }
    let _ = std::fs::remove_dir_all(&dir);
    eprintln!("exit codes 0/1/2/141: {codes:?}");
    // The generator reaches both accepted and refused scripts.
    assert!(codes[1] > 0, "no mutation was refused: {codes:?}");
    assert!(
        started.elapsed() < Duration::from_millis(60_000 + 200 * count as u64),
        "{count} runs took {:?}",
        started.elapsed()
    );
}

/// Not scripts at all: random bytes, `/dev/zero`, a file past the 16 MiB bound, a huge valid
/// script and a huge line; every output kind.
#[test]
fn odd_and_huge_script_files_end_cleanly() {
    let dir = scratch_dir();
    let mut rng = Rng(env_num("STROBE_FUZZ_SEED", SEED) | 1);
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for i in 0..6 {
        let len = [0, 1, 17, 4096, 65536, 300_000][i];
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        let p = dir.join(format!("random{i}.bt"));
        std::fs::write(&p, bytes).unwrap();
        files.push((format!("{len} random bytes"), p));
    }
    let big = dir.join("over.bt");
    std::fs::write(&big, vec![b' '; (16 << 20) + 1]).unwrap();
    files.push(("16 MiB + 1 of spaces".into(), big));
    let valid = dir.join("valid.bt");
    std::fs::write(
        &valid,
        format!("BEGIN {{ {} exit(); }}", "@x = @x + 1; ".repeat(20_000)),
    )
    .unwrap();
    files.push(("20k statements".into(), valid));
    let line = dir.join("line.bt");
    std::fs::write(
        &line,
        format!("BEGIN {{ printf(\"{}\"); }}", "y".repeat(1 << 20)),
    )
    .unwrap();
    files.push(("a 1 MiB string".into(), line));
    files.push(("/dev/zero".into(), PathBuf::from("/dev/zero")));
    files.push(("/dev/null".into(), PathBuf::from("/dev/null")));
    for (what, p) in &files {
        let f = p.to_str().unwrap();
        for out in [Out::Read, Out::Closed, Out::Full] {
            run_checked(&["--dry-run", f], out, 30, what);
            run_checked(&["-d", "ast", f], out, 30, what);
        }
    }
    let code = run_checked(&["--dry-run", "/dev/zero"], Out::Read, 30, "/dev/zero");
    assert_eq!(code, 2, "/dev/zero is refused as too large");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs that print: the output pipe closed before the first line ends the run with 141, read
/// to the end or into a full disk they end 0 or 1; generated printf formats and arguments.
#[test]
fn printing_runs_with_closed_or_full_output_end_cleanly() {
    if !have_bpf("printing_runs_with_closed_or_full_output_end_cleanly") {
        return;
    }
    let mut rng = Rng(env_num("STROBE_FUZZ_SEED", SEED) | 1);
    let pieces = [
        "%d", "%s", "%x", "%-10s|", "%5d", "%%", "\\n", "%c", "%lu", "%p", "%", "%q", "x", "\\t",
    ];
    let args = [
        "1",
        "\"str\"",
        "comm",
        "pid",
        "-1",
        "0xffffffffffffffff",
        "nsecs",
        "@m",
    ];
    for i in 0..12 {
        let n = rng.below(4);
        let fmt: String = (0..1 + rng.below(5))
            .map(|_| pieces[rng.below(pieces.len())])
            .collect();
        let list: String = (0..n)
            .map(|_| format!(", {}", args[rng.below(args.len())]))
            .collect();
        let script = format!(
            "BEGIN {{ @m = 1; printf(\"{fmt}\\n\"{list}); @c[{}] = count(); print(@c); exit(); }}",
            rng.below(10)
        );
        let out = [Out::Read, Out::Closed, Out::Full][i % 3];
        let code = run_checked(&["-e", &script], out, 30, &script);
        if let Out::Closed = out {
            assert!(matches!(code, 1 | 141), "{script}: exit {code}");
        }
    }
    // A run that prints forever into a closed pipe ends.
    let code = run_checked(
        &["-e", "interval:ms:1 { printf(\"tick %d\\n\", nsecs); }"],
        Out::Closed,
        30,
        "interval into a closed pipe",
    );
    assert_eq!(code, 141);
}
