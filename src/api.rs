//! The library API: compile a bpftrace script and run it from another Rust program.
//!
//! ```no_run
//! // Count system calls per process for one second, then print the map like bpftrace does.
//! let script = strobe::Script::compile(
//!     "tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }",
//! )?;
//! let session = script.attach()?;
//! std::thread::sleep(std::time::Duration::from_secs(1));
//! let done = session.stop()?;
//! for map in &done.outcome.maps {
//!     println!("{} has {} entries", map.name, map.entries.len());
//! }
//! print!("{}", String::from_utf8_lossy(&done.output));
//! # Ok::<(), strobe::ScriptError>(())
//! ```
//!
//! Compiling needs no privileges (it reads the kernel's BTF and tracefs formats when a script
//! refers to them); attaching needs what `strobe` needs (root, or CAP_BPF + CAP_PERFMON).
//! [`Script::run`] runs in the calling thread until `exit()`, a signal or the `-c` command's
//! exit; [`Script::attach`] runs on a thread of its own and returns once every probe is
//! attached and armed, and [`Session`] reads the output as it comes and stops the run.
//!
//! Input: script text and [`CheckOptions`]/[`RunOptions`] (the CLI's flags as fields).
//! Output: bpftrace's text or JSON output, and a [`RunOutcome`] with the final maps.
//! Invariant: dropping a [`Session`] stops the run and waits for it, so nothing stays
//! attached after the value is gone.

pub mod expand;

use std::io::Write;
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use crate::diag::SourceFile;
use crate::kernel::info::HostKernel;
use crate::runtime::driver::run;
use crate::runtime::stop::StopHandle;

// The types the API's signatures name, from the stages behind it (hidden modules), so that
// they are documented and reachable here.
pub use crate::diag::Diagnostic;
pub use crate::plan::CompiledScript;
pub use crate::runtime::driver::{RunError, RunOptions, RunOutcome};
pub use crate::sema::CheckOptions;

/// Why a script could not be compiled or run.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    /// The script has errors; `rendered` is what `strobe` prints (`file:line:col: error:`).
    #[error("{rendered}")]
    Compile {
        rendered: String,
        diagnostics: Vec<Diagnostic>,
    },
    /// Loading, attaching or running failed (the kernel refused, a map could not be created…).
    #[error(transparent)]
    Run(#[from] RunError),
    /// The run's thread could not be started or died.
    #[error("the script's thread {0}")]
    Thread(String),
}

/// A compiled script, ready to attach.
#[derive(Debug, Clone)]
pub struct Script {
    compiled: CompiledScript,
    /// How [`Script::run`] and [`Script::attach`] run it (`quiet` by default: no
    /// `Attached N probes` line).
    pub options: RunOptions,
}

impl Script {
    /// Compiles `text` against this machine's kernel with default options.
    ///
    /// ```
    /// let err = strobe::Script::compile("BEGIN { printf(\"%d\\n\"); }").unwrap_err();
    /// assert!(err.to_string().contains("ERROR:"));
    /// let ok = strobe::Script::compile("BEGIN { printf(\"hi\\n\"); exit(); }");
    /// assert!(ok.is_ok());
    /// ```
    pub fn compile(text: &str) -> Result<Script, ScriptError> {
        Script::compile_with(text, &CheckOptions::default())
    }

    /// Compiles `text` with explicit options (positional parameters, `--unsafe`, string size,
    /// `pid_filter` for scripts that will run with a pid or command).
    pub fn compile_with(text: &str, opts: &CheckOptions) -> Result<Script, ScriptError> {
        let src = SourceFile::new("script.bt", text);
        let out = crate::compile::compile(&src, &HostKernel::new(), opts);
        match out.script {
            Some(compiled) if !out.has_errors() => Ok(Script {
                compiled,
                options: RunOptions {
                    quiet: true,
                    ..Default::default()
                },
            }),
            _ => Err(ScriptError::Compile {
                rendered: out
                    .diagnostics
                    .iter()
                    .filter(|d| d.is_error())
                    .map(|d| d.render(&out.source))
                    .collect(),
                diagnostics: out.diagnostics,
            }),
        }
    }

    /// The compiled form (probes, templates, maps), e.g. to inspect the instructions.
    pub fn compiled(&self) -> &CompiledScript {
        &self.compiled
    }

    /// Runs the script in this thread until it ends, writing its output to `out`.
    ///
    /// ```no_run
    /// let script = strobe::Script::compile("BEGIN { printf(\"hello\\n\"); exit(); }")?;
    /// let mut out = Vec::new();
    /// script.run(&mut out)?;
    /// assert_eq!(out, b"hello\n\n\n"); // bpftrace ends with two empty lines
    /// # Ok::<(), strobe::ScriptError>(())
    /// ```
    pub fn run(&self, out: &mut dyn Write) -> Result<RunOutcome, ScriptError> {
        crate::runtime::driver::install_panic_hook();
        Ok(run(&self.compiled, &self.options, out)?)
    }

    /// Starts the script on a thread of its own; returns once every probe is attached and
    /// armed (BEGIN has run), or with the error that stopped it.
    pub fn attach(self) -> Result<Session, ScriptError> {
        crate::runtime::driver::install_panic_hook();
        let stop = StopHandle::new().map_err(|e| ScriptError::Thread(e.to_string()))?;
        let (tx, rx) = mpsc::channel();
        let mut options = self.options.clone();
        options.stop = Some(stop.clone());
        options.on_armed = Some(tx);
        let output = Arc::new(Mutex::new(Vec::new()));
        let mut writer = SharedWriter(output.clone());
        let compiled = self.compiled;
        let thread = std::thread::Builder::new()
            .name("strobe-run".into())
            .spawn(move || run(&compiled, &options, &mut writer))
            .map_err(|e| ScriptError::Thread(e.to_string()))?;
        let mut session = Session {
            thread: Some(thread),
            output,
            read: 0,
            stop,
            attached: 0,
            ended: None,
        };
        match rx.recv() {
            Ok(n) => {
                session.attached = n;
                Ok(session)
            }
            // The run ended before arming (an error, or `exit()` in BEGIN).
            Err(_) => {
                let outcome = session.join()?;
                session.attached = outcome.attached;
                session.ended = Some(outcome);
                Ok(session)
            }
        }
    }
}

/// A running script ([`Script::attach`]).
#[derive(Debug)]
pub struct Session {
    thread: Option<JoinHandle<Result<RunOutcome, RunError>>>,
    output: Arc<Mutex<Vec<u8>>>,
    /// How much of `output` [`Session::read_output`] already returned.
    read: usize,
    stop: StopHandle,
    attached: usize,
    /// The outcome of a run that ended before it was armed (`exit()` in BEGIN).
    ended: Option<RunOutcome>,
}

impl Session {
    /// Probes attached (as `Attached N probes` counts them).
    pub fn attached(&self) -> usize {
        self.attached
    }

    /// The output produced since the last call (printf lines, `print()`…; maps come at stop).
    pub fn read_output(&mut self) -> Vec<u8> {
        let all = self.output.lock().unwrap_or_else(|p| p.into_inner());
        let new = all[self.read.min(all.len())..].to_vec();
        self.read = all.len();
        new
    }

    /// Copies the new output to `w` (see [`Session::read_output`]); returns the byte count.
    pub fn write_output_to(&mut self, w: &mut dyn Write) -> std::io::Result<usize> {
        let new = self.read_output();
        w.write_all(&new)?;
        Ok(new.len())
    }

    /// Whether the script ended by itself (`exit()`, the command exited, a signal).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().map_or(true, JoinHandle::is_finished)
    }

    /// Ends the run as Ctrl-C would (END runs, maps are read), detaches everything and
    /// returns the outcome with the whole output.
    pub fn stop(mut self) -> Result<Finished, ScriptError> {
        self.stop.stop();
        self.finish()
    }

    /// Waits until the script ends by itself.
    pub fn wait(mut self) -> Result<Finished, ScriptError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<Finished, ScriptError> {
        let outcome = self.join()?;
        let output = std::mem::take(&mut *self.output.lock().unwrap_or_else(|p| p.into_inner()));
        Ok(Finished { outcome, output })
    }

    fn join(&mut self) -> Result<RunOutcome, ScriptError> {
        let Some(t) = self.thread.take() else {
            return self
                .ended
                .take()
                .ok_or_else(|| ScriptError::Thread("has already been joined".into()));
        };
        match t.join() {
            Ok(r) => Ok(r?),
            Err(_) => Err(ScriptError::Thread("panicked".into())),
        }
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.stop.stop();
            let _ = t.join();
        }
    }
}

/// What a stopped or finished [`Session`] produced.
#[derive(Debug, Clone)]
pub struct Finished {
    /// Why it ended, and the final non-empty script maps (`outcome.maps`, also printed at
    /// the end of `output`).
    pub outcome: RunOutcome,
    /// Everything the script printed, in bpftrace's format.
    pub output: Vec<u8>,
}

struct SharedWriter(Arc<Mutex<Vec<u8>>>);

impl Write for SharedWriter {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
