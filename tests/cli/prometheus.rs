//! `strobe --serve` against the real thing: a real Prometheus server (Debian's `prometheus`
//! package, installed by scripts/setup) scrapes strobe running a tracepoint script under a
//! known workload; the values Prometheus stores, read back through its HTTP API, must be the
//! ones the workload implies. `promtool check metrics` validates the exposition. Idle and
//! stalled clients stay connected throughout, so the scrapes and the events they count are
//! shown not to wait for them. Skipped loudly without CAP_BPF or without the `prometheus`
//! binary.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::runtime_support;
use runtime_support::have_bpf;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

fn find_binary(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// GET `path` from 127.0.0.1:`port`: (status, body), or None when nothing answers.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).ok()?;
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n")?;
    let status = head.split(' ').nth(1)?.parse().ok()?;
    Some((status, body.to_string()))
}

fn url_encode(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b == b'_' {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// The value of the single series `query` returns from Prometheus, if it has one.
fn prom_value(port: u16, query: &str) -> Option<String> {
    let (status, body) = http_get(port, &format!("/api/v1/query?query={}", url_encode(query)))?;
    if status != 200 {
        return None;
    }
    let at = body.find("\"value\":[")?;
    let rest = &body[at..];
    let q = rest.find(",\"")? + 2;
    let end = rest[q..].find('"')?;
    Some(rest[q..q + end].to_string())
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_until<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not after {secs} s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn prometheus_scrapes_counter_and_histogram_the_workload_implies() {
    if !have_bpf("prometheus_scrapes_counter_and_histogram_the_workload_implies") {
        return;
    }
    let (Some(prometheus), Some(promtool)) = (find_binary("prometheus"), find_binary("promtool"))
    else {
        strobe_testkit::skip(
            "prometheus_scrapes_counter_and_histogram_the_workload_implies",
            "no `prometheus`/`promtool` binary (Debian package prometheus; scripts/setup installs it)",
        );
        return;
    };
    let dir = std::env::temp_dir().join(format!("strobe-prom-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // The workload: OPENS creations of a file no other program opens, with mode 0640 (416:
    // log2 bucket [256, 512), le="511").
    const OPENS: usize = 5;
    let target = dir.join("unique-workload-file");
    let script = format!(
        "tracepoint:syscalls:sys_enter_openat /str(args->filename) == \"{}\"/ {{ \
         @opens = count(); @mode = hist(args->mode); @bymode[args->mode] = count(); }}",
        target.display()
    );
    let serve_port = free_port();
    let strobe = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .arg(format!("--serve=127.0.0.1:{serve_port}"))
        .args(["--serve-labels", "@bymode=mode", "-e", &script])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strobe starts");
    let mut strobe = Killed(strobe);
    let first = wait_until(30, "strobe serves /metrics", || {
        http_get(serve_port, "/metrics").filter(|(s, _)| *s == 200)
    });
    assert!(
        first
            .1
            .contains("strobe_probe_attached{probe=\"tracepoint:syscalls:sys_enter_openat\"} 1"),
        "{}",
        first.1
    );

    // Clients that connect and never send, or send half a request, or never read.
    let idle: Vec<TcpStream> = (0..3)
        .map(|_| TcpStream::connect(("127.0.0.1", serve_port)).unwrap())
        .collect();
    let mut half = TcpStream::connect(("127.0.0.1", serve_port)).unwrap();
    half.write_all(b"GET /metr").unwrap();
    let mut unread = TcpStream::connect(("127.0.0.1", serve_port)).unwrap();
    unread.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();

    use std::os::unix::fs::OpenOptionsExt;
    for _ in 0..OPENS {
        std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o640)
            .open(&target)
            .unwrap();
    }
    // strobe's own answer, while the stalled clients are connected.
    let started = Instant::now();
    let (status, metrics) = http_get(serve_port, "/metrics").expect("a scrape answers");
    assert_eq!(status, 200);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "a scrape waited for stalled clients"
    );
    assert!(
        metrics.contains(&format!("strobe_opens_total {OPENS}\n")),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!("strobe_bymode_total{{mode=\"416\"}} {OPENS}\n")),
        "{metrics}"
    );
    assert!(
        metrics.contains(&format!("strobe_mode_bucket{{le=\"511\"}} {OPENS}\n")),
        "{metrics}"
    );
    assert!(
        metrics.contains("strobe_mode_bucket{le=\"255\"} 0\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("strobe_lost_events_total 0\n"),
        "{metrics}"
    );
    let mut check = Command::new(&promtool)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    check
        .stdin
        .take()
        .unwrap()
        .write_all(metrics.as_bytes())
        .unwrap();
    let out = check.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}\n{metrics}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(http_get(serve_port, "/nothing").map(|r| r.0), Some(404));

    // The real server, scraping every 500 ms.
    let prom_port = free_port();
    let config = dir.join("prometheus.yml");
    std::fs::write(
        &config,
        format!(
            "global:\n  scrape_interval: 500ms\n  scrape_timeout: 400ms\nscrape_configs:\n  \
             - job_name: strobe\n    static_configs:\n      - targets: ['127.0.0.1:{serve_port}']\n"
        ),
    )
    .unwrap();
    let prom = Command::new(&prometheus)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!(
            "--storage.tsdb.path={}",
            dir.join("data").display()
        ))
        .arg(format!("--web.listen-address=127.0.0.1:{prom_port}"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus starts");
    let _prom = Killed(prom);
    let want = OPENS.to_string();
    for query in [
        "strobe_opens_total".to_string(),
        "strobe_mode_bucket{le=\"511\"}".to_string(),
        "strobe_mode_count".to_string(),
        "strobe_bymode_total{mode=\"416\"}".to_string(),
    ] {
        let got = wait_until(60, &format!("Prometheus has {query}"), || {
            prom_value(prom_port, &query)
        });
        assert_eq!(got, want, "{query}");
    }
    let below = wait_until(30, "Prometheus has le=255", || {
        prom_value(prom_port, "strobe_mode_bucket{le=\"255\"}")
    });
    assert_eq!(below, "0");
    assert_eq!(
        wait_until(30, "Prometheus has up", || prom_value(
            prom_port,
            "up{job=\"strobe\"}"
        )),
        "1"
    );
    drop((idle, half, unread));

    // SIGTERM ends the run cleanly, with END run and no map dump.
    // SAFETY: signalling the child this test started.
    unsafe { libc::kill(strobe.0.id() as i32, libc::SIGTERM) };
    let status = wait_until(20, "strobe exits on SIGTERM", || {
        strobe.0.try_wait().unwrap()
    });
    assert!(status.success(), "{status:?}");
    let mut stdout = String::new();
    strobe
        .0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(
        !stdout.contains("@opens"),
        "no map dump when serving: {stdout}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn serve_refuses_bad_setups_before_attaching() {
    if !have_bpf("serve_refuses_bad_setups_before_attaching") {
        return;
    }
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_strobe"))
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let prog = "tracepoint:syscalls:sys_enter_getppid { @n[cpu] = count(); }";
    let out = run(&[&format!("--serve=127.0.0.1:{port}"), "-e", prog]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot listen"),
        "{out:?}"
    );
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("Attached"),
        "{out:?}"
    );
    let free = free_port();
    let out = run(&[
        &format!("--serve={free}"),
        "--serve-labels",
        "@n=a,b",
        "-e",
        prog,
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("1 key field(s), 2 name(s)"),
        "{out:?}"
    );
    let out = run(&[
        &format!("--serve={free}"),
        "--serve-labels",
        "@nope=a",
        "-e",
        prog,
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("no map @nope"),
        "{out:?}"
    );
    // A map whose metric would be one of strobe's own.
    let clash = "tracepoint:syscalls:sys_enter_getppid { @lost_events = count(); }";
    let out = run(&[&format!("--serve={free}"), "-e", clash]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("collides"),
        "{out:?}"
    );
    // A probe that cannot attach: non-zero before serving.
    let out = run(&[
        &format!("--serve={free}"),
        "-e",
        "uprobe:/nonexistent/strobe-no-binary:f { @x = count(); }",
    ]);
    assert!(!out.status.success(), "{out:?}");
    drop(taken);
}

/// The `strobe_probe_up` samples of a scrape.
fn probe_up_lines(metrics: &str) -> Vec<&str> {
    metrics
        .lines()
        .filter(|l| l.starts_with("strobe_probe_up{"))
        .collect()
}

#[test]
fn a_probe_whose_binary_disappears_is_reported_lost() {
    if !have_bpf("a_probe_whose_binary_disappears_is_reported_lost") {
        return;
    }
    let libc = PathBuf::from("/lib/x86_64-linux-gnu/libc.so.6");
    if !libc.exists() {
        strobe_testkit::skip(
            "a_probe_whose_binary_disappears_is_reported_lost",
            "no /lib/x86_64-linux-gnu/libc.so.6 to copy",
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("strobe-prom-lost-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // A private copy no process maps: deleting it takes the uprobe's target away.
    let copy = dir.join("libc-copy.so");
    std::fs::copy(&libc, &copy).unwrap();
    let port = free_port();
    let prog = format!(
        "uprobe:{}:getenv {{ @n = count(); }} tracepoint:syscalls:sys_enter_getppid {{ @t = count(); }}",
        copy.display()
    );
    let child = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .arg(format!("--serve=127.0.0.1:{port}"))
        .args(["-e", &prog])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strobe starts");
    let _strobe = Killed(child);
    let (_, before) = wait_until(30, "strobe serves /metrics", || {
        http_get(port, "/metrics").filter(|(s, _)| *s == 200)
    });
    let up = probe_up_lines(&before);
    assert_eq!(up.len(), 2, "{before}");
    assert!(up.iter().all(|l| l.ends_with(" 1")), "{before}");
    std::fs::remove_file(&copy).unwrap();
    let (_, after) = http_get(port, "/metrics").expect("a scrape answers");
    let up = probe_up_lines(&after);
    let uprobe = up
        .iter()
        .find(|l| l.contains("uprobe:"))
        .expect("the uprobe's line");
    assert!(uprobe.ends_with(" 0"), "{after}");
    let tp = up
        .iter()
        .find(|l| l.contains("tracepoint:"))
        .expect("the tracepoint's line");
    assert!(tp.ends_with(" 1"), "{after}");
    let _ = std::fs::remove_dir_all(&dir);
}
