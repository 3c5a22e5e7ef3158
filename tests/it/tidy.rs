//! Tidy: the engine's layering, checked the way rust-analyzer checks its
//! own (`xtask/src/tidy.rs`): by reading the source, so a back-import
//! fails the test suite instead of waiting for a reviewer.
//!
//! The floors, lowest first. A module may use modules on lower floors only;
//! modules on the same floor are independent of each other. The agent
//! server (`crates/understudy-serve`), the CLI (`crates/understudy-cli`)
//! and the app (`src-tauri`) stand above all of them, and the compiler
//! keeps them there: the engine crate cannot name them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use understudy_testkit as common;

const FLOORS: &[&[&str]] = &[
    &["diagnostics"],
    &["error"],
    &[
        "python",
        "action",
        "observation",
        "template",
        "plugin",
        "output_file",
        "ordered",
    ],
    &["sql"],
    &["script"],
    &["world"],
    &["episode"],
    &["trajectory"],
    &["store"],
    &["recorder"],
    &["rubric", "export", "replay"],
    &["grading", "consensus"],
];

/// Crates the engine must not depend on, even indirectly: they belong to
/// the front ends (argument parsing, progress bars, logging set-up, the
/// async runtime and HTTP).
const FORBIDDEN: &[&str] = &[
    "clap",
    "anyhow",
    "indicatif",
    "tracing-subscriber",
    "axum",
    "hyper",
    "tokio",
    "tauri",
    // The team hub and its database client sit above the engine too.
    "understudy-hub",
    "tokio-postgres",
];

fn floor_of(module: &str) -> Option<usize> {
    FLOORS.iter().position(|floor| floor.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file belongs to: `src/world/load.rs` → `world`.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).ok()?;
    let first = rel.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (name != "lib").then(|| name.to_string())
}

/// Every `crate::<module>` a source text names outside comments.
fn crate_references(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            let name: String = after
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let before = rest[..at].chars().last();
            // `$crate::` in macros and `understudy_crate::` are not ours.
            if !name.is_empty()
                && !matches!(before, Some(c) if c.is_alphanumeric() || c == '_' || c == '$')
            {
                out.push((i + 1, name));
            }
            rest = after;
        }
    }
    out
}

/// Every import against the floors, as `file:line: a uses b` sentences.
fn violations(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    files.sort();
    let mut problems = Vec::new();
    for file in files {
        let Some(module) = module_of(src, &file) else {
            continue;
        };
        let rel = file
            .strip_prefix(src)
            .unwrap_or(&file)
            .display()
            .to_string();
        let Some(own) = floor_of(&module) else {
            problems.push(format!(
                "src/{rel}: module `{module}` is on no floor; add it to FLOORS in tests/it/tidy.rs and to docs/ARCHITECTURE.md"
            ));
            continue;
        };
        let text = std::fs::read_to_string(&file).expect("source is readable");
        for (line, target) in crate_references(&text) {
            if target == module {
                continue;
            }
            match floor_of(&target) {
                Some(f) if f < own => {}
                Some(f) if f == own => problems.push(format!(
                    "src/{rel}:{line}: `{module}` uses `{target}`, which is on the same floor"
                )),
                Some(_) => problems.push(format!(
                    "src/{rel}:{line}: `{module}` uses `{target}`, which is on a higher floor"
                )),
                None => {} // an item of lib.rs (`crate::Error`), checked where it is defined
            }
        }
    }
    problems
}

/// Inside one module, the files must not import each other in a circle:
/// `a.rs` → `b.rs` → `a.rs`. Edges are `super::x` and `crate::<module>::x`
/// naming a sibling file; `mod.rs`, which re-exports, is left out.
fn cycles(src: &Path) -> Vec<String> {
    let mut files = Vec::new();
    rust_files(src, &mut files);
    let mut graph: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let rel = file.strip_prefix(src).unwrap_or(file);
        let parts: Vec<&str> = rel.iter().filter_map(|p| p.to_str()).collect();
        let [module, leaf] = parts.as_slice() else {
            continue;
        };
        let Some(sub) = leaf.strip_suffix(".rs").filter(|s| *s != "mod") else {
            continue;
        };
        let text = std::fs::read_to_string(file).expect("source is readable");
        let prefix = format!("crate::{module}::");
        let mut uses = BTreeSet::new();
        for line in text.lines() {
            let code = line.split("//").next().unwrap_or("");
            for pat in ["super::", prefix.as_str()] {
                for (at, _) in code.match_indices(pat) {
                    let name: String = code[at + pat.len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if name != sub && src.join(module).join(format!("{name}.rs")).exists() {
                        uses.insert(name);
                    }
                }
            }
        }
        graph.insert((module.to_string(), sub.to_string()), uses);
    }
    let mut found = Vec::new();
    for ((module, a), uses) in &graph {
        for b in uses {
            if a < b && reaches(&graph, module, b, a, &mut BTreeSet::new()) {
                found.push(format!(
                    "src/{module}: `{a}` and `{b}` import each other (directly or through other files)"
                ));
            }
        }
    }
    found
}

fn reaches(
    graph: &BTreeMap<(String, String), BTreeSet<String>>,
    module: &str,
    from: &str,
    to: &str,
    seen: &mut BTreeSet<String>,
) -> bool {
    if !seen.insert(from.to_string()) {
        return false;
    }
    graph
        .get(&(module.to_string(), from.to_string()))
        .is_some_and(|uses| {
            uses.iter()
                .any(|u| u == to || reaches(graph, module, u, to, seen))
        })
}

#[test]
fn files_of_a_module_import_each_other_in_one_direction() {
    let found = cycles(&common::repo().join("src"));
    assert!(found.is_empty(), "import cycles:\n{}", found.join("\n"));
}

#[test]
fn the_cycle_check_catches_a_cycle() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    std::fs::create_dir_all(src.join("rubric")).expect("mkdir");
    std::fs::write(
        src.join("rubric/criteria.rs"),
        "use super::judge::Judgment;\n",
    )
    .expect("write");
    std::fs::write(
        src.join("rubric/judge.rs"),
        "use crate::rubric::criteria::Criterion;\n",
    )
    .expect("write");
    std::fs::write(
        src.join("rubric/score.rs"),
        "use super::criteria::Criterion;\n",
    )
    .expect("write");
    assert_eq!(
        cycles(src),
        vec!["src/rubric: `criteria` and `judge` import each other (directly or through other files)".to_string()]
    );
}

#[test]
fn engine_modules_use_only_lower_floors() {
    let problems = violations(&common::repo().join("src"));
    assert!(
        problems.is_empty(),
        "imports against the layering (docs/ARCHITECTURE.md):\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_tidy_check_catches_a_back_import() {
    let dir = tempfile::tempdir().expect("tempdir");
    let src = dir.path();
    std::fs::create_dir_all(src.join("sql")).expect("mkdir");
    std::fs::write(src.join("sql/functions.rs"), "use crate::world::Tool;\n").expect("write");
    std::fs::write(src.join("script.rs"), "// crate::world in a comment\n").expect("write");
    std::fs::write(
        src.join("rubric.rs"),
        "use crate::export::x;\nuse crate::store::Store;\n",
    )
    .expect("write");
    std::fs::write(src.join("gadget.rs"), "\n").expect("write");
    let problems = violations(src);
    assert_eq!(
        problems,
        vec![
            "src/gadget.rs: module `gadget` is on no floor; add it to FLOORS in tests/it/tidy.rs and to docs/ARCHITECTURE.md".to_string(),
            "src/rubric.rs:1: `rubric` uses `export`, which is on the same floor".to_string(),
            "src/sql/functions.rs:1: `sql` uses `world`, which is on a higher floor".to_string(),
        ]
    );
}

/// The `[dependencies]` table of the engine's manifest, by name.
fn direct_dependencies(manifest: &str) -> Vec<String> {
    let table: toml::Table = manifest.parse().expect("Cargo.toml parses");
    table
        .get("dependencies")
        .and_then(|d| d.as_table())
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn the_engine_depends_on_no_front_end_crate() {
    let manifest = std::fs::read_to_string(common::repo().join("Cargo.toml")).expect("manifest");
    let direct = direct_dependencies(&manifest);
    let bad: Vec<&String> = direct
        .iter()
        .filter(|d| FORBIDDEN.contains(&d.as_str()) || d.starts_with("tauri"))
        .collect();
    assert!(bad.is_empty(), "the engine must not depend on {bad:?}");

    // Indirect dependencies too: what `cargo tree -e normal` resolves.
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .args([
            "tree",
            "-p",
            "understudy",
            "-e",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .args(["--format", "{p}"])
        .current_dir(common::repo())
        .output()
        .expect("cargo tree runs");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8_lossy(&out.stdout);
    let found: BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| FORBIDDEN.contains(name))
        .collect();
    assert!(
        found.is_empty(),
        "the engine pulls in front-end crates: {found:?}"
    );
    assert!(
        tree.lines().any(|l| l.starts_with("rusqlite ")),
        "cargo tree listed the engine's dependencies"
    );
}

#[test]
fn the_dependency_check_reads_the_manifest() {
    let deps = direct_dependencies(
        "[package]\nname = \"x\"\n[dependencies]\nserde = \"1\"\nclap = \"4\"\n",
    );
    assert_eq!(deps, vec!["clap".to_string(), "serde".to_string()]);
}
