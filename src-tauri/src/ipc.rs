//! The window's command API, generated from the Rust commands.
//!
//! Every command is written once, inside [`command!`]: that registers it
//! with Tauri (`#[tauri::command]`) and records its signature — name,
//! argument names and types, return type, doc comment — from which
//! `export_bindings` writes `ui/src/bindings/commands.ts`. The window's
//! `api.ts` is built from that file, so a renamed command, argument or
//! type fails `tsc` instead of failing at run time, and CI fails when the
//! committed file is stale.
//!
//! Types come from ts-rs, like every other binding (the engine's `ts`
//! feature included). tauri-specta would generate the same calls, but it
//! types them with specta, a second derive on every type that crosses
//! IPC, engine types too, emitting a second copy of each; and both crates
//! are release candidates (`2.0.0-rc.*`).

use std::fmt::Write;
use std::path::{Path, PathBuf};

use ts_rs::{Dependency, TypeVisitor, TS};

use crate::error::AppError;

/// Declares a command: `#[tauri::command]` plus its [`Signature`], in a
/// module of the same name (`episodes::open_episode::signature()`). The
/// first parameter is the app's `State`, which the window never passes.
///
/// ```ignore
/// command! {
///     /// Opens an episode.
///     #[tauri::command(async)]
///     pub fn open_episode(state: State<'_, AppState>, episode_id: String) -> AppResult<EpisodeView> {
///         state.service()?.episode(&episode_id)
///     }
/// }
/// ```
macro_rules! command {
    (
        $(#[doc = $doc:literal])*
        #[tauri::command $(($($option:tt)*))?]
        $vis:vis fn $name:ident(
            $state:ident: $state_ty:ty $(, $arg:ident: $arg_ty:ty)* $(,)?
        ) -> $ret:ty $body:block
    ) => {
        $(#[doc = $doc])*
        #[tauri::command $(($($option)*))?]
        $vis fn $name($state: $state_ty $(, $arg: $arg_ty)*) -> $ret $body

        #[doc = concat!("The signature of [`", stringify!($name), "()`], for the window's bindings.")]
        $vis mod $name {
            #[allow(unused_imports)]
            use super::*;

            pub fn signature() -> $crate::ipc::Signature {
                $crate::ipc::Signature {
                    name: stringify!($name),
                    docs: vec![$($doc),*],
                    args: vec![$($crate::ipc::Arg::of::<$arg_ty>(stringify!($arg))),*],
                    returns: $crate::ipc::TsType::of::<<$ret as $crate::ipc::Returns>::Value>(),
                }
            }
        }
    };
}
pub(crate) use command;

/// What the window's promise resolves to for a command's Rust return
/// type: a command's error rejects it, so `AppResult<T>` resolves to `T`.
pub trait Returns {
    type Value: TS + 'static;
}

impl<T: TS + 'static> Returns for Result<T, AppError> {
    type Value = T;
}

impl Returns for f64 {
    type Value = f64;
}

/// One command, as the window calls it.
#[derive(Debug, Clone)]
pub struct Signature {
    pub name: &'static str,
    /// The doc comment's lines.
    pub docs: Vec<&'static str>,
    pub args: Vec<Arg>,
    pub returns: TsType,
}

impl Signature {
    /// `worldId: string`, one per argument, as the window names them.
    fn typed_args(&self) -> Vec<String> {
        self.args
            .iter()
            .map(|a| format!("{}: {}", camel(a.name), a.ty.ts))
            .collect()
    }
}

#[derive(Debug, Clone)]
pub struct Arg {
    /// As written in Rust (snake_case); the window passes it camelCase.
    pub name: &'static str,
    pub ty: TsType,
}

impl Arg {
    pub fn of<T: TS + 'static>(name: &'static str) -> Arg {
        Arg {
            name,
            ty: TsType::of::<T>(),
        }
    }
}

/// A type as TypeScript writes it, and the binding files it needs.
#[derive(Debug, Clone)]
pub struct TsType {
    pub ts: String,
    pub imports: Vec<(String, PathBuf)>,
}

impl TsType {
    pub fn of<T: TS + 'static>() -> TsType {
        // An exported type imports itself; a wrapper (`Option<T>`,
        // `Vec<T>`) or a primitive imports what it wraps, if anything.
        // (`T::dependencies()` of a wrapper lists what the wrapped type
        // imports, not the wrapped type: `Vec<TableDiff>` gave `RecordDiff`.)
        let deps = match Dependency::from_ty::<T>() {
            Some(own) => vec![own],
            None => {
                let mut wrapped = Wrapped(Vec::new());
                T::visit_generics(&mut wrapped);
                wrapped.0
            }
        };
        TsType {
            ts: T::name(),
            imports: deps
                .into_iter()
                .map(|d| (d.ts_name, d.output_path))
                .collect(),
        }
    }
}

/// Collects the exported types a wrapper's type parameters name.
struct Wrapped(Vec<Dependency>);

impl TypeVisitor for Wrapped {
    fn visit<U: TS + 'static + ?Sized>(&mut self) {
        if let Some(d) = Dependency::from_ty::<U>() {
            self.0.push(d);
        }
    }
}

/// `world_id` → `worldId`, as Tauri names arguments on the JavaScript side.
fn camel(snake: &str) -> String {
    let mut out = String::with_capacity(snake.len());
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = !out.is_empty();
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `{ a; b }`, or `{}` when there is nothing inside.
fn braces(items: &[String], separator: &str) -> String {
    if items.is_empty() {
        "{}".to_string()
    } else {
        format!("{{ {} }}", items.join(separator))
    }
}

fn js_doc(out: &mut String, indent: &str, docs: &[&str]) {
    if docs.is_empty() {
        return;
    }
    let _ = writeln!(out, "{indent}/**");
    for line in docs {
        let _ = writeln!(out, "{indent} *{}", line.trim_end());
    }
    let _ = writeln!(out, "{indent} */");
}

/// The text of `commands.ts`: a `Commands` map from each command's name to
/// its arguments and result, and `commands(call)`, one typed function per
/// command in camelCase, which sends through `call`.
pub fn typescript(commands: &[Signature]) -> String {
    let mut imports: Vec<(String, PathBuf)> = commands
        .iter()
        .flat_map(|c| c.args.iter().map(|a| &a.ty).chain([&c.returns]))
        .flat_map(|t| t.imports.iter().cloned())
        .collect();
    imports.sort();
    imports.dedup();

    let mut out = String::from(
        "// This file was generated from src-tauri's commands (src-tauri/src/ipc.rs). Do not edit this file manually.\n",
    );
    for (name, path) in &imports {
        let path = Path::new(".").join(path.with_extension(""));
        let _ = writeln!(
            out,
            "import type {{ {name} }} from \"{}\";",
            path.display().to_string().replace('\\', "/")
        );
    }
    out.push_str("\n/** Every command: its arguments, as the window passes them, and what its promise resolves to. */\nexport type Commands = {\n");
    for c in commands {
        let _ = writeln!(
            out,
            "  {}: {{ args: {}; returns: {} }};",
            c.name,
            braces(&c.typed_args(), "; "),
            c.returns.ts
        );
    }
    out.push_str("};\n\n/** Sends one command; rejects with the command's error. */\nexport type Call = <C extends keyof Commands>(command: C, args: Commands[C][\"args\"]) => Promise<Commands[C][\"returns\"]>;\n\n/** One typed function per command, sending through `call`. */\nexport function commands(call: Call) {\n  return {\n");
    for c in commands {
        let names: Vec<String> = c.args.iter().map(|a| camel(a.name)).collect();
        js_doc(&mut out, "    ", &c.docs);
        let _ = writeln!(
            out,
            "    {}: ({}) => call(\"{}\", {}),",
            camel(c.name),
            c.typed_args().join(", "),
            c.name,
            braces(&names, ", ")
        );
    }
    out.push_str("  };\n}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_imports_what_it_holds() {
        let t = TsType::of::<Vec<crate::review::TableDiff>>();
        assert_eq!(t.ts, "Array<TableDiff>");
        let names: Vec<&str> = t.imports.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["TableDiff"], "{:?}", t.imports);
    }

    #[test]
    fn arguments_are_named_as_tauri_expects() {
        assert_eq!(camel("world_id"), "worldId");
        assert_eq!(camel("final_message"), "finalMessage");
        assert_eq!(camel("idx"), "idx");
    }

    #[test]
    fn a_signature_becomes_a_typed_call() {
        let sig = Signature {
            name: "get_world",
            docs: vec![" The world."],
            args: vec![
                Arg::of::<String>("world_id"),
                Arg::of::<Option<String>>("note"),
            ],
            returns: TsType::of::<crate::worlds::WorldDetail>(),
        };
        let ts = typescript(&[sig]);
        assert!(
            ts.contains("import type { WorldDetail } from \"./WorldDetail\";"),
            "{ts}"
        );
        assert!(
            ts.contains(
                "  get_world: { args: { worldId: string; note: string | null }; returns: WorldDetail };"
            ),
            "{ts}"
        );
        assert!(
            ts.contains(
                "    getWorld: (worldId: string, note: string | null) => call(\"get_world\", { worldId, note }),"
            ),
            "{ts}"
        );
        assert!(ts.contains("     * The world.\n"), "{ts}");
    }
}
