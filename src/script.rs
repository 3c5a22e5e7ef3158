//! Procedural tool steps in Rhai, sandboxed.
//!
//! Some tool behaviour is not clean in SQL (ordered loops with float
//! accumulation, first-match edits inside JSON documents). Rather than let a
//! world ship Rust, a tool may run a Rhai script: no I/O, no modules, an
//! operation budget, and database access only through the same sandboxed
//! connection its SQL uses.
//!
//! The connection is lent to the script through a thread-local for the
//! duration of one call, which keeps the engine `Send + Sync` without any
//! `unsafe`: the script engine and compiled scripts are shared by every
//! episode of a world.

use std::cell::RefCell;

use rhai::packages::{
    ArithmeticPackage, BasicArrayPackage, BasicBlobPackage, BasicFnPackage, BasicIteratorPackage,
    BasicMapPackage, BasicMathPackage, BasicStringPackage, BitFieldPackage, LogicPackage,
    MoreStringPackage, Package,
};
use rhai::{Array, Dynamic, Engine, EvalAltResult, ImmutableString, Map, Position, Scope, AST};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Connection;

use crate::python;
use crate::sql::limits::ResultSize;
use crate::sql::sandbox::check_statement_kind;
use crate::sql::values::bind_named;

/// Operation budget per call: generous for real tools, fatal to runaways.
const MAX_OPERATIONS: u64 = 2_000_000;

/// Why a script call did not produce a result.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptError {
    /// The script rejected the call (`fail(...)` or `throw`): a business rule.
    Rejected(String),
    /// A SQL statement inside the script failed.
    Sql(String),
    /// The script itself is broken (type error, budget exceeded, ...).
    Failed(String),
}

/// What a script returned.
pub enum ScriptOutput {
    /// Observation text, shown as it is.
    Text(String),
    /// A JSON value: the tool's result, which its template (if any) formats.
    Json(serde_json::Value),
}

#[derive(Clone)]
struct FailMarker(String);

#[derive(Clone)]
struct SqlFailure(String);

struct Lent {
    conn: Connection,
    read_only: bool,
}

thread_local! {
    static LENT: RefCell<Option<Lent>> = const { RefCell::new(None) };
}

/// Creates the shared script engine with the world API registered.
///
/// The engine is built from Rhai's packages one by one, leaving out the two
/// that reach the host: the time package (`timestamp()`, `elapsed`) and the
/// language-core package, whose `sleep()` blocks the thread on real time.
/// With neither, a script has no clock; the simulated one is `now()`.
pub fn engine() -> Engine {
    let mut engine = Engine::new_raw();
    for package in [
        ArithmeticPackage::new().as_shared_module(),
        BasicStringPackage::new().as_shared_module(),
        BasicIteratorPackage::new().as_shared_module(),
        BasicFnPackage::new().as_shared_module(),
        BitFieldPackage::new().as_shared_module(),
        LogicPackage::new().as_shared_module(),
        BasicMathPackage::new().as_shared_module(),
        BasicArrayPackage::new().as_shared_module(),
        BasicBlobPackage::new().as_shared_module(),
        BasicMapPackage::new().as_shared_module(),
        MoreStringPackage::new().as_shared_module(),
    ] {
        engine.register_global_module(package);
    }
    // What `Engine::new` would set: interning keeps repeated strings cheap.
    engine.set_max_strings_interned(256);
    engine.set_max_operations(MAX_OPERATIONS);
    engine.set_max_call_levels(64);
    engine.set_max_expr_depths(128, 64);
    engine.set_max_string_size(4 << 20);
    engine.set_max_array_size(200_000);
    engine.set_max_map_size(200_000);
    engine.set_strict_variables(true);
    engine.disable_symbol("eval");
    engine.on_print(|_| {});
    engine.on_debug(|_, _, _| {});

    engine.register_fn("query", |sql: &str| query(sql, Map::new()));
    engine.register_fn("query", query);
    engine.register_fn("query_row", |sql: &str, params: Map| {
        Ok::<_, Box<EvalAltResult>>(
            query(sql, params)?
                .into_iter()
                .next()
                .unwrap_or(Dynamic::UNIT),
        )
    });
    engine.register_fn("query_row", |sql: &str| {
        Ok::<_, Box<EvalAltResult>>(
            query(sql, Map::new())?
                .into_iter()
                .next()
                .unwrap_or(Dynamic::UNIT),
        )
    });
    engine.register_fn("query_value", query_value);
    engine.register_fn("query_value", |sql: &str| query_value(sql, Map::new()));
    engine.register_fn("execute", execute);
    engine.register_fn("execute", |sql: &str| execute(sql, Map::new()));
    engine.register_fn(
        "fail",
        |message: &str| -> Result<Dynamic, Box<EvalAltResult>> {
            Err(EvalAltResult::ErrorRuntime(
                Dynamic::from(FailMarker(message.to_string())),
                Position::NONE,
            )
            .into())
        },
    );
    engine.register_fn(
        "json_decode",
        |text: &str| -> Result<Dynamic, Box<EvalAltResult>> {
            // Straight into Rhai values, without a `serde_json::Value` tree
            // in between: on τ-bench's tools this is the hottest call.
            serde_json::from_str::<Dynamic>(text).map_err(|e| runtime(format!("json_decode: {e}")))
        },
    );
    engine.register_fn(
        "json_encode",
        |value: Dynamic| -> Result<String, Box<EvalAltResult>> {
            // Written straight from the Rhai value: the same text as
            // through a `serde_json::Value` tree (maps in key order, the
            // same number formatting), without building one per write.
            // What cannot be written that way gets the tree's own error.
            match serde_json::to_string(&value) {
                Ok(text) => Ok(text),
                Err(_) => Ok(dynamic_to_json(&value)?.to_string()),
            }
        },
    );
    engine.register_fn("py_round", |x: i64, _n: i64| x);
    engine.register_fn("py_round", |x: f64, n: i64| {
        python::number::round_half_even(x, i32::try_from(n).unwrap_or(0))
    });
    engine.register_fn("py_round", |x: i64| x);
    engine.register_fn("py_round", |x: f64| {
        python::number::round_half_even(x, 0) as i64
    });
    engine.register_fn("py_str", |x: i64| x.to_string());
    engine.register_fn("py_str", python::number::float_repr);
    engine.register_fn("py_str", |x: ImmutableString| x);
    engine.register_fn("now", || query_value("SELECT now()", Map::new()));
    engine.register_fn("new_id", |prefix: &str| {
        let mut params = Map::new();
        params.insert("prefix".into(), prefix.into());
        query_value("SELECT new_id(:prefix)", params)
    });
    engine
}

/// Compiles a script, reporting syntax errors with their line.
pub fn compile(engine: &Engine, source: &str) -> Result<AST, (Option<usize>, String)> {
    // `args` is declared so strict-variable checking can catch typos at
    // load time instead of at the first call.
    let mut scope = Scope::new();
    scope.push("args", Map::new());
    engine
        .compile_with_scope(&scope, source)
        .map_err(|e| (e.1.line(), e.0.to_string()))
}

/// Runs `ast` with `args` in scope, lending `conn` for its database calls.
/// Returns the connection whatever happens.
pub fn run(
    engine: &Engine,
    ast: &AST,
    conn: Connection,
    read_only: bool,
    args: &serde_json::Value,
) -> (Connection, Result<ScriptOutput, ScriptError>) {
    let args = match json_to_dynamic(args) {
        Ok(a) => a,
        Err(e) => return (conn, Err(ScriptError::Failed(e.to_string()))),
    };
    LENT.with(|l| *l.borrow_mut() = Some(Lent { conn, read_only }));
    let mut scope = Scope::new();
    scope.push("args", args);
    let outcome = engine.eval_ast_with_scope::<Dynamic>(&mut scope, ast);
    let conn = LENT
        .with(|l| l.borrow_mut().take())
        .map(|l| l.conn)
        .expect("the lent connection is returned by the same thread");
    let result = match outcome {
        Ok(value) => to_output(value),
        Err(err) => Err(classify(&err)),
    };
    (conn, result)
}

fn to_output(value: Dynamic) -> Result<ScriptOutput, ScriptError> {
    if value.is_string() {
        return Ok(ScriptOutput::Text(value.into_string().unwrap_or_default()));
    }
    dynamic_to_json(&value)
        .map(ScriptOutput::Json)
        .map_err(|e| ScriptError::Failed(format!("the script's result is not JSON: {e}")))
}

fn classify(err: &EvalAltResult) -> ScriptError {
    match err.unwrap_inner() {
        EvalAltResult::ErrorRuntime(value, _) => {
            if let Some(FailMarker(m)) = value.clone().try_cast::<FailMarker>() {
                ScriptError::Rejected(m)
            } else if let Some(SqlFailure(m)) = value.clone().try_cast::<SqlFailure>() {
                ScriptError::Sql(m)
            } else {
                ScriptError::Rejected(value.to_string())
            }
        }
        EvalAltResult::ErrorTooManyOperations(_) => {
            ScriptError::Failed("the tool's script ran too long and was stopped".to_string())
        }
        other => ScriptError::Failed(other.to_string()),
    }
}

fn runtime(message: String) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(message.into(), Position::NONE).into()
}

fn sql_failure(message: String) -> Box<EvalAltResult> {
    EvalAltResult::ErrorRuntime(Dynamic::from(SqlFailure(message)), Position::NONE).into()
}

fn with_conn<T>(
    f: impl FnOnce(&Connection, bool) -> Result<T, Box<EvalAltResult>>,
) -> Result<T, Box<EvalAltResult>> {
    LENT.with(|l| {
        let lent = l.borrow();
        match lent.as_ref() {
            Some(lent) => f(&lent.conn, lent.read_only),
            None => Err(runtime("no database is available here".into())),
        }
    })
}

fn prepare<'c>(
    conn: &'c Connection,
    sql: &str,
    read_only: bool,
    writing: bool,
) -> Result<rusqlite::CachedStatement<'c>, Box<EvalAltResult>> {
    check_statement_kind(sql).map_err(runtime)?;
    if read_only && writing {
        return Err(runtime("a read tool cannot change the world".into()));
    }
    let stmt = conn.prepare_cached(sql).map_err(|e| {
        let message = crate::sql::sql_message(&e);
        if message.contains("not authorized") {
            runtime(if read_only {
                "a read tool cannot change the world".to_string()
            } else {
                "not allowed: world SQL may read and change rows, but not attach databases, run PRAGMAs, change the schema, or manage transactions".to_string()
            })
        } else {
            sql_failure(message)
        }
    })?;
    if read_only && !stmt.readonly() {
        return Err(runtime("a read tool cannot change the world".into()));
    }
    Ok(stmt)
}

fn bind(stmt: &mut rusqlite::CachedStatement<'_>, params: &Map) -> Result<(), Box<EvalAltResult>> {
    let mut failure = None;
    bind_named(stmt, |name| match params.get(name) {
        Some(v) => match dynamic_to_sql(v) {
            Ok(v) => Some(v),
            Err(e) => {
                failure = Some(e);
                None
            }
        },
        None => None,
    })
    .map_err(|e| sql_failure(crate::sql::sql_message(&e)))?;
    match failure {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn query(sql: &str, params: Map) -> Result<Array, Box<EvalAltResult>> {
    with_conn(|conn, read_only| {
        let mut stmt = prepare(conn, sql, read_only, false)?;
        bind(&mut stmt, &params)?;
        let names: Vec<ImmutableString> = stmt.column_names().iter().map(|s| (*s).into()).collect();
        let mut rows = stmt.raw_query();
        let mut out = Array::new();
        let mut size = ResultSize::default();
        while let Some(row) = rows
            .next()
            .map_err(|e| sql_failure(crate::sql::sql_message(&e)))?
        {
            let mut map = Map::new();
            for (i, name) in names.iter().enumerate() {
                let v = row
                    .get_ref(i)
                    .map_err(|e| sql_failure(crate::sql::sql_message(&e)))?;
                size.add(v)
                    .map_err(|e| sql_failure(crate::sql::sql_message(&e)))?;
                map.insert(name.as_str().into(), sql_to_dynamic(v));
            }
            out.push(map.into());
        }
        Ok(out)
    })
}

fn query_value(sql: &str, params: Map) -> Result<Dynamic, Box<EvalAltResult>> {
    with_conn(|conn, read_only| {
        let mut stmt = prepare(conn, sql, read_only, false)?;
        bind(&mut stmt, &params)?;
        let mut rows = stmt.raw_query();
        match rows
            .next()
            .map_err(|e| sql_failure(crate::sql::sql_message(&e)))?
        {
            Some(row) => Ok(sql_to_dynamic(
                row.get_ref(0)
                    .map_err(|e| sql_failure(crate::sql::sql_message(&e)))?,
            )),
            None => Ok(Dynamic::UNIT),
        }
    })
}

fn execute(sql: &str, params: Map) -> Result<i64, Box<EvalAltResult>> {
    with_conn(|conn, read_only| {
        let mut stmt = prepare(conn, sql, read_only, true)?;
        bind(&mut stmt, &params)?;
        let n = stmt
            .raw_execute()
            .map_err(|e| sql_failure(crate::sql::sql_message(&e)))?;
        Ok(n as i64)
    })
}

fn sql_to_dynamic(v: ValueRef<'_>) -> Dynamic {
    match v {
        ValueRef::Null => Dynamic::UNIT,
        ValueRef::Integer(i) => i.into(),
        ValueRef::Real(f) => f.into(),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
        ValueRef::Blob(b) => Dynamic::from_blob(b.to_vec()),
    }
}

fn dynamic_to_sql(v: &Dynamic) -> Result<SqlValue, Box<EvalAltResult>> {
    if v.is_unit() {
        Ok(SqlValue::Null)
    } else if let Some(i) = v.clone().try_cast::<i64>() {
        Ok(SqlValue::Integer(i))
    } else if let Some(f) = v.clone().try_cast::<f64>() {
        Ok(SqlValue::Real(f))
    } else if let Some(b) = v.clone().try_cast::<bool>() {
        Ok(SqlValue::Integer(i64::from(b)))
    } else if v.is_string() {
        Ok(SqlValue::Text(v.clone().into_string().unwrap_or_default()))
    } else if v.is_blob() {
        Ok(SqlValue::Blob(v.clone().into_blob().unwrap_or_default()))
    } else {
        Ok(SqlValue::Text(dynamic_to_json(v)?.to_string()))
    }
}

/// JSON to Rhai: integers stay `INT`, floats stay `FLOAT`.
pub fn json_to_dynamic(value: &serde_json::Value) -> Result<Dynamic, Box<EvalAltResult>> {
    rhai::serde::to_dynamic(value)
}

/// Rhai to JSON: `INT` becomes a JSON integer, `FLOAT` a JSON float.
pub fn dynamic_to_json(value: &Dynamic) -> Result<serde_json::Value, Box<EvalAltResult>> {
    rhai::serde::from_dynamic(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `json_encode` writes exactly the text a `serde_json::Value` tree of
    /// the same value gives: key order, floats, integers, units, nesting.
    #[test]
    fn json_encode_writes_what_the_value_tree_writes() {
        let engine = engine();
        let value: Dynamic = engine
            .eval(
                r#"#{zeta: [1, 2.5, 0.1 + 0.2, 68.0, -0.0, 1e300, (), true, "é \"q\" \n"],
                     alpha: #{b: #{}, a: [], c: 'x'}, "with space": 3 / 0.0 * 0}"#,
            )
            .expect("the value evaluates");
        let via_tree = dynamic_to_json(&value).expect("JSON").to_string();
        let encoded: String = engine
            .call_fn(
                &mut Scope::new(),
                &engine.compile("fn f(v) { json_encode(v) }").unwrap(),
                "f",
                (value,),
            )
            .expect("json_encode runs");
        assert_eq!(encoded, via_tree);
        assert!(
            encoded.starts_with(r#"{"alpha":{"a":[],"b":{},"c":"x"}"#),
            "{encoded}"
        );
    }
}
