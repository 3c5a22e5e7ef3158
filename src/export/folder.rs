//! A dataset folder: TRL rows in chunked JSONL files, `meta/info.json`
//! (counts, provenance, checksums) and a dataset card whose YAML front
//! matter tells Hugging Face `datasets` how to load it.
//!
//! ```text
//! out/
//!   README.md               dataset card (configs, features, provenance)
//!   meta/info.json          format version, counts, worlds, tasks, SHA-256 of data files
//!   data/train-00000.jsonl  TRL rows, `rows_per_file` per file
//! ```
//!
//! The card's config carries the dataset's content hash. `datasets`
//! caches what it loaded from a local folder by the card's config and the
//! files' times, not their content, so without it a second export to the
//! same folder (written within the file system's time resolution) could
//! be handed the first one's rows from the cache.
//!
//! The card declares `messages` and `tools` as lists of JSON values
//! (`list: json`): tool arguments and parameter schemas differ from tool
//! to tool, and without the declaration `datasets` infers a different
//! Arrow schema per data file and refuses to combine them.
//!
//! Nothing in the folder depends on when it was written, so exporting the
//! same episodes twice gives identical files.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};

use super::{io_error, ExportOptions, ExportSummary, Format, Source, WorldSet, EXPORTER};
use crate::error::{Error, Result};

/// `meta/info.json`'s `format`.
pub(crate) const FORMAT: &str = "understudy.dataset/1";

/// Episodes per data file unless told otherwise: rows carry the policy and
/// tool specs, so a thousand rows is tens of megabytes.
pub const DEFAULT_ROWS_PER_FILE: usize = 1000;

/// One data file being written, hashed as it goes.
struct Chunk {
    path: PathBuf,
    rel: String,
    writer: BufWriter<File>,
    hasher: Sha256,
    rows: usize,
    bytes: u64,
}

#[derive(Serialize)]
struct FileInfo {
    path: String,
    rows: usize,
    bytes: u64,
    sha256: String,
}

impl Chunk {
    fn open(root: &Path, n: usize) -> Result<Chunk> {
        let rel = format!("data/train-{n:05}.jsonl");
        let path = root.join(&rel);
        let file =
            File::create(&path).map_err(|e| io_error(format!("creating {}", path.display()), e))?;
        Ok(Chunk {
            path,
            rel,
            writer: BufWriter::with_capacity(1 << 20, file),
            hasher: Sha256::new(),
            rows: 0,
            bytes: 0,
        })
    }

    fn write(&mut self, line: &[u8]) -> Result<()> {
        self.writer
            .write_all(line)
            .map_err(|e| io_error(format!("writing {}", self.path.display()), e))?;
        self.hasher.update(line);
        self.rows += 1;
        self.bytes += line.len() as u64;
        Ok(())
    }

    fn finish(self) -> Result<FileInfo> {
        let file = self
            .writer
            .into_inner()
            .map_err(|e| io_error(format!("writing {}", self.path.display()), e.into_error()))?;
        file.sync_all()
            .map_err(|e| io_error(format!("writing {}", self.path.display()), e))?;
        let sha256 = hex::encode(self.hasher.finalize());
        Ok(FileInfo {
            path: self.rel,
            rows: self.rows,
            bytes: self.bytes,
            sha256,
        })
    }
}

/// Writes the dataset folder at `output`. It is built next to `output` and
/// moved into place only when complete; an existing folder is replaced only
/// if it is empty or an earlier Understudy dataset, never anything else.
pub(crate) fn write(
    source: &Source<'_>,
    worlds: Option<&WorldSet>,
    options: &ExportOptions,
    output: &Path,
    progress: &dyn Fn(),
) -> Result<ExportSummary> {
    check_replaceable(output)?;
    let tmp = crate::output_file::partial_path(output);
    let _ = std::fs::remove_dir_all(&tmp);
    let result = build(source, worlds, options, &tmp, progress);
    let summary = match result {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_dir_all(&tmp);
            return Err(e);
        }
    };
    if output.exists() {
        let old = output.with_file_name(format!(
            "{}.old-{}",
            output
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            std::process::id()
        ));
        std::fs::rename(output, &old)
            .map_err(|e| io_error(format!("moving the old {} aside", output.display()), e))?;
        std::fs::rename(&tmp, output)
            .map_err(|e| io_error(format!("writing {}", output.display()), e))?;
        let _ = std::fs::remove_dir_all(&old);
    } else {
        std::fs::rename(&tmp, output)
            .map_err(|e| io_error(format!("writing {}", output.display()), e))?;
    }
    Ok(summary)
}

fn check_replaceable(output: &Path) -> Result<()> {
    if !output.exists() {
        return Ok(());
    }
    let refuse = |why: &str| {
        Err(Error::Conflict(format!(
            "{} {why}; it was left untouched. Choose another --output, or remove it first",
            output.display()
        )))
    };
    if !output.is_dir() {
        return refuse("exists and is not a folder");
    }
    let empty = std::fs::read_dir(output)
        .map_err(|e| io_error(format!("reading {}", output.display()), e))?
        .next()
        .is_none();
    if empty {
        return Ok(());
    }
    let info = std::fs::read_to_string(output.join("meta/info.json")).ok();
    let ours = info
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| {
            v.get("format")
                .and_then(|f| f.as_str())
                .is_some_and(|f| f.starts_with("understudy.dataset/"))
        });
    if ours {
        Ok(())
    } else {
        refuse("exists and is not an Understudy dataset folder")
    }
}

fn build(
    source: &Source<'_>,
    worlds: Option<&WorldSet>,
    options: &ExportOptions,
    root: &Path,
    progress: &dyn Fn(),
) -> Result<ExportSummary> {
    for dir in ["data", "meta"] {
        std::fs::create_dir_all(root.join(dir))
            .map_err(|e| io_error(format!("creating {}", root.join(dir).display()), e))?;
    }
    let per_file = options.rows_per_file.max(1);
    let mut files: Vec<FileInfo> = Vec::new();
    let mut chunk = Chunk::open(root, 0)?;
    // world id -> task id -> episodes; world id -> recorded content hashes
    let mut tasks: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    let mut recorded: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let row_options = ExportOptions {
        format: Format::Folder,
        ..options.clone()
    };
    let mut summary = super::write_rows(
        source,
        worlds,
        &row_options,
        &mut |line, record| {
            if chunk.rows == per_file {
                let next = Chunk::open(root, files.len() + 1)?;
                files.push(std::mem::replace(&mut chunk, next).finish()?);
            }
            *tasks
                .entry(record.world_id.clone())
                .or_default()
                .entry(record.task_id.clone())
                .or_default() += 1;
            recorded
                .entry(record.world_id.clone())
                .or_default()
                .insert(record.world_hash.clone());
            chunk.write(line)
        },
        progress,
    )?;
    files.push(chunk.finish()?);
    let worlds = worlds.ok_or_else(|| {
        Error::Other("a dataset folder needs the episodes' worlds (--worlds)".into())
    })?;
    let world_info: Vec<serde_json::Value> = tasks
        .iter()
        .filter_map(|(id, task_counts)| {
            let w = worlds.get(id)?;
            Some(json!({
                "id": id,
                "name": w.meta.name,
                "version": w.meta.version,
                "content_hash": w.content_hash,
                "recorded_content_hashes": recorded.get(id).map(|s| s.iter().collect::<Vec<_>>()).unwrap_or_default(),
                "tasks": task_counts.keys().collect::<Vec<_>>(),
            }))
        })
        .collect();
    let task_info: Vec<serde_json::Value> = tasks
        .iter()
        .flat_map(|(w, ts)| {
            ts.iter()
                .map(move |(t, n)| json!({"world_id": w, "task_id": t, "episodes": n}))
        })
        .collect();
    let content_sha256 = dataset_hash(&files);
    let f = &options.filter;
    let info = json!({
        "format": FORMAT,
        "exporter": EXPORTER,
        "content_sha256": content_sha256,
        "row_format": "trl",
        "counts": {"episodes": summary.episodes, "steps": summary.steps, "files": files.len()},
        "include_retracted": options.include_retracted,
        "rows_per_file": per_file,
        "filters": {
            "world": f.world,
            "task": f.task,
            "status": f.status.map(|s| s.as_str()),
            "expert": f.expert,
            "since": f.since.map(|t| t.to_rfc3339()),
            "until": f.until.map(|t| t.to_rfc3339()),
        },
        "worlds": world_info,
        "tasks": task_info,
        "files": files,
    });
    let text = serde_json::to_string_pretty(&info)
        .map_err(|e| Error::Other(format!("encoding meta/info.json: {e}")))?;
    write_file(&root.join("meta/info.json"), &(text + "\n"))?;
    write_file(
        &root.join("README.md"),
        &card(&summary, &world_info, &task_info, options, &content_sha256),
    )?;
    summary.files = std::iter::once(PathBuf::from("README.md"))
        .chain(std::iter::once(PathBuf::from("meta/info.json")))
        .chain(files.iter().map(|f| PathBuf::from(&f.path)))
        .collect();
    Ok(summary)
}

/// The dataset's content hash: SHA-256 over its data files' names and
/// hashes, in order, so two exports share it only if they hold the same rows.
fn dataset_hash(files: &[FileInfo]) -> String {
    let mut h = Sha256::new();
    for f in files {
        h.update(f.path.as_bytes());
        h.update(b" ");
        h.update(f.sha256.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

fn write_file(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| io_error(format!("writing {}", path.display()), e))
}

/// A JSON string is a valid YAML scalar, and quotes whatever a world's name
/// may contain.
fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// The dataset card: YAML front matter for `datasets` and the Hub, then a
/// human description with the provenance.
fn card(
    summary: &ExportSummary,
    worlds: &[serde_json::Value],
    tasks: &[serde_json::Value],
    options: &ExportOptions,
    content_sha256: &str,
) -> String {
    let names: Vec<String> = worlds
        .iter()
        .filter_map(|w| w.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect();
    let title = if names.is_empty() {
        "Understudy trajectories".to_string()
    } else {
        format!("Understudy trajectories: {}", names.join(", "))
    };
    let mut s = String::new();
    s.push_str("---\n");
    s.push_str(&format!("pretty_name: {}\n", yaml_str(&title)));
    s.push_str("language:\n- en\n");
    s.push_str("task_categories:\n- text-generation\n");
    s.push_str("tags:\n- understudy\n- agent-trajectories\n- tool-use\n- expert-demonstrations\n");
    s.push_str("configs:\n- config_name: default\n  data_files:\n  - split: train\n    path: data/train-*.jsonl\n");
    // In the config itself: `datasets` keys its cache by the config.
    s.push_str(&format!(
        "  description: {}\n",
        yaml_str(&format!(
            "Understudy export, content SHA-256 {content_sha256}"
        ))
    ));
    s.push_str(
        "dataset_info:\n  features:\n  - name: messages\n    list: json\n  - name: tools\n    list: json\n  - name: task_id\n    dtype: string\n  - name: world_id\n    dtype: string\n  - name: world_version\n    dtype: string\n  - name: episode_id\n    dtype: string\n  - name: actor\n    struct:\n    - name: kind\n      dtype: string\n    - name: id\n      dtype: string\n  - name: status\n    dtype: string\n  - name: reward\n    dtype: float64\n  - name: pass\n    dtype: bool\n",
    );
    s.push_str("---\n\n");
    s.push_str(&format!("# {title}\n\n"));
    s.push_str(&format!(
        "Expert (and agent) trajectories recorded with Understudy in simulated jobs: {} episodes, {} steps. \
One row per episode, in the Hugging Face / TRL conversational format (`messages` + `tools`).\n\n",
        summary.episodes, summary.steps
    ));
    s.push_str("```python\nfrom datasets import load_dataset\nds = load_dataset(\"path/to/this/folder\", split=\"train\")\n```\n\n");
    s.push_str("Needs `datasets` 5 or newer (for the `json` feature type).\n\n");
    s.push_str("## Columns\n\n| column | type | meaning |\n|---|---|---|\n");
    for (c, t, m) in [
        ("messages", "list of JSON objects", "system (task + policy), user (opening message), then per step an assistant turn and the tool's or customer's answer"),
        ("tools", "list of JSON objects", "the task's tools as `{\"type\": \"function\", \"function\": {name, description, parameters}}`"),
        ("task_id", "string", "the task within its world"),
        ("world_id", "string", "the world (simulated job)"),
        ("world_version", "string", "the world's version when the episode was recorded"),
        ("episode_id", "string", "the episode's id in the Understudy store"),
        ("actor", "struct {kind, id}", "`expert` with the expert's id, or `agent` with the model name"),
        ("status", "string", "submitted, approved, rejected, …"),
        ("reward", "float64 or null", "the rubric score, when the episode has been scored"),
        ("pass", "bool or null", "whether the scored episode passed: every gate and required criterion of its rubric met"),
    ] {
        s.push_str(&format!("| `{c}` | {t} | {m} |\n"));
    }
    s.push_str(
        "\nAn assistant turn carries the expert's rationale (\"why I did this\") once, as `reasoning_content`. \
A tool call has an `id` (`call_<step>`) that its tool turn names in `tool_call_id`; the tool turn holds the tool's text result, \
and a customer's reply to a message is a user turn. Every row ends on an assistant turn; episodes with none are left out.\n",
    );
    s.push_str(if options.include_retracted {
        "\nUndone (retracted) steps are **included**.\n"
    } else {
        "\nUndone (retracted) steps are left out.\n"
    });
    s.push_str("\n## Provenance\n\n");
    s.push_str(&format!(
        "Exported by {EXPORTER}. Content hash (SHA-256 over the data files): `{content_sha256}`; \
each file's checksum is in `meta/info.json`.\n\n"
    ));
    s.push_str("| world | version | content hash | tasks |\n|---|---|---|---|\n");
    for w in worlds {
        let get = |k: &str| w.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
        let world_tasks: Vec<String> = tasks
            .iter()
            .filter(|t| t.get("world_id") == w.get("id"))
            .map(|t| {
                format!(
                    "{} ({})",
                    t.get("task_id").and_then(|v| v.as_str()).unwrap_or(""),
                    t.get("episodes").and_then(|v| v.as_u64()).unwrap_or(0)
                )
            })
            .collect();
        s.push_str(&format!(
            "| {} | {} | `{}` | {} |\n",
            get("id"),
            get("version"),
            get("content_hash"),
            world_tasks.join(", ")
        ));
    }
    s
}
