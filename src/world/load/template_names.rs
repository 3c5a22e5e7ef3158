//! Checking the names a template uses against what its context will hold.
//!
//! Templates render leniently (an unknown name renders empty), which is
//! right for an optional argument left out but hides a misspelt column:
//! `{{ amout }}` would print nothing on every call. When the loader knows
//! the columns a template will see (from a prepared statement), a name that
//! is neither a column, a parameter nor a built-in is a load error.

use std::collections::BTreeSet;

/// The names a template's context will have.
pub(super) struct TemplateContext<'a> {
    /// The tool's declared parameters.
    pub parameters: &'a BTreeSet<String>,
    /// The columns spread into the context (the guard's row, or a `row`
    /// result).
    pub columns: &'a [String],
    /// Other names the engine adds (`result`, `rows`).
    pub extra: &'a [&'a str],
    /// The fields of `result` when it is one row, for `result.<column>`.
    pub result_fields: Option<&'a [String]>,
}

/// The names the template `name` uses that its context will not have, in
/// sorted order (`amout`, `result.amout`); empty when the template is not
/// in `env` (it did not parse, which is reported already).
pub(super) fn unknown_names(
    env: &minijinja::Environment<'static>,
    name: &str,
    context: &TemplateContext<'_>,
) -> Vec<String> {
    let Ok(template) = env.get_template(name) else {
        return Vec::new();
    };
    let globals: BTreeSet<&str> = env.globals().map(|(g, _)| g).collect();
    let mut unknown: Vec<String> = template
        .undeclared_variables(true)
        .into_iter()
        .filter(|used| {
            let mut parts = used.split('.');
            let first = parts.next().unwrap_or("");
            let known = context.parameters.contains(first)
                || context.columns.iter().any(|c| c == first)
                || context.extra.contains(&first)
                || globals.contains(first);
            let field_known = match (first, parts.next(), context.result_fields) {
                ("result", Some(field), Some(fields)) => fields.iter().any(|c| c == field),
                _ => true,
            };
            !(known && field_known)
        })
        .collect();
    unknown.sort();
    unknown
}

#[cfg(test)]
mod tests {
    use super::{unknown_names, TemplateContext};
    use std::collections::BTreeSet;

    fn check(source: &str, columns: &[&str], result_row: bool) -> Vec<String> {
        let mut env = crate::template::environment();
        env.add_template_owned("t", source.to_string()).unwrap();
        let parameters: BTreeSet<String> = ["refill_id".to_string()].into();
        let columns: Vec<String> = columns.iter().map(|c| c.to_string()).collect();
        unknown_names(
            &env,
            "t",
            &TemplateContext {
                parameters: &parameters,
                columns: &columns,
                extra: &["result"],
                result_fields: result_row.then_some(columns.as_slice()),
            },
        )
    }

    #[test]
    fn columns_parameters_and_builtins_are_known() {
        let source = "{{ refill_id }} {{ drug }} {{ result.drug }} {% for i in range(2) %}{{ i }}{% endfor %} {% set n = 1 %}{{ n }} {{ 100 | money }}";
        assert!(check(source, &["drug"], true).is_empty());
    }

    #[test]
    fn a_misspelt_column_is_unknown() {
        assert_eq!(
            check("{{ drgu }} and {{ result.dose }}", &["drug"], true),
            ["drgu", "result.dose"]
        );
        // `result.x` is only checked when the result is one row.
        assert_eq!(
            check("{{ result.dose }}", &["drug"], false),
            Vec::<String>::new()
        );
    }
}
