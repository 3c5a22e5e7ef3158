//! How evidence names what an episode did: tools by the titles the expert
//! saw, arguments by their form labels, steps and counts in words, so a
//! grader reads "“Transfer” with To id “A-2” was used twice, at steps 1
//! and 3" rather than tool and parameter names.

use crate::rubric::matchers::Matcher;
use crate::rubric::prose::and_list;
use crate::world::World;

/// A tool with the arguments a criterion asks of it: "“Transfer” with To
/// id “A-2” and Amount 25".
pub(crate) fn tool_phrase(world: &World, tool: &str, args: &[(String, Matcher)]) -> String {
    let title = format!("“{}”", world.tool_title(tool));
    if args.is_empty() {
        return title;
    }
    let parts: Vec<String> = args
        .iter()
        .map(|(name, m)| {
            let label = world.argument_title(tool, name);
            match m {
                Matcher::Absent => format!("no {label}"),
                Matcher::Present => format!("some {label}"),
                other => format!("{label} {}", other.describe()),
            }
        })
        .collect();
    format!("{title} with {}", and_list(&parts))
}

/// Step indexes (from 0) as a person counts them: "step 3", "steps 3 and 5".
pub(crate) fn steps(indexes: &[usize]) -> String {
    let numbers: Vec<String> = indexes.iter().map(|i| (i + 1).to_string()).collect();
    match numbers.len() {
        1 => format!("step {}", numbers[0]),
        _ => format!("steps {}", and_list(&numbers)),
    }
}

/// "once", "twice", "3 times".
pub(crate) fn times(n: usize) -> String {
    match n {
        1 => "once".into(),
        2 => "twice".into(),
        n => format!("{n} times"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_times_read_as_words() {
        assert_eq!(steps(&[2]), "step 3");
        assert_eq!(steps(&[0, 2]), "steps 1 and 3");
        assert_eq!(steps(&[0, 1, 4]), "steps 1, 2 and 5");
        assert_eq!(times(1), "once");
        assert_eq!(times(2), "twice");
        assert_eq!(times(0), "0 times");
        assert_eq!(times(7), "7 times");
    }
}
