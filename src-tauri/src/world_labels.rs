//! What a world calls its tables and columns on screen (`labels.toml`),
//! for the views that name records: the consensus of experts' runs and
//! the evidence on a grading sheet. The window falls back to a humanized
//! name where the world says nothing.

use std::collections::BTreeMap;

use serde::Serialize;
use ts_rs::TS;
use understudy::World;

/// A world's on-screen names of its tables and columns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, TS)]
pub struct WorldLabels {
    /// What the world calls each table on screen, by name.
    pub table_titles: BTreeMap<String, String>,
    /// The world's labels of each table's columns, by table and column.
    pub column_labels: BTreeMap<String, BTreeMap<String, String>>,
    /// What each tool is called on screen ("Open ticket" for `get_ticket`),
    /// so a run's steps read as the expert's tool finder names them.
    pub tool_titles: BTreeMap<String, String>,
}

impl WorldLabels {
    pub fn of(world: &World) -> WorldLabels {
        WorldLabels {
            table_titles: world
                .tables
                .iter()
                .filter_map(|t| Some((t.name.clone(), t.title.clone()?)))
                .collect(),
            column_labels: world
                .tables
                .iter()
                .map(|t| (t.name.clone(), t.labels.clone()))
                .collect(),
            tool_titles: world
                .expert_tool_specs()
                .into_iter()
                .map(|t| (t.name, t.title))
                .collect(),
        }
    }
}
