//! Joining words into sentences, for every place that writes evidence or
//! a criterion in words: lists with "and"/"or", and a capital to start.
//! A leaf module, so the sentence writer and the matchers can share it.

/// "a", "a and b", "a, b and c".
pub(crate) fn and_list(items: &[String]) -> String {
    join_list(items, "and")
}

/// "a", "a or b", "a, b or c".
pub(crate) fn or_list(items: &[String]) -> String {
    join_list(items, "or")
}

fn join_list(items: &[String], word: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} {word} {last}", init.join(", ")),
    }
}

/// The text with its first letter made a capital.
pub(crate) fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(f) => f.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}
