//! The customer's side of the conversation once a task's scripted replies
//! run out: an external command (`--user-sim "CMD ARGS"`), typically a
//! language model playing the customer from the task's facts.
//!
//! Protocol, one process per message: the request is written to the
//! command's standard input as one JSON object,
//! `{world, task, instruction, facts, conversation: [{role, content}], message}`,
//! and the command prints `{"reply": "..."}` on standard output and exits 0.
//! Anything else, or no answer within the timeout, is a failure: the step
//! is refused (`user_sim_failed`) and nothing is recorded, because an
//! empty reply recorded as the customer's would corrupt the trajectory.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::Value;

/// At most this much of the command's output is read.
const MAX_OUTPUT: u64 = 1 << 20;
/// At most this much of its standard error is kept for messages.
const MAX_STDERR: u64 = 4 << 10;

/// One turn of the conversation so far.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Turn {
    /// `customer` or `agent`.
    pub role: &'static str,
    pub content: String,
}

/// What the simulator is asked.
#[derive(Debug, Clone, Serialize)]
pub struct UserSimRequest<'a> {
    pub world: &'a str,
    pub task: &'a str,
    pub instruction: &'a str,
    pub facts: &'a [String],
    /// Customer and agent turns so far, opening message first; tool calls
    /// are not shown, as the customer never sees them.
    pub conversation: Vec<Turn>,
    /// The agent's message being answered.
    pub message: &'a str,
}

/// Answers a message on the customer's behalf.
pub trait UserSimulator: Send + Sync {
    fn reply(&self, request: &UserSimRequest<'_>) -> Result<String, String>;
}

/// Runs an external command per message.
#[derive(Debug, Clone)]
pub struct CommandSimulator {
    program: String,
    args: Vec<String>,
    timeout: Duration,
}

impl CommandSimulator {
    /// `command_line` is split into words like a shell would (quotes and
    /// backslashes), but no shell runs it.
    pub fn new(command_line: &str, timeout: Duration) -> Result<CommandSimulator, String> {
        let mut words = split_words(command_line)?;
        if words.is_empty() {
            return Err("the user simulator command is empty".into());
        }
        let program = words.remove(0);
        Ok(CommandSimulator {
            program,
            args: words,
            timeout,
        })
    }
}

impl UserSimulator for CommandSimulator {
    fn reply(&self, request: &UserSimRequest<'_>) -> Result<String, String> {
        let input = serde_json::to_vec(request).map_err(|e| e.to_string())?;
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start `{}`: {e}", self.program))?;
        // Feed and drain on threads: a command that answers before reading
        // all its input, or writes a lot, must not deadlock us.
        let stdin = child.stdin.take();
        std::thread::spawn(move || {
            if let Some(mut s) = stdin {
                let _ = s.write_all(&input).and_then(|_| s.write_all(b"\n"));
            }
        });
        // Output is collected through channels rather than by joining the
        // readers: a grandchild that inherited the pipes may hold them open
        // after the command itself is gone.
        let stdout = child.stdout.take();
        let (out_tx, out_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = out_tx.send(read_bounded(stdout, MAX_OUTPUT));
        });
        let stderr = child.stderr.take();
        let (err_tx, err_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = err_tx.send(read_bounded(stderr, MAX_STDERR));
        });
        let deadline = Instant::now() + self.timeout;
        let too_slow = || {
            format!(
                "`{}` gave no reply within {:.1}s (--user-sim-timeout)",
                self.program,
                self.timeout.as_secs_f64()
            )
        };
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if Instant::now() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(too_slow());
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => break Err(format!("waiting for `{}`: {e}", self.program)),
            }
        };
        let status = status?;
        let grace = deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(100));
        let out = out_rx.recv_timeout(grace).map_err(|_| too_slow())?;
        let err = err_rx
            .recv_timeout(Duration::from_millis(100))
            .unwrap_or_default();
        let err_text = String::from_utf8_lossy(&err).trim().to_string();
        if !status.success() {
            return Err(format!(
                "`{}` failed ({status}){}",
                self.program,
                if err_text.is_empty() {
                    String::new()
                } else {
                    format!(": {err_text}")
                }
            ));
        }
        parse_reply(&out).map_err(|e| format!("`{}` {e}", self.program))
    }
}

fn read_bounded<R: Read>(source: Option<R>, limit: u64) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(s) = source {
        let _ = s.take(limit).read_to_end(&mut buf);
    }
    buf
}

/// Reads `{"reply": "..."}` from the command's output.
fn parse_reply(out: &[u8]) -> Result<String, String> {
    let text = String::from_utf8_lossy(out);
    let value: Value = serde_json::from_str(text.trim()).map_err(|e| {
        format!("must print one JSON object {{\"reply\": \"...\"}}; its output is not JSON ({e})")
    })?;
    match value.get("reply") {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "printed a `reply` that is not text: {}",
            super::protocol::kind_of(other)
        )),
        None => Err("printed JSON without a `reply` field".into()),
    }
}

/// Splits a command line into words: whitespace separates, single quotes
/// keep everything literally, double quotes keep spaces and allow `\"`
/// and `\\`, and a backslash outside quotes escapes the next character.
pub fn split_words(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => word.push(c),
                        None => return Err("unclosed single quote in the command".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => word.push(c),
                            Some(c) => {
                                word.push('\\');
                                word.push(c);
                            }
                            None => return Err("unclosed double quote in the command".into()),
                        },
                        Some(c) => word.push(c),
                        None => return Err("unclosed double quote in the command".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                match chars.next() {
                    Some(c) => word.push(c),
                    None => return Err("the command ends with a lone backslash".into()),
                }
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    Ok(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_a_shell() {
        assert_eq!(
            split_words(r#"python3 sim.py --model "gpt 4" 'a b' c\ d """#).unwrap(),
            vec!["python3", "sim.py", "--model", "gpt 4", "a b", "c d", ""]
        );
        assert!(split_words("sh -c 'oops").is_err());
        assert!(split_words("").unwrap().is_empty());
    }

    #[test]
    fn reads_the_reply_field() {
        assert_eq!(parse_reply(b" {\"reply\": \"ok\"}\n").unwrap(), "ok");
        assert!(parse_reply(b"hello").unwrap_err().contains("not JSON"));
        assert!(parse_reply(b"{\"text\": 1}")
            .unwrap_err()
            .contains("`reply`"));
        assert!(parse_reply(b"{\"reply\": 1}")
            .unwrap_err()
            .contains("not text"));
    }
}
