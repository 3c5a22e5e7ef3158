//! A rubric's text pattern (a regular expression) said in words, for the
//! people who read a grading sheet or a score's evidence.
//!
//! Why: graders and reviewers are domain experts, and
//! `/(?i)(has|have|had|already)\s+(now\s+)?passed|too late|missed/` tells
//! them nothing. What the pattern accepts is mostly words, so the words
//! are shown: `“has/have/had/already (now) passed”, “too late” or
//! “missed”`. Alternatives become a slash list, optional parts go in
//! brackets, and anything that is not words (wildcards, repeats of word
//! classes) becomes "…". The annotator's workspace keeps showing the
//! pattern itself; this is only how it reads.

use regex_syntax::ast::{self, Ast, ClassPerlKind, RepetitionKind, RepetitionRange};

/// The phrases a pattern accepts, in quotes and joined as a sentence
/// would join them; `None` when the pattern does not parse (a compiled
/// rubric's patterns always do) or has no words.
pub fn phrases(pattern: &str) -> Option<String> {
    let ast = ast::parse::Parser::new().parse(pattern).ok()?;
    let top = unwrap_groups(&ast);
    let branches: Vec<&Ast> = match top {
        Ast::Alternation(alt) => alt.asts.iter().collect(),
        other => vec![other],
    };
    let mut said: Vec<String> = Vec::new();
    for b in branches {
        let text = tidy(&words(b));
        if !text.is_empty() && text != "…" && !said.contains(&text) {
            said.push(text);
        }
    }
    let quoted: Vec<String> = said.iter().map(|s| format!("“{s}”")).collect();
    match quoted.as_slice() {
        [] => None,
        [one] => Some(one.clone()),
        [rest @ .., last] => Some(format!("{} or {last}", rest.join(", "))),
    }
}

/// The pattern under groups and flags that wrap the whole of it.
fn unwrap_groups(ast: &Ast) -> &Ast {
    match ast {
        Ast::Group(g) => unwrap_groups(&g.ast),
        Ast::Concat(c) => {
            let mut real = c.asts.iter().filter(|a| !matches!(a, Ast::Flags(_)));
            match (real.next(), real.next()) {
                (Some(only), None) => unwrap_groups(only),
                _ => ast,
            }
        }
        _ => ast,
    }
}

/// One part of a pattern as words: letters as written, spacing as a
/// space, and anything wider than a word as "…".
fn words(ast: &Ast) -> String {
    match ast {
        Ast::Empty(_) | Ast::Flags(_) | Ast::Assertion(_) => String::new(),
        Ast::Literal(l) => l.c.to_string(),
        Ast::Dot(_) | Ast::ClassUnicode(_) | Ast::ClassBracketed(_) => "…".into(),
        Ast::ClassPerl(c) => match (&c.kind, c.negated) {
            (ClassPerlKind::Space, false) | (ClassPerlKind::Word, true) => " ".into(),
            _ => "…".into(),
        },
        Ast::Group(g) => words(&g.ast),
        Ast::Concat(c) => c.asts.iter().map(words).collect(),
        Ast::Alternation(alt) => {
            let each: Vec<String> = alt.asts.iter().map(|a| tidy(&words(a))).collect();
            if each.iter().any(|w| w.is_empty() || w.contains('…')) {
                "…".into()
            } else {
                format!(" {} ", each.join("/"))
            }
        }
        Ast::Repetition(r) => {
            let inner = words(&r.ast);
            let said = tidy(&inner);
            let optional = matches!(
                r.op.kind,
                RepetitionKind::ZeroOrOne | RepetitionKind::Range(RepetitionRange::Bounded(0, 1))
            );
            if said.is_empty() && !inner.is_empty() {
                // Repeated spacing is spacing.
                " ".into()
            } else if optional && !said.is_empty() && !said.contains('…') {
                format!(" ({said}) ")
            } else {
                " … ".into()
            }
        }
    }
}

/// Spacing collapsed, runs of "…" joined, no stray brackets or spaces.
fn tidy(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for word in text.split_whitespace() {
        if word == "…" && out.ends_with('…') {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out.replace("… …", "…")
}

#[cfg(test)]
mod tests {
    use super::phrases;

    #[test]
    fn alternatives_of_words_are_listed() {
        assert_eq!(
            phrases("(?i)hire|employee").as_deref(),
            Some("“hire” or “employee”")
        );
        assert_eq!(
            phrases(r"(?i)\bUK\b|England|United Kingdom").as_deref(),
            Some("“UK”, “England” or “United Kingdom”"),
            "letters as the annotator wrote them"
        );
        assert_eq!(
            phrases(r"(?i)clause 7|6\.1").as_deref(),
            Some("“clause 7” or “6.1”")
        );
    }

    #[test]
    fn choices_inside_a_phrase_read_as_a_slash_list_and_optional_parts_in_brackets() {
        assert_eq!(
            phrases(r"(?i)(has|have|had|already)\s+(now\s+)?passed|too late|missed").as_deref(),
            Some("“has/have/had/already (now) passed”, “too late” or “missed”")
        );
    }

    #[test]
    fn wildcards_become_an_ellipsis() {
        assert_eq!(
            phrases(r"(?is)(24|twenty-four).*(72|seventy-two)").as_deref(),
            Some("“24/twenty-four … 72/seventy-two”")
        );
        assert_eq!(
            phrases(r"(?i)(can|able to)\s+(\w+\s+){0,3}sign").as_deref(),
            Some("“can/able to … sign”")
        );
    }

    #[test]
    fn a_plain_word_is_itself_and_a_bad_pattern_is_none() {
        assert_eq!(phrases("(?i)terminat").as_deref(), Some("“terminat”"));
        assert_eq!(phrases("(unclosed"), None);
        assert_eq!(phrases(".*"), None, "nothing but a wildcard has no words");
    }
}
