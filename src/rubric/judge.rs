//! Judged criteria: graded by a person in the app, or by an external judge
//! command an engineer plugs in.
//!
//! **Protocol.** The command gets one JSON object on stdin (the criterion,
//! the task, the policy, the transcript and the state diff) and must print
//! one JSON object on stdout: `{"met": true|false, "reason": "..."}`. A
//! criterion graded on a scale lists its levels in the request
//! (`criterion.scale`, each `{label, points}`), and the judge answers with
//! one of them: `{"level": "Clear but curt", "reason": "..."}`; the level
//! decides met, as for a person's grade, and a `met` that contradicts it
//! is refused. It has
//! a timeout; a command that times out, exits non-zero or prints anything
//! else is an error naming the criterion, and the criterion stays pending:
//! a judgment is never guessed.

use std::time::Duration;

use serde_json::{json, Value};

use super::criterion::Criterion;
use super::judgment::Judgment;
use crate::action::Action;
use crate::episode::Changes;
use crate::error::{Error, Result};
use crate::observation::Observation;
use crate::plugin::{stderr_suffix, RunError};
use crate::world::World;

/// An external judge program and its time limit.
#[derive(Debug, Clone)]
pub struct JudgeCommand {
    /// The program, started directly (never through a shell).
    pub program: String,
    /// Its arguments, as [`JudgeCommand::parse`] split them.
    pub args: Vec<String>,
    /// How long one judgment may take; more than 0. A judge still running then
    /// is killed with its process group, and the criterion stays pending.
    pub timeout: Duration,
}

impl JudgeCommand {
    /// Splits a command line on whitespace, honouring single and double
    /// quotes (no other shell syntax: the command is not run by a shell).
    pub fn parse(command_line: &str, timeout: Duration) -> Result<JudgeCommand> {
        let words =
            split_words(command_line).map_err(|e| Error::Other(format!("judge command: {e}")))?;
        let mut words = words.into_iter();
        let program = words
            .next()
            .ok_or_else(|| Error::Other("judge command: the command line is empty".into()))?;
        if timeout.is_zero() {
            return Err(Error::Other(
                "judge command: the timeout must be more than 0 seconds".into(),
            ));
        }
        Ok(JudgeCommand {
            program,
            args: words.collect(),
            timeout,
        })
    }

    fn label(&self) -> String {
        format!("command:{}", self.program)
    }

    /// Runs the judge on one criterion and returns its judgment, or an
    /// error that names the criterion and says what went wrong.
    pub fn judge(&self, criterion: &Criterion, request: &Value) -> Result<Judgment> {
        let fail =
            |what: String| Error::Other(format!("judge for criterion `{}`: {what}", criterion.id));
        let input = serde_json::to_vec(request)
            .map_err(|e| fail(format!("cannot encode the request: {e}")))?;
        let out = crate::plugin::run(
            &self.program,
            &self.args,
            input,
            self.timeout,
            1 << 20,
            1 << 16,
        )
        .map_err(|e| {
            fail(match e {
                RunError::Start(e) => format!("cannot start `{}`: {e}", self.program),
                RunError::Wait(e) => format!("waiting for `{}` failed: {e}", self.program),
                RunError::TimedOut => format!(
                    "`{}` did not answer within {} s and was stopped",
                    self.program,
                    self.timeout.as_secs_f64()
                ),
                RunError::Failed { status, stderr } => format!(
                    "`{}` exited with {status}{}",
                    self.program,
                    stderr_suffix(&stderr)
                ),
            })
        })?;
        let text = String::from_utf8_lossy(&out);
        let scale: Vec<&str> = criterion.scale().iter().map(|l| l.label.as_str()).collect();
        let verdict = parse_verdict(&text, &scale).map_err(fail)?;
        let mut judgment = Judgment {
            criterion_id: criterion.id.clone(),
            criterion_hash: Some(criterion.hash.clone()),
            met: verdict.met.unwrap_or(false),
            reason: verdict.reason,
            judge: self.label(),
            at: crate::store::now(),
            level: verdict.level,
        };
        if judgment.level.is_some() {
            let (met, _) = criterion.graded(&judgment).ok_or_else(|| {
                fail(
                    "the level it chose is not one of the scale's (a bug in the check above)"
                        .into(),
                )
            })?;
            if verdict.met.is_some_and(|m| m != met) {
                return Err(fail(format!(
                    "it answered \"met\": {} with the level \"{}\", which counts as {}",
                    !met,
                    judgment.level.as_deref().unwrap_or_default(),
                    if met { "met" } else { "not met" }
                )));
            }
            judgment.met = met;
        }
        Ok(judgment)
    }
}

/// What a judge printed, checked: `met` (given unless on a scale), the
/// scale's `level`, the reason.
#[derive(Debug, PartialEq)]
struct Verdict {
    met: Option<bool>,
    level: Option<String>,
    reason: String,
}

/// Reads `{"met": bool, "reason": "..."}`, or on a scale (`scale`, the
/// levels' labels) `{"level": "<one of them>", "reason": "..."}`, or says
/// what was printed instead.
fn parse_verdict(text: &str, scale: &[&str]) -> std::result::Result<Verdict, String> {
    let shown = super::matchers::shorten(text.trim(), 200);
    let expected = if scale.is_empty() {
        r#"expected one JSON object {"met": true|false, "reason": "..."} on stdout"#.to_string()
    } else {
        format!(
            r#"expected one JSON object {{"level": "...", "reason": "..."}} on stdout, the level one of {}"#,
            quoted(scale)
        )
    };
    let value: Value =
        serde_json::from_str(text.trim()).map_err(|_| format!("{expected}, got {shown:?}"))?;
    let obj = value
        .as_object()
        .ok_or_else(|| format!("{expected}, got {shown:?}"))?;
    let met = match obj.get("met") {
        None if !scale.is_empty() => None,
        Some(Value::Bool(b)) => Some(*b),
        _ => {
            return Err(format!(
                "{expected}; `met` is missing or not true/false in {shown:?}"
            ))
        }
    };
    let level = match (obj.get("level"), scale.is_empty()) {
        (None, true) => None,
        (Some(_), true) => {
            return Err(format!(
                "{expected}; it gave a `level`, but this criterion is graded met or not met, without a scale"
            ))
        }
        (Some(Value::String(l)), false) if scale.contains(&l.trim()) => Some(l.trim().to_string()),
        (given, false) => {
            let given = given.map_or("nothing".to_string(), |g| g.to_string());
            return Err(format!(
                "{expected}; `level` must be one of {}, got {given}",
                quoted(scale)
            ));
        }
    };
    let reason = obj
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .ok_or_else(|| format!("{expected}; `reason` is missing or empty in {shown:?}"))?;
    Ok(Verdict {
        met,
        level,
        reason: reason.to_string(),
    })
}

/// `"A", "B", "C"`.
fn quoted(labels: &[&str]) -> String {
    labels
        .iter()
        .map(|l| format!("\"{l}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn split_words(line: &str) -> std::result::Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                in_word = true;
            }
            None if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            None => {
                cur.push(c);
                in_word = true;
            }
        }
    }
    if quote.is_some() {
        return Err("a quote is not closed".into());
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// What a judge reads: the criterion, the task and policy, every step and
/// what the world answered, and the state diff.
pub fn request(
    world: &World,
    task_id: &str,
    criterion: &Criterion,
    actions: &[Action],
    observations: &[Observation],
    changes: &Changes,
) -> Value {
    let task = world.task(task_id);
    let guidance = criterion.guidance();
    let transcript: Vec<Value> = actions
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let obs = observations.get(i);
            json!({
                "step": i,
                "action": a.to_json(),
                "observation": obs.map(|o| json!({"ok": o.ok, "text": o.text})),
            })
        })
        .collect();
    let messages: Vec<&str> = actions
        .iter()
        .filter_map(|a| match a {
            Action::Message { message } => Some(message.as_str()),
            Action::Tool { .. } => None,
        })
        .collect();
    json!({
        "criterion": {
            "id": criterion.id,
            "description": criterion.description,
            "guidance": guidance,
            "points": criterion.points,
            "scale": criterion.scale(),
        },
        "task": {
            "id": task_id,
            "title": task.map(|t| t.title.clone()),
            "instruction": task.map(|t| t.instruction.clone()),
            "opening_message": task.map(|t| t.opening_message.clone()),
            "outputs": task.map(|t| t.outputs.clone()),
        },
        "world": {"id": world.meta.id, "version": world.meta.version},
        "policy": world.policy,
        "transcript": transcript,
        "messages": messages,
        "changes": changes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_lines_split_like_a_shell_would() {
        assert_eq!(
            split_words("python3 -c 'print(1 + 1)'").unwrap(),
            vec!["python3", "-c", "print(1 + 1)"]
        );
        assert_eq!(split_words(r#"a "b c" d"#).unwrap(), vec!["a", "b c", "d"]);
        assert!(split_words("a 'b").is_err());
    }

    #[test]
    fn verdicts_must_have_the_documented_shape() {
        let plain = |t: &str| parse_verdict(t, &[]);
        assert_eq!(
            plain(r#" {"met": true, "reason": "polite"} "#).unwrap(),
            Verdict {
                met: Some(true),
                level: None,
                reason: "polite".into()
            }
        );
        assert!(plain("yes")
            .unwrap_err()
            .contains("expected one JSON object"));
        assert!(plain(r#"{"met": "yes", "reason": "x"}"#)
            .unwrap_err()
            .contains("`met`"));
        assert!(plain(r#"{"reason": "x"}"#).unwrap_err().contains("`met`"));
        assert!(plain(r#"{"met": false}"#).unwrap_err().contains("`reason`"));
        assert!(plain(r#"[1]"#).is_err());
        let stray = plain(r#"{"met": true, "level": "Warm", "reason": "x"}"#).unwrap_err();
        assert!(stray.contains("without a scale"), "{stray}");
    }

    #[test]
    fn on_a_scale_the_judge_names_one_of_its_levels() {
        let scale = ["Warm", "Curt", "Rude"];
        let on_scale = |t: &str| parse_verdict(t, &scale);
        assert_eq!(
            on_scale(r#"{"level": " Curt ", "reason": "short"}"#).unwrap(),
            Verdict {
                met: None,
                level: Some("Curt".into()),
                reason: "short".into()
            }
        );
        let missing = on_scale(r#"{"met": true, "reason": "x"}"#).unwrap_err();
        assert!(
            missing.contains(r#"`level` must be one of "Warm", "Curt", "Rude", got nothing"#),
            "{missing}"
        );
        let unknown = on_scale(r#"{"level": "Superb", "reason": "x"}"#).unwrap_err();
        assert!(unknown.contains(r#"got "Superb""#), "{unknown}");
        assert!(on_scale(r#"{"level": 2, "reason": "x"}"#).is_err());
        let met_too = on_scale(r#"{"level": "Warm", "met": true, "reason": "x"}"#).unwrap();
        assert_eq!(met_too.met, Some(true), "a met beside the level is read");
    }
}
