//! The process's main thread as a place to run work. strobe runs a script on a worker thread
//! with a large stack ([`serve_while`]); the main thread meanwhile waits for jobs, and
//! [`on_main`] hands it one. BEGIN and END run there, so they see what bpftrace's do (it runs
//! them in its main thread): `tid` is the process's pid and `curtask` is the main task, the
//! two agreeing. Without [`serve_while`] (the library API, tests) jobs run where they are
//! asked for.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

/// Where [`on_main`] sends jobs while [`serve_while`] runs.
static JOBS: OnceLock<Mutex<Option<Sender<Job>>>> = OnceLock::new();

fn jobs() -> &'static Mutex<Option<Sender<Job>>> {
    JOBS.get_or_init(|| Mutex::new(None))
}

/// Closes the job channel when the worker ends, normally or by unwinding, so that
/// [`serve_while`] stops waiting.
struct CloseOnDrop;

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if let Ok(mut tx) = jobs().lock() {
            tx.take();
        }
    }
}

/// Runs `work` on a new thread with `stack` bytes of stack while this thread runs the jobs
/// handed to it through [`on_main`]. Returns what `work` returned, `None` if the thread could
/// not start or panicked.
pub fn serve_while<T: Send + 'static>(
    stack: usize,
    work: impl FnOnce() -> T + Send + 'static,
) -> Option<T> {
    let (tx, rx) = channel::<Job>();
    *jobs().lock().ok()? = Some(tx);
    let worker = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let _close = CloseOnDrop;
            work()
        });
    let Ok(worker) = worker else {
        drop(CloseOnDrop);
        return None;
    };
    for job in rx {
        job();
    }
    worker.join().ok()
}

/// Runs `f` on the main thread while [`serve_while`] serves it, here otherwise; returns its
/// result.
pub fn on_main<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    let tx = jobs().lock().ok().and_then(|tx| tx.clone());
    let Some(tx) = tx else { return f() };
    let (result_tx, result_rx) = channel();
    let job: Job = Box::new(move || {
        let _ = result_tx.send(f());
    });
    if let Err(unsent) = tx.send(job) {
        // The main thread stopped serving: run the job here.
        (unsent.0)();
    }
    result_rx
        .recv()
        .expect("internal error: a job on the main thread ended without a result")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tid() -> i64 {
        // SAFETY: gettid has no preconditions.
        unsafe { libc::syscall(libc::SYS_gettid) }
    }

    // One test: the job channel is process-wide, so two tests serving at once would race.
    #[test]
    fn jobs_run_on_the_serving_thread_and_nowhere_else_without_it() {
        let here = tid();
        // Not served: the job runs on the asking thread.
        assert_eq!(on_main(tid), here);
        let worker_and_job = serve_while(1 << 20, || (tid(), on_main(tid))).unwrap();
        assert_ne!(worker_and_job.0, here, "work runs on its own thread");
        assert_eq!(worker_and_job.1, here, "the job runs on the serving thread");
        // Served no longer: back to running where asked.
        assert_eq!(on_main(tid), here);
        // A panicking worker ends the serving too.
        assert!(serve_while(1 << 20, || -> u8 { panic!("boom") }).is_none());
        assert_eq!(on_main(tid), here);
    }
}
