//! The customer's answer to a message: what the message asks for, from the
//! task's [`Answer`]s.
//!
//! A customer who replies with the next line of a script whatever was
//! written ("Yes, please go ahead" to a message that asked nothing) teaches
//! nothing and lets a trajectory look right when it is not. Here the reply
//! depends on the message, deterministically: the same message gets the
//! same answer on every machine, so replay reproduces it byte for byte.

use crate::world::{Answer, Task};

/// What the customer says when a message asks for nothing they know and
/// the task names no other reply.
pub const UNANSWERED: &str = "Sorry, what do you need from me?";

/// The answers `message` asks for, in the order the task lists them,
/// joined by a space; `None` when it asks for none.
pub(super) fn answer(task: &Task, message: &str) -> Option<String> {
    if task.answers.is_empty() {
        return None;
    }
    let text = normalize(message);
    let said: Vec<&str> = task
        .answers
        .iter()
        .filter(|a| asks_for(&text, a))
        .map(|a| a.says.as_str())
        .collect();
    (!said.is_empty()).then(|| said.join(" "))
}

/// True when the normalized message contains any of the answer's cues.
fn asks_for(text: &str, answer: &Answer) -> bool {
    answer
        .when_asked
        .iter()
        .any(|cue| contains_words(text, &normalize(cue)))
}

/// Lower case, typographic apostrophes and dashes made plain, and runs of
/// white space made one space, so "ZIP\u{a0}code" and "zip code" are the
/// same words.
fn normalize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars().flat_map(char::to_lowercase) {
        let c = match c {
            '\u{2018}' | '\u{2019}' => '\'',
            '\u{2010}'..='\u{2015}' => '-',
            c => c,
        };
        if c.is_whitespace() {
            space = true;
            continue;
        }
        if space && !out.is_empty() {
            out.push(' ');
        }
        space = false;
        out.push(c);
    }
    out
}

/// True when `cue` occurs in `text` as whole words: not inside a longer
/// word at either end (`zip` is in "your zip?", not in "zipper"). A cue
/// that starts or ends with a symbol (`$`) needs no boundary there.
fn contains_words(text: &str, cue: &str) -> bool {
    if cue.is_empty() {
        return false;
    }
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let starts_word = word(cue.chars().next());
    let ends_word = word(cue.chars().next_back());
    text.match_indices(cue).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + cue.len()..].chars().next();
        let glued_before = starts_word && word(before);
        let glued_after = ends_word && word(after);
        !glued_before && !glued_after
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(answers: &[(&[&str], &str)]) -> Task {
        let mut t: Task = crate::world::manifest::TaskSpec {
            id: "t".into(),
            title: "t".into(),
            difficulty: None,
            instruction: String::new(),
            opening_message: String::new(),
            customer: None,
            summary: None,
            facts: vec![],
            max_steps: 5,
            tools: None,
            records: vec![],
            replies: vec![],
            answers: vec![],
            unanswered: None,
            outputs: vec![],
            solution: vec![],
            known_issues: vec![],
        }
        .into();
        t.answers = answers
            .iter()
            .map(|(cues, says)| Answer {
                when_asked: cues.iter().map(|c| c.to_string()).collect(),
                says: says.to_string(),
            })
            .collect();
        t
    }

    #[test]
    fn answers_what_the_message_asks_and_nothing_else() {
        let t = task(&[
            (&["zip", "postcode"], "It's 78702."),
            (&["card", "last 4"], "Visa ending 6158."),
        ]);
        assert_eq!(
            answer(&t, "What's your ZIP code?").as_deref(),
            Some("It's 78702.")
        );
        assert_eq!(
            answer(
                &t,
                "Could you confirm the last 4 of the card, or the postcode?"
            )
            .as_deref(),
            Some("It's 78702. Visa ending 6158."),
            "both asked: both answered, in the task's order"
        );
        assert_eq!(answer(&t, "Done! You're upgraded."), None);
    }

    #[test]
    fn cues_match_whole_words_in_any_case_and_spacing() {
        let t = task(&[(&["zip code"], "78702"), (&["$"], "Fine.")]);
        assert_eq!(
            answer(&t, "your ZIP\u{a0}\n code, please").as_deref(),
            Some("78702")
        );
        assert_eq!(answer(&t, "a zip coder"), None, "inside a longer word");
        assert_eq!(answer(&t, "unzip code"), None);
        assert_eq!(answer(&t, "It's $108.39 today").as_deref(), Some("Fine."));
    }

    #[test]
    fn typographic_apostrophes_match_plain_ones() {
        let t = task(&[(&["what's"], "yes")]);
        assert_eq!(
            answer(&t, "What\u{2019}s the plan?").as_deref(),
            Some("yes")
        );
    }

    #[test]
    fn a_task_without_answers_answers_nothing() {
        assert_eq!(answer(&task(&[]), "zip?"), None);
    }
}
