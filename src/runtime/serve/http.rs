//! A small HTTP/1.1 server on std's `TcpListener`, for `GET /metrics`.
//!
//! One accept thread; each connection gets its own short-lived thread, at most
//! [`MAX_CONNECTIONS`] at a time (more are answered `503` at once and closed). A connection
//! carries one request (`Connection: close`): the request head must arrive within
//! [`READ_DEADLINE`] and fit in [`MAX_HEAD`] bytes, and the answer must be taken within
//! [`WRITE_DEADLINE`], so slow or vanished clients cost one thread for a bounded time and
//! never touch the event loop, which runs on another thread.
//! Input: a listener and a handler from path to [`Response`]. Output: a [`Server`] whose drop
//! stops accepting (handler threads finish their request or time out).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 8;
/// The whole request head must arrive within this.
pub const READ_DEADLINE: Duration = Duration::from_secs(10);
/// The whole answer must be taken within this.
pub const WRITE_DEADLINE: Duration = Duration::from_secs(30);
/// Largest request head read.
pub const MAX_HEAD: usize = 16 << 10;

/// An answer.
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    pub fn text(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into(),
        }
    }
}

pub type Handler = dyn Fn(&str) -> Response + Send + Sync;

/// The running server; dropping it stops the accept thread.
pub struct Server {
    stop: Arc<AtomicBool>,
    listener: Arc<TcpListener>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// Starts accepting on `listener`.
    pub fn spawn(listener: TcpListener, handler: Arc<Handler>) -> std::io::Result<Server> {
        let stop = Arc::new(AtomicBool::new(false));
        let listener = Arc::new(listener);
        let (l, s) = (listener.clone(), stop.clone());
        let thread = std::thread::Builder::new()
            .name("strobe-serve".into())
            .spawn(move || accept_loop(&l, &s, handler))?;
        Ok(Server {
            stop,
            listener,
            thread: Some(thread),
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the blocked accept(): it fails with EINVAL on a shut-down socket.
        // SAFETY: shutdown on a socket this struct keeps open.
        unsafe { libc::shutdown(self.listener.as_raw_fd(), libc::SHUT_RDWR) };
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, stop: &AtomicBool, handler: Arc<Handler>) {
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        let conn = listener.accept();
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok((stream, _)) = conn else {
            // EMFILE and the like: back off instead of spinning.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            active.fetch_sub(1, Ordering::SeqCst);
            let r = Response::text(503, "too many concurrent requests\n");
            let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
            let _ = write_response(&stream, &r, false, Instant::now() + Duration::from_secs(1));
            continue;
        }
        let (h, a) = (handler.clone(), active.clone());
        let spawned = std::thread::Builder::new()
            .name("strobe-http".into())
            .spawn(move || {
                serve_one(stream, &*h);
                a.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// The request line's method and path, once the head is complete; `Err` with a status for
/// a request that cannot be answered.
pub fn parse_head(head: &[u8]) -> Result<(String, String), u16> {
    let text = std::str::from_utf8(head).map_err(|_| 400u16)?;
    let line = text.lines().next().unwrap_or("");
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(400);
    };
    if !version.starts_with("HTTP/1.") || parts.next().is_some() {
        return Err(400);
    }
    let path = target.split('?').next().unwrap_or("");
    Ok((method.to_string(), path.to_string()))
}

fn serve_one(mut stream: TcpStream, handler: &Handler) {
    let start = Instant::now();
    let _ = stream.set_nodelay(true);
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    let complete = loop {
        if let Some(end) = find_head_end(&head) {
            head.truncate(end);
            break true;
        }
        let left = READ_DEADLINE.saturating_sub(start.elapsed());
        if left.is_zero() || head.len() > MAX_HEAD {
            break false;
        }
        let _ = stream.set_read_timeout(Some(left.max(Duration::from_millis(1))));
        match stream.read(&mut chunk) {
            Ok(0) | Err(_) => break false,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
        }
    };
    let deadline = Instant::now() + WRITE_DEADLINE;
    if !complete {
        let status = if head.len() > MAX_HEAD { 431 } else { 408 };
        let _ = write_response(
            &stream,
            &Response::text(status, "bad request\n"),
            false,
            deadline,
        );
        return;
    }
    let (method, path) = match parse_head(&head) {
        Ok(r) => r,
        Err(status) => {
            let _ = write_response(
                &stream,
                &Response::text(status, "bad request\n"),
                false,
                deadline,
            );
            return;
        }
    };
    let r = match method.as_str() {
        "GET" | "HEAD" => handler(&path),
        _ => Response::text(405, "only GET and HEAD\n"),
    };
    let _ = write_response(&stream, &r, method == "HEAD", deadline);
    let _ = stream.shutdown(std::net::Shutdown::Both);
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|p| p + 4)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// Writes the whole response or gives up at `deadline`.
fn write_response(
    mut stream: &TcpStream,
    r: &Response,
    head_only: bool,
    deadline: Instant,
) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        r.status,
        reason(r.status),
        r.content_type,
        r.body.len()
    );
    if r.status == 405 {
        head.push_str("Allow: GET, HEAD\r\n");
    }
    head.push_str("\r\n");
    let body: &[u8] = if head_only { &[] } else { &r.body };
    for piece in std::iter::once(head.as_bytes()).chain(body.chunks(64 << 10)) {
        let mut piece = piece;
        while !piece.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(std::io::ErrorKind::TimedOut.into());
            }
            stream.set_write_timeout(Some(left))?;
            let n = stream.write(piece)?;
            if n == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            piece = &piece[n..];
        }
    }
    stream.flush()
}
