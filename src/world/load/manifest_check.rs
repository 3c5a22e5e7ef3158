//! Checking `world.toml` beyond its syntax: identity, clock and id format.

use super::names::is_slug;
use crate::diagnostics::Diagnostics;
use crate::sql::functions::{IdFormats, MAX_CLOCK, MIN_CLOCK};
use crate::world::manifest::WorldToml;
use crate::world::WorldMeta;

/// The most one step may move the clock: 366 days. More is no business
/// process, and it keeps `start + tick × steps` far from overflowing.
const MAX_TICK_SECONDS: i64 = 366 * 24 * 60 * 60;

/// The world's identity and simulation settings, or `None` when any of them
/// is wrong (every problem is reported).
pub(super) fn world_meta(m: &WorldToml, diags: &mut Diagnostics) -> Option<WorldMeta> {
    let before = diags.len();
    if m.format != 1 {
        diags.push(
            "world.toml",
            None,
            Some("format".into()),
            format!(
                "unsupported world format {}; this build reads format 1",
                m.format
            ),
        );
    }
    if !is_slug(&m.id) {
        diags.push("world.toml", None, Some("id".into()), format!("id {:?} must be lowercase letters, digits and dashes, starting with a letter or digit", m.id));
    }
    if m.name.trim().is_empty() {
        diags.push(
            "world.toml",
            None,
            Some("name".into()),
            "name must not be empty",
        );
    }
    if m.version.trim().is_empty() {
        diags.push(
            "world.toml",
            None,
            Some("version".into()),
            "version must not be empty",
        );
    }
    let clock_start = match chrono::DateTime::parse_from_rfc3339(&m.clock.start) {
        Ok(t) if !(MIN_CLOCK..=MAX_CLOCK).contains(&t.timestamp()) => {
            diags.push(
                "world.toml",
                None,
                Some("clock.start".into()),
                format!(
                    "{:?} is outside the years 0000 to 9999 in UTC, which the simulated clock and SQLite's date functions cover",
                    m.clock.start
                ),
            );
            0
        }
        Ok(t) => t.timestamp(),
        Err(e) => {
            diags.push(
                "world.toml",
                None,
                Some("clock.start".into()),
                format!(
                    "expected an RFC 3339 time such as 2025-03-04T09:00:00Z, got {:?} ({e})",
                    m.clock.start
                ),
            );
            0
        }
    };
    if m.clock.tick_seconds < 0 {
        diags.push(
            "world.toml",
            None,
            Some("clock.tick_seconds".into()),
            "must be zero or more",
        );
    } else if m.clock.tick_seconds > MAX_TICK_SECONDS {
        diags.push(
            "world.toml",
            None,
            Some("clock.tick_seconds".into()),
            format!(
                "{} is more than {MAX_TICK_SECONDS} (366 days), the most one step may move the clock",
                m.clock.tick_seconds
            ),
        );
    }
    let user = m.user.trim();
    if user.is_empty() || user.len() > 40 || user.contains(['\n', '\r']) {
        diags.push(
            "world.toml",
            None,
            Some("user".into()),
            format!("expected a short name for the world's user, such as \"patient\" or \"client\" (one line, at most 40 bytes), got {:?}", m.user),
        );
    }
    if m.ids.width > 20 {
        diags.push(
            "world.toml",
            None,
            Some("ids.width".into()),
            "must be at most 20",
        );
    }
    if diags.len() > before {
        return None;
    }
    Some(WorldMeta {
        id: m.id.clone(),
        name: m.name.clone(),
        version: m.version.clone(),
        description: m.description.clone(),
        user: m.user.trim().to_string(),
        clock_start,
        tick_seconds: m.clock.tick_seconds,
        ids: IdFormats::from(&m.ids),
    })
}
