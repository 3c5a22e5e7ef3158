//! Deterministic built-in SQL functions.
//!
//! A world must give byte-identical results for the same actions, so nothing
//! here reads the wall clock or real randomness. SQLite's own time and random
//! functions are *replaced* on world connections by versions that read the
//! episode's simulated clock and seeded generator.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};
use rusqlite::functions::{Context, FunctionFlags};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::{Connection, Error as SqlError};

use crate::python;

/// What a function's argument-compiling closure may fail with.
type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// How `new_id(prefix)` writes ids: `{prefix}{separator}{n}`, with `n`
/// zero-padded to `width` digits and counted per prefix from `start`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct IdFormats {
    /// Between the prefix and the number, e.g. `-`.
    pub separator: String,
    /// Digits the number is zero-padded to.
    pub width: usize,
    /// The first number given out for each prefix.
    pub start: u64,
}

/// The earliest simulated time, 0000-01-01T00:00:00Z: SQLite's date
/// functions know no earlier year.
pub const MIN_CLOCK: i64 = -62_167_219_200;
/// The latest simulated time, 9999-12-31T23:59:59Z: SQLite's date
/// functions know no later year.
pub const MAX_CLOCK: i64 = 253_402_300_799;

/// The per-episode simulated state the built-ins read.
#[derive(Debug, Clone)]
pub struct SimState {
    /// Simulated time, seconds since the Unix epoch.
    pub clock: i64,
    /// The simulated time at reset.
    pub start: i64,
    /// `new_id` counters, per prefix.
    pub counters: HashMap<String, u64>,
    /// SplitMix64 state, seeded at reset.
    pub rng: u64,
    /// How `new_id` writes the ids it gives out.
    pub ids: IdFormats,
    /// The episode's successful tool calls so far, in order, for
    /// `called()`: guards and views can then ask "was the identity
    /// verified?" ("look before you write" as policy, not only rubric).
    pub calls: Vec<Call>,
}

/// One successful tool call, as `called()` reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The tool called.
    pub tool: String,
    /// Its arguments, as given.
    pub args: serde_json::Map<String, serde_json::Value>,
}

impl SimState {
    /// A fresh state at simulated time `clock` (seconds since the epoch), its generator seeded by `seed`.
    pub fn new(clock: i64, seed: u64, ids: IdFormats) -> SimState {
        SimState {
            clock,
            start: clock,
            counters: HashMap::new(),
            rng: seed,
            ids,
            calls: Vec::new(),
        }
    }

    /// How many earlier successful calls of `tool` there were; with `arg`,
    /// only those whose argument `arg` equals `value` (numbers by value).
    pub fn count_calls(&self, tool: &str, arg: Option<(&str, &serde_json::Value)>) -> usize {
        self.calls
            .iter()
            .filter(|c| c.tool == tool)
            .filter(|c| match arg {
                None => true,
                Some((name, want)) => c.args.get(name).is_some_and(|got| same_json(got, want)),
            })
            .count()
    }

    /// Moves the clock on by `seconds`. It stops at [`MAX_CLOCK`] rather than
    /// wrap (a replay may run past any task's step limit); loading keeps
    /// real worlds far from it.
    pub fn advance(&mut self, seconds: i64) {
        self.clock = self.clock.saturating_add(seconds).min(MAX_CLOCK);
    }

    /// The part of the state a call can use up: id counters and the random
    /// stream. Taken before a call, so a failed call can give it back.
    pub fn draws(&self) -> Draws {
        Draws {
            counters: self.counters.clone(),
            rng: self.rng,
        }
    }

    /// Puts back the draws taken earlier: the ids and random numbers used
    /// since are unused again.
    pub fn restore(&mut self, draws: Draws) {
        self.counters = draws.counters;
        self.rng = draws.rng;
    }

    /// The simulated clock, as RFC 3339 in UTC.
    pub fn now_rfc3339(&self) -> String {
        DateTime::<Utc>::from_timestamp(self.clock, 0)
            .unwrap_or_default()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    }

    fn now_sqlite(&self) -> String {
        DateTime::<Utc>::from_timestamp(self.clock, 0)
            .unwrap_or_default()
            .format("%Y-%m-%d %H:%M:%S")
            .to_string()
    }

    /// The next id for `prefix`, counted per prefix, deterministic for a seed.
    pub fn new_id(&mut self, prefix: &str) -> String {
        let start = self.ids.start;
        let n = self.counters.entry(prefix.to_string()).or_insert(start);
        let id = format!(
            "{prefix}{sep}{n:0width$}",
            sep = self.ids.separator,
            width = self.ids.width
        );
        *n += 1;
        id
    }

    fn next_random(&mut self) -> u64 {
        // SplitMix64: tiny, fast, and fully determined by the seed.
        self.rng = self.rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// A saved copy of what [`SimState::draws`] covers.
#[derive(Debug, Clone, PartialEq)]
pub struct Draws {
    counters: HashMap<String, u64>,
    rng: u64,
}

/// The simulated state, shared by the episode and its SQL functions.
pub type SharedState = Arc<Mutex<SimState>>;

/// JSON values equal as `called()` compares them: numbers by value (`5`
/// matches `5.0`), everything else exactly.
fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) => x == y,
        _ => a == b,
    }
}

/// A SQL argument as JSON, to compare with a recorded call's argument.
fn sql_to_json(v: rusqlite::types::ValueRef<'_>) -> serde_json::Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => serde_json::Value::Null,
        ValueRef::Integer(i) => serde_json::Value::from(i),
        ValueRef::Real(f) => serde_json::Value::from(f),
        ValueRef::Text(t) => serde_json::Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => serde_json::Value::String(hex::encode(b)),
    }
}

fn lock(state: &SharedState) -> MutexGuard<'_, SimState> {
    // A poisoned lock only means another call panicked mid-update; the
    // counters are still usable.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn user_error(message: impl Into<String>) -> SqlError {
    SqlError::UserFunctionError(message.into().into())
}

/// Registers every built-in on `conn`, reading `state`.
pub fn register(conn: &Connection, state: &SharedState) -> rusqlite::Result<()> {
    let det = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
    // Functions reading episode state are not "deterministic" in SQLite's
    // sense (their value changes between statements), so they must not be
    // constant-folded or used in indexes.
    let stateful = FunctionFlags::SQLITE_UTF8;

    let s = Arc::clone(state);
    conn.create_scalar_function("now", 0, stateful, move |_| Ok(lock(&s).now_rfc3339()))?;

    let s = Arc::clone(state);
    conn.create_scalar_function("episode_start", 0, stateful, move |_| {
        let start = lock(&s).start;
        Ok(DateTime::<Utc>::from_timestamp(start, 0)
            .unwrap_or_default()
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string())
    })?;

    let s = Arc::clone(state);
    conn.create_scalar_function("called", -1, stateful, move |ctx| {
        let usage = "called(tool) or called(tool, argument, value) expects a tool name, then optionally an argument name and its value";
        let tool: String = ctx.get::<String>(0).map_err(|_| user_error(usage))?;
        let n = match ctx.len() {
            1 => lock(&s).count_calls(&tool, None),
            3 => {
                let arg: String = ctx.get::<String>(1).map_err(|_| user_error(usage))?;
                let value = sql_to_json(ctx.get_raw(2));
                lock(&s).count_calls(&tool, Some((&arg, &value)))
            }
            _ => return Err(user_error(usage)),
        };
        Ok(n as i64)
    })?;

    let s = Arc::clone(state);
    conn.create_scalar_function("new_id", 1, stateful, move |ctx| {
        let prefix: String = ctx
            .get::<String>(0)
            .map_err(|_| user_error("new_id(prefix) expects a text prefix"))?;
        Ok(lock(&s).new_id(&prefix))
    })?;

    // `text REGEXP pattern` (SQLite calls regexp(pattern, text)): the
    // regex crate's syntax, matched in linear time, the pattern compiled
    // once per statement. NULL text gives NULL, as SQLite's LIKE does.
    conn.create_scalar_function("regexp", 2, det, |ctx| {
        let re = ctx.get_or_create_aux(0, |v| -> Result<regex::Regex, BoxError> {
            let pattern = v
                .as_str()
                .map_err(|_| "regexp: the pattern must be text".to_string())?;
            regex::RegexBuilder::new(pattern)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| format!("regexp: {pattern:?} is not a valid pattern: {e}").into())
        })?;
        let text = match ctx.get_raw(1) {
            ValueRef::Null => return Ok(None),
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            ValueRef::Integer(i) => i.to_string(),
            ValueRef::Real(f) => f.to_string(),
            ValueRef::Blob(_) => {
                return Err(user_error("regexp: the text must be text, not a blob"))
            }
        };
        Ok(Some(re.is_match(&text)))
    })?;
    conn.create_scalar_function("round", 1, det, |ctx| py_round(ctx, 0, true))?;
    conn.create_scalar_function("round", 2, det, |ctx| {
        let digits = ctx
            .get::<i64>(1)
            .map_err(|_| user_error("round(x, n) expects an integer n"))?;
        py_round(ctx, digits, false)
    })?;

    conn.create_scalar_function("calculate", 1, det, |ctx| {
        let expr: String = ctx
            .get::<String>(0)
            .map_err(|_| user_error("calculate(expression) expects text"))?;
        python::calc::calculate(&expr).map_err(|e| user_error(e.to_string()))
    })?;

    conn.create_scalar_function("py_str", 1, det, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Integer(i) => i.to_string(),
            ValueRef::Real(f) => python::number::float_repr(f),
            ValueRef::Null => "None".to_string(),
            ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
            ValueRef::Blob(b) => hex::encode(b),
        })
    })?;

    let s = Arc::clone(state);
    conn.create_scalar_function("random", 0, stateful, move |_| {
        Ok(lock(&s).next_random() as i64)
    })?;
    let s = Arc::clone(state);
    conn.create_scalar_function("randomblob", 1, stateful, move |ctx| {
        let n = ctx.get::<i64>(0).unwrap_or(1).clamp(1, 1 << 20) as usize;
        let mut st = lock(&s);
        let bytes: Vec<u8> = (0..n).map(|_| (st.next_random() & 0xff) as u8).collect();
        Ok(bytes)
    })?;

    register_time_functions(conn, state)
}

fn py_round(ctx: &Context<'_>, digits: i64, to_int: bool) -> rusqlite::Result<SqlValue> {
    let digits = i32::try_from(digits).map_err(|_| user_error("round: n is out of range"))?;
    match ctx.get_raw(0) {
        ValueRef::Null => Ok(SqlValue::Null),
        ValueRef::Integer(i) => Ok(SqlValue::Integer(round_int(i, digits))),
        ValueRef::Real(f) => {
            let r = python::number::round_half_even(f, digits);
            if to_int && r.is_finite() && r.abs() < 9.2e18 {
                Ok(SqlValue::Integer(r as i64))
            } else {
                Ok(SqlValue::Real(r))
            }
        }
        _ => Err(user_error("round() expects a number")),
    }
}

/// Python's `round(int, n)`: unchanged for n >= 0, half-even to a power of
/// ten otherwise.
fn round_int(i: i64, digits: i32) -> i64 {
    if digits >= 0 {
        return i;
    }
    if digits < -18 {
        return 0;
    }
    let m = 10_i64.pow(digits.unsigned_abs());
    let q = i.div_euclid(m);
    let r = i.rem_euclid(m);
    let twice = r * 2;
    let q = if twice > m || (twice == m && q % 2 != 0) {
        q + 1
    } else {
        q
    };
    q.saturating_mul(m)
}

/// A world's time zone is UTC, so SQLite's `localtime` and `utc` modifiers
/// convert between UTC and UTC: they are dropped. Left in, they would ask
/// the C library for the *host's* zone (`TZ`), and the same world would
/// show 09:00 on one machine and 18:00 on another. SQLite matches modifiers
/// case-insensitively and exactly, and reads blobs as text, so this does too.
/// `from` is the index of the first modifier.
fn drop_zone_modifiers(args: &mut Vec<SqlValue>, from: usize) {
    let is_zone = |bytes: &[u8]| {
        bytes.eq_ignore_ascii_case(b"localtime") || bytes.eq_ignore_ascii_case(b"utc")
    };
    let mut i = 0;
    args.retain(|arg| {
        let modifier = i >= from;
        i += 1;
        !(modifier
            && match arg {
                SqlValue::Text(t) => is_zone(t.as_bytes()),
                SqlValue::Blob(b) => is_zone(b),
                _ => false,
            })
    });
}

/// SQLite's date and time functions, with `'now'` meaning the simulated
/// clock and no host time zone. The real implementations run on a private
/// plain connection, so every other behaviour (modifiers, formats) is
/// SQLite's own.
fn register_time_functions(conn: &Connection, state: &SharedState) -> rusqlite::Result<()> {
    let helper = Connection::open_in_memory()?;
    super::limits::apply(&helper)?;
    let helper = Arc::new(Mutex::new(helper));
    for name in [
        "date",
        "time",
        "datetime",
        "julianday",
        "unixepoch",
        "strftime",
        "timediff",
    ] {
        let s = Arc::clone(state);
        let h = Arc::clone(&helper);
        conn.create_scalar_function(name, -1, FunctionFlags::SQLITE_UTF8, move |ctx| {
            let now = lock(&s).now_sqlite();
            let mut args: Vec<SqlValue> = (0..ctx.len())
                .map(|i| SqlValue::try_from(ctx.get_raw(i)).unwrap_or(SqlValue::Null))
                .collect();
            let first_time_arg = usize::from(name == "strftime");
            if args.len() <= first_time_arg && name != "timediff" {
                args.push(SqlValue::Text(now.clone()));
            }
            for arg in args.iter_mut().skip(first_time_arg) {
                if let SqlValue::Text(t) = arg {
                    if t.eq_ignore_ascii_case("now") {
                        *t = now.clone();
                    }
                }
            }
            if name != "timediff" {
                drop_zone_modifiers(&mut args, first_time_arg + 1);
            }
            let placeholders = vec!["?"; args.len()].join(",");
            let sql = format!("SELECT {name}({placeholders})");
            let helper = h.lock().unwrap_or_else(|e| e.into_inner());
            let mut stmt = helper.prepare_cached(&sql)?;
            stmt.query_row(rusqlite::params_from_iter(args.iter()), |r| {
                r.get::<_, SqlValue>(0)
            })
        })?;
    }
    for (name, fmt) in [
        ("current_timestamp", "%Y-%m-%d %H:%M:%S"),
        ("current_date", "%Y-%m-%d"),
        ("current_time", "%H:%M:%S"),
    ] {
        let s = Arc::clone(state);
        conn.create_scalar_function(name, 0, FunctionFlags::SQLITE_UTF8, move |_| {
            let clock = lock(&s).clock;
            Ok(DateTime::<Utc>::from_timestamp(clock, 0)
                .unwrap_or_default()
                .format(fmt)
                .to_string())
        })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids() -> IdFormats {
        IdFormats {
            separator: "-".into(),
            width: 6,
            start: 1,
        }
    }

    #[test]
    fn regexp_matches_with_the_regex_syntax_and_says_what_is_wrong() {
        let conn = Connection::open_in_memory().unwrap();
        let state: SharedState = Arc::new(Mutex::new(SimState::new(0, 0, ids())));
        register(&conn, &state).unwrap();
        let one =
            |sql: &str| -> rusqlite::Result<Option<bool>> { conn.query_row(sql, [], |r| r.get(0)) };
        assert_eq!(
            one("SELECT 'INV-24073' REGEXP '^INV-[0-9]{5}$'").unwrap(),
            Some(true)
        );
        assert_eq!(
            one("SELECT 'Refund duplicate' REGEXP '(?i)DUPLICATE'").unwrap(),
            Some(true)
        );
        assert_eq!(
            one("SELECT 'INV-2407' REGEXP '^INV-[0-9]{5}$'").unwrap(),
            Some(false)
        );
        assert_eq!(one("SELECT 7900 REGEXP '^79'").unwrap(), Some(true));
        assert_eq!(one("SELECT NULL REGEXP 'x'").unwrap(), None);
        let err = one("SELECT 'a' REGEXP '(unclosed'")
            .unwrap_err()
            .to_string();
        assert!(err.contains("is not a valid pattern"), "{err}");
    }

    #[test]
    fn round_int_half_even() {
        assert_eq!(round_int(1250, -2), 1200);
        assert_eq!(round_int(1350, -2), 1400);
        assert_eq!(round_int(-1250, -2), -1200);
        assert_eq!(round_int(7, 2), 7);
    }

    #[test]
    fn zone_modifiers_are_dropped_from_modifier_positions_only() {
        let text = |t: &str| SqlValue::Text(t.to_string());
        let mut args = vec![
            text("localtime"),
            text("LocalTime"),
            text("+1 day"),
            SqlValue::Blob(b"utc".to_vec()),
            text("utc "),
        ];
        drop_zone_modifiers(&mut args, 1);
        assert_eq!(args, vec![text("localtime"), text("+1 day"), text("utc ")]);
    }

    #[test]
    fn localtime_reads_as_utc() {
        // 2025-03-04T09:00:00Z
        let state: SharedState = Arc::new(Mutex::new(SimState::new(1_741_078_800, 0, ids())));
        let conn = Connection::open_in_memory().unwrap();
        register(&conn, &state).unwrap();
        let row: (String, String, String) = conn
            .query_row(
                "SELECT datetime('now', 'localtime'), datetime('2025-03-04 09:00:00', 'utc'), strftime('%H:%M', 'now', 'LOCALTIME', '+1 hour')",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )
            .unwrap();
        assert_eq!(
            row,
            (
                "2025-03-04 09:00:00".to_string(),
                "2025-03-04 09:00:00".to_string(),
                "10:00".to_string()
            )
        );
    }

    #[test]
    fn ids_are_sequential_per_prefix() {
        let mut s = SimState::new(0, 1, ids());
        assert_eq!(s.new_id("RF"), "RF-000001");
        assert_eq!(s.new_id("RF"), "RF-000002");
        assert_eq!(s.new_id("ESC"), "ESC-000001");
    }

    #[test]
    fn the_clock_stops_at_the_end_of_year_9999() {
        let mut s = SimState::new(MAX_CLOCK - 10, 0, ids());
        s.advance(i64::MAX);
        assert_eq!(s.clock, MAX_CLOCK);
        assert_eq!(s.now_rfc3339(), "9999-12-31T23:59:59Z");
    }

    #[test]
    fn restored_draws_are_drawn_again() {
        let mut s = SimState::new(0, 7, ids());
        let saved = s.draws();
        let (id, r) = (s.new_id("X"), s.next_random());
        s.restore(saved);
        assert_eq!((s.new_id("X"), s.next_random()), (id, r));
    }
}
