//! Running an external plug-in command (rubric judge, user simulator): JSON
//! on stdin, JSON on stdout, under a time limit.
//!
//! Both plug-ins need the same care, so it lives here once: stdin is fed
//! and stdout/stderr drained on their own threads (a command that answers
//! before reading all its input must not deadlock us), output is bounded,
//! and output is collected through channels rather than by joining the
//! readers, because a grandchild that inherited the pipes may hold them
//! open after the command itself is gone.

use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Why a run produced no usable output.
#[derive(Debug)]
pub enum RunError {
    Start(std::io::Error),
    Wait(std::io::Error),
    /// The time limit passed; the command was killed.
    TimedOut,
    /// The command exited unsuccessfully; its (bounded) stderr, trimmed.
    Failed {
        status: ExitStatus,
        stderr: String,
    },
}

/// Runs `program args`, writes `input` to its stdin and returns its stdout
/// (at most `max_output` bytes).
pub fn run(
    program: &str,
    args: &[String],
    input: Vec<u8>,
    timeout: Duration,
    max_output: u64,
    max_stderr: u64,
) -> Result<Vec<u8>, RunError> {
    let mut child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(RunError::Start)?;
    let stdin = child.stdin.take();
    std::thread::spawn(move || {
        if let Some(mut s) = stdin {
            // A command may exit without reading everything; that is its call.
            let _ = s.write_all(&input);
        }
    });
    let stdout = child.stdout.take();
    let (out_tx, out_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = out_tx.send(read_bounded(stdout, max_output));
    });
    let stderr = child.stderr.take();
    let (err_tx, err_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = err_tx.send(read_bounded(stderr, max_stderr));
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RunError::TimedOut);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Err(RunError::Wait(e)),
        }
    };
    let grace = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(100));
    let out = out_rx.recv_timeout(grace).map_err(|_| RunError::TimedOut)?;
    let err = err_rx
        .recv_timeout(Duration::from_millis(100))
        .unwrap_or_default();
    if !status.success() {
        return Err(RunError::Failed {
            status,
            stderr: String::from_utf8_lossy(&err).trim().to_string(),
        });
    }
    Ok(out)
}

fn read_bounded<R: Read>(source: Option<R>, limit: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(s) = source {
        let _ = s.take(limit).read_to_end(&mut buf);
    }
    buf
}

/// `: <stderr>` when there is something to show, else nothing.
pub fn stderr_suffix(stderr: &str) -> String {
    if stderr.is_empty() {
        String::new()
    } else {
        format!(": {stderr}")
    }
}
