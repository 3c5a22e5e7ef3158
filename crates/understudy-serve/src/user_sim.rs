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

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use understudy::plugin::{self, stderr_suffix, RunError};

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
        let mut input = input;
        input.push(b'\n');
        let out = plugin::run(
            &self.program,
            &self.args,
            input,
            self.timeout,
            MAX_OUTPUT,
            MAX_STDERR,
        )
        .map_err(|e| match e {
            RunError::Start(e) => format!("cannot start `{}`: {e}", self.program),
            RunError::Wait(e) => format!("waiting for `{}`: {e}", self.program),
            RunError::TimedOut => format!(
                "`{}` gave no reply within {:.1}s (--user-sim-timeout)",
                self.program,
                self.timeout.as_secs_f64()
            ),
            RunError::Failed { status, stderr } => format!(
                "`{}` failed ({status}){}",
                self.program,
                stderr_suffix(&stderr)
            ),
        })?;
        parse_reply(&out).map_err(|e| format!("`{}` {e}", self.program))
    }
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
