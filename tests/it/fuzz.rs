//! Property-based fuzzing of what the engine reads from outside: world
//! folders (`world.toml`, tool and task TOML), rubric files, and import
//! lines. Each input is a real document mutated, structurally (random
//! values put into its tree) or as bytes; the property is that nothing
//! panics and every refusal is the error kind callers handle.
//!
//! Bounded by default (64 cases, 20 s per harness); see
//! `understudy_testkit::fuzz` for a longer run.

use understudy_testkit as common;

use std::path::Path;
use std::sync::Arc;

use proptest::prelude::*;
use serde_json::Value;
use understudy::export::{self, ExportOptions, Format, Source};
use understudy::rubric::RubricSet;
use understudy::store::Store;
use understudy::{Error, World};
use understudy_testkit::fuzz::{self, ByteEdit, Edit};

/// How a file is broken.
#[derive(Debug, Clone)]
enum Mutation {
    Tree(Vec<Edit<toml::Value>>),
    Bytes(Vec<ByteEdit>),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => fuzz::edits(fuzz::toml_value(), fuzz::toml_scalars()).prop_map(Mutation::Tree),
        1 => fuzz::byte_edits().prop_map(Mutation::Bytes),
    ]
}

/// `original` (TOML text) broken by `m`; `None` when the edited tree
/// cannot be written back as TOML.
fn broken_toml(original: &str, m: &Mutation) -> Option<Vec<u8>> {
    match m {
        Mutation::Bytes(edits) => Some(fuzz::apply_bytes(original.as_bytes(), edits)),
        Mutation::Tree(edits) => {
            let doc: toml::Value = toml::from_str(original).expect("the fixture is TOML");
            toml::to_string(&fuzz::apply(&doc, edits))
                .ok()
                .map(String::into_bytes)
        }
    }
}

/// The mini world's TOML files the loader reads, relative to the world.
const WORLD_FILES: &[&str] = &[
    "world.toml",
    "tools/transfer.toml",
    "tools/get_account.toml",
    "tools/tag_doc.toml",
    "tools/close.toml",
    "views.toml",
    "tasks/tasks.toml",
];

/// Runs `f` with `rel` in a copy of the mini world replaced by `bytes`,
/// putting the original back afterwards.
fn with_file<T>(dir: &Path, rel: &str, bytes: &[u8], f: impl FnOnce() -> T) -> T {
    let path = dir.join(rel);
    let original = std::fs::read(&path).expect("fixture file");
    std::fs::write(&path, bytes).expect("write");
    let out = f();
    std::fs::write(&path, original).expect("restore");
    out
}

#[test]
fn the_world_loader_loads_or_refuses_any_mutated_world() {
    let world = common::copy_world(&common::mini_dir());
    fuzz::check(
        "world loader",
        (0..WORLD_FILES.len(), mutation()),
        |(file, m)| {
            let rel = WORLD_FILES[file];
            let original = std::fs::read_to_string(common::mini_dir().join(rel)).expect("fixture");
            let Some(bytes) = broken_toml(&original, &m) else {
                return Ok(());
            };
            let result = with_file(world.path(), rel, &bytes, || World::load(world.path()));
            prop_assert!(
                matches!(result, Ok(_) | Err(Error::WorldInvalid { .. })),
                "{rel}: not a world error: {:?}",
                result.err()
            );
            Ok(())
        },
    );
}

#[test]
fn rubric_files_load_or_are_refused_whatever_they_hold() {
    let dir = common::copy_world(&common::mini_dir());
    let world = Arc::new(World::load(dir.path()).expect("the copy loads"));
    fuzz::check("rubric files", (0..2usize, mutation()), |(file, m)| {
        let rel = ["rubrics/pay-back.toml", "rubrics/frozen.toml"][file];
        let original = std::fs::read_to_string(common::mini_dir().join(rel)).expect("fixture");
        let Some(bytes) = broken_toml(&original, &m) else {
            return Ok(());
        };
        let result = with_file(dir.path(), rel, &bytes, || RubricSet::load(&world));
        prop_assert!(
            matches!(result, Ok(_) | Err(Error::RubricInvalid { .. })),
            "{rel}: not a rubric error: {:?}",
            result.err()
        );
        Ok(())
    });
}

/// One recorded mini episode as a native export line.
fn native_line() -> Value {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = Arc::new(Store::open(dir.path().join("s.sqlite")).expect("store"));
    let solution = common::mini()
        .task("pay-back")
        .expect("task")
        .solution
        .clone();
    let mut rec = common::record_mini(&store, "pay-back", &solution);
    rec.undo().expect("undo");
    rec.submit(None).expect("submit");
    let mut out = Vec::new();
    let options = ExportOptions {
        format: Format::Native,
        ..ExportOptions::default()
    };
    export::write_jsonl(&Source::Store(&store), None, &options, &mut out, &|| {}).expect("export");
    serde_json::from_slice(&out).expect("one JSON line")
}

/// `line` under a fresh episode id (where it still has one), so lines
/// that parse can be stored and reach the store's own checks.
fn fresh_id(mut line: Value) -> Value {
    if let Some(id) = line.pointer_mut("/episode/id").filter(|v| v.is_string()) {
        *id = Value::String(understudy::store::new_uuid());
    }
    line
}

#[test]
fn import_lines_are_stored_or_refused_never_a_panic() {
    let line = native_line();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path().join("import.sqlite")).unwrap();
    let worlds = common::repo().join("tests/worlds");
    let cases = (
        fuzz::edits(fuzz::json_value(), fuzz::json_scalars()),
        proptest::option::weighted(0.3, fuzz::byte_edits()),
        0..3usize,
    );
    fuzz::check("import lines", cases, |(tree, bytes, more)| {
        let mutated = fresh_id(fuzz::apply(&line, &tree)).to_string();
        let mutated = match &bytes {
            Some(edits) => {
                String::from_utf8_lossy(&fuzz::apply_bytes(mutated.as_bytes(), edits)).into_owned()
            }
            None => mutated,
        };
        let doc = std::iter::once(mutated)
            .chain((0..more).map(|_| fresh_id(line.clone()).to_string()))
            .collect::<Vec<_>>()
            .join("\n");
        let (parsed, problems) = export::native::parse_all(&doc);
        prop_assert!(parsed.len() + problems.len() >= 1);
        let result = export::import(&store, &doc, "fuzz.jsonl", &worlds);
        prop_assert!(
            matches!(
                result,
                Ok(_) | Err(Error::InvalidInput { .. } | Error::Conflict(_))
            ),
            "not an input error: {:?}",
            result.err()
        );
        store.integrity_check().expect("the store stays sound");
        Ok(())
    });
}
