//! What an agent is told when it calls a tool it cannot use: which tools it
//! can, and the one it probably meant, so a typo costs one step, not the
//! episode.

/// How alike two names must be (Jaro-Winkler, 0 to 1) for the closer one
/// to be suggested; below this a suggestion is more noise than help.
const SUGGEST_ABOVE: f64 = 0.8;

/// The error for a call to `name`, which is not among `offered` (the tools
/// the task allows, in order). `in_world` says the world has the tool but
/// the task does not allow it.
///
/// The text starts as τ-bench's does (`Unknown action <name>`), so agents
/// tuned on it read the same first words.
pub(super) fn message(name: &str, in_world: bool, offered: &[String]) -> String {
    let mut text = if in_world {
        format!("the tool `{name}` is not available in this task.")
    } else {
        format!("Unknown action {name}.")
    };
    if !in_world {
        if let Some(close) = closest(name, offered) {
            text.push_str(&format!(" Did you mean `{close}`?"));
        }
    }
    let listed: Vec<String> = offered.iter().map(|t| format!("`{t}`")).collect();
    text.push_str(&format!(
        " The tools of this task are: {}.",
        listed.join(", ")
    ));
    text
}

/// The offered name most like `name`, when one is alike enough: a near
/// spelling (`refil`, `refill`) or one containing the other (`refund`,
/// `issue_refund`).
fn closest<'a>(name: &str, offered: &'a [String]) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    offered
        .iter()
        .map(|t| {
            let t_lower = t.to_ascii_lowercase();
            let contains =
                lower.len() >= 3 && (t_lower.contains(&lower) || lower.contains(&t_lower));
            let score = strsim::jaro_winkler(&lower, &t_lower);
            (
                t.as_str(),
                if contains {
                    score.max(SUGGEST_ABOVE)
                } else {
                    score
                },
            )
        })
        .filter(|(_, score)| *score >= SUGGEST_ABOVE)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(t, _)| t)
}

#[cfg(test)]
mod tests {
    use super::{closest, message};

    fn tools() -> Vec<String> {
        [
            "get_patient",
            "issue_refund",
            "refill",
            "view_prescriptions",
        ]
        .map(String::from)
        .to_vec()
    }

    #[test]
    fn a_near_name_is_suggested() {
        assert_eq!(closest("refil", &tools()), Some("refill"));
        assert_eq!(closest("Refill", &tools()), Some("refill"));
        assert_eq!(closest("get_patients", &tools()), Some("get_patient"));
        assert_eq!(closest("refund", &tools()), Some("issue_refund"));
        assert_eq!(
            closest("prescriptions", &tools()),
            Some("view_prescriptions")
        );
    }

    #[test]
    fn an_unlike_name_gets_no_suggestion() {
        assert_eq!(closest("teleport", &tools()), None);
        assert_eq!(closest("x", &tools()), None);
        assert_eq!(closest("", &tools()), None);
    }

    #[test]
    fn the_message_lists_the_tools() {
        assert_eq!(
            message("refil", false, &tools()),
            "Unknown action refil. Did you mean `refill`? The tools of this task are: `get_patient`, `issue_refund`, `refill`, `view_prescriptions`."
        );
        assert_eq!(
            message("teleport", false, &tools()),
            "Unknown action teleport. The tools of this task are: `get_patient`, `issue_refund`, `refill`, `view_prescriptions`."
        );
        assert!(message("close", true, &tools())
            .starts_with("the tool `close` is not available in this task. The tools of this task are: `get_patient`"));
    }
}
