//! Running an external plug-in command (rubric judge, user simulator): JSON
//! on stdin, JSON on stdout, under a time limit.
//!
//! Both plug-ins need the same care, so it lives here once: stdin is fed
//! and stdout/stderr drained on their own threads (a command that answers
//! before reading all its input must not deadlock us), output is bounded,
//! and output is collected through channels rather than by joining the
//! readers, because a grandchild that inherited the pipes may hold them
//! open after the command itself is gone.
//!
//! **Key decision: a plug-in is a process group, not a process.** The
//! command runs as the leader of its own group (Unix). When it times out,
//! the whole group is killed, so a command that forked leaves nothing
//! running. When it exits, whatever it left behind in its group is killed
//! too: a background child that still holds standard output would
//! otherwise keep the pipe open, and an answer already written would be
//! taken for no answer. (Something that detaches into a new session on
//! purpose, with `setsid`, is beyond reach, as it is for a shell.)

use std::io::{Read, Write};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Why a run produced no usable output.
#[derive(Debug)]
pub enum RunError {
    /// The command could not be started (not found, not executable).
    Start(std::io::Error),
    /// Waiting for the command or reading its pipes failed.
    Wait(std::io::Error),
    /// The time limit passed; the command was killed.
    TimedOut,
    /// The command exited unsuccessfully; its (bounded) stderr, trimmed.
    Failed {
        /// How the command exited.
        status: ExitStatus,
        /// The start of what it wrote to stderr, for the error message.
        stderr: String,
    },
}

/// Runs `program args`, writes `input` to its stdin and returns its stdout
/// (at most `max_output` bytes). Any `timeout` is accepted: one too long
/// to represent means no limit.
pub fn run(
    program: &str,
    args: &[String],
    input: Vec<u8>,
    timeout: Duration,
    max_output: u64,
    max_stderr: u64,
) -> Result<Vec<u8>, RunError> {
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    group::isolate(&mut command);
    let mut child = command.spawn().map_err(RunError::Start)?;
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
    let deadline = Instant::now().checked_add(timeout);
    let timed_out = |now: Instant| deadline.is_some_and(|d| now >= d);
    loop {
        match group::has_exited(&mut child) {
            Ok(true) => break,
            Ok(false) if timed_out(Instant::now()) => {
                group::kill(&mut child);
                let _ = child.wait();
                return Err(RunError::TimedOut);
            }
            Ok(false) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => {
                group::kill(&mut child);
                let _ = child.wait();
                return Err(RunError::Wait(e));
            }
        }
    }
    // The command is done (not yet reaped, so its group id is still its
    // own): end what it left running, so the pipes close.
    group::kill(&mut child);
    let status = child.wait().map_err(RunError::Wait)?;
    let grace = deadline
        .map(|d| d.saturating_duration_since(Instant::now()))
        .unwrap_or(Duration::MAX)
        .clamp(Duration::from_millis(100), Duration::from_secs(5));
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

/// The command's process group: where it is made, watched and killed.
#[cfg(unix)]
mod group {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};

    /// The command leads a new process group (its id is the command's pid).
    pub fn isolate(command: &mut Command) {
        command.process_group(0);
    }

    /// Whether the command exited, without reaping it: until it is reaped
    /// its pid cannot be reused, so its group can still be killed safely.
    pub fn has_exited(child: &mut Child) -> std::io::Result<bool> {
        use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
        // WNOWAIT leaves the child waitable for `Child::wait`.
        let status = waitid(
            WaitId::Pid(Pid::from_child(child)),
            WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT,
        )?;
        Ok(status.is_some())
    }

    /// SIGKILL to every process of the group, leader included. The group
    /// is ours: its leader is not reaped yet (see `has_exited`).
    pub fn kill(child: &mut Child) {
        use rustix::process::{kill_process_group, Pid, Signal};
        if kill_process_group(Pid::from_child(child), Signal::KILL).is_err() {
            let _ = child.kill();
        }
    }
}

/// Elsewhere only the command itself can be watched and killed.
#[cfg(not(unix))]
mod group {
    use std::process::{Child, Command};

    pub fn isolate(_command: &mut Command) {}

    pub fn has_exited(child: &mut Child) -> std::io::Result<bool> {
        child.try_wait().map(|s| s.is_some())
    }

    pub fn kill(child: &mut Child) {
        let _ = child.kill();
    }
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
