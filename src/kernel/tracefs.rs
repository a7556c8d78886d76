//! Tracefs: tracepoint ids and formats (in progress).
