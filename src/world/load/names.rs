//! The naming rules for what a world declares, and the default titles
//! derived from names.

/// A world id: lowercase letters, digits and dashes, starting with a letter
/// or digit (it appears in file names and URLs).
pub(super) fn is_slug(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
}

/// A tool or view name: lowercase letters, digits and underscores, starting
/// with a letter (what function-calling APIs accept everywhere).
pub(super) fn is_identifier(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
}

/// `issue_refund` → `Issue refund`.
pub(crate) fn humanize(name: &str) -> String {
    let spaced = name.replace('_', " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().collect::<String>() + chars.as_str(),
        None => String::new(),
    }
}
