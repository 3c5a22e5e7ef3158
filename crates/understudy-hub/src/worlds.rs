//! Worlds on the hub, by content hash: an uploaded folder is loaded with the
//! engine's own loader before it is stored, so the hash the hub records is
//! the one the engine computes, and every episode pushed against it names
//! exactly what it was recorded against.

use std::path::{Component, Path};

use tokio_postgres::Client;

use crate::error::{codes, ApiError};
use crate::people::Person;
use crate::wire::{WorldInfo, WorldUpload};

/// A world file's path as uploaded: relative, `/`-separated, no `..`.
fn safe_path(path: &str) -> Result<&Path, ApiError> {
    let p = Path::new(path);
    let ok = !path.is_empty()
        && !path.contains('\\')
        && p.components().all(|c| matches!(c, Component::Normal(_)));
    if ok {
        Ok(p)
    } else {
        Err(ApiError::bad_request(format!(
            "files: `{path}` is not a relative path inside the world folder"
        )))
    }
}

/// Loads the uploaded folder and stores it (a world already stored under
/// the same hash is left as it is).
pub(crate) async fn upload(
    db: &mut Client,
    caller: &Person,
    upload: WorldUpload,
) -> Result<WorldInfo, ApiError> {
    if !caller.role.uploads_worlds() {
        return Err(caller.refused("only engineers and admins upload worlds"));
    }
    let mut files = Vec::with_capacity(upload.files.len());
    for f in &upload.files {
        safe_path(&f.path)?;
        let bytes = hex::decode(&f.hex).map_err(|e| {
            ApiError::bad_request(format!(
                "files: `{}`: `hex` is not hexadecimal ({e})",
                f.path
            ))
        })?;
        files.push((f.path.clone(), bytes));
    }
    let to_load = files.clone();
    let (loaded, tasks) =
        tokio::task::spawn_blocking(move || -> Result<(WorldInfo, Vec<String>), ApiError> {
            let dir = tempfile::tempdir().map_err(|e| {
                ApiError::new(500, codes::DATABASE, format!("a temporary folder: {e}"))
            })?;
            for (path, bytes) in &to_load {
                let full = dir.path().join(path);
                if let Some(parent) = full.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| {
                        ApiError::new(500, codes::DATABASE, format!("writing {path}: {e}"))
                    })?;
                }
                std::fs::write(&full, bytes).map_err(|e| {
                    ApiError::new(500, codes::DATABASE, format!("writing {path}: {e}"))
                })?;
            }
            let world = understudy::World::load(dir.path()).map_err(|e| {
                ApiError::new(
                    422,
                    codes::WORLD_INVALID,
                    format!("the uploaded world does not load: {e}"),
                )
            })?;
            Ok((
                WorldInfo {
                    hash: world.content_hash.clone(),
                    world_id: world.meta.id.clone(),
                    version: world.meta.version.clone(),
                    name: world.meta.name.clone(),
                },
                world.tasks.keys().cloned().collect(),
            ))
        })
        .await
        .map_err(|e| ApiError::new(500, codes::DATABASE, format!("loading the world: {e}")))??;
    let tx = db.transaction().await?;
    let added = tx
        .execute(
            "INSERT INTO worlds (hash, world_id, version, name, task_ids, changed_by) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (hash) DO NOTHING",
            &[&loaded.hash, &loaded.world_id, &loaded.version, &loaded.name, &tasks, &caller.id],
        )
        .await?;
    if added == 1 {
        for (path, bytes) in &files {
            tx.execute(
                "INSERT INTO world_files (world_hash, path, content) VALUES ($1, $2, $3)",
                &[&loaded.hash, path, bytes],
            )
            .await?;
        }
    }
    tx.commit().await?;
    Ok(loaded)
}

/// Every world the hub stores.
pub(crate) async fn list(db: &Client) -> Result<Vec<WorldInfo>, ApiError> {
    Ok(db
        .query(
            "SELECT hash, world_id, version, name FROM worlds ORDER BY world_id, changed_at",
            &[],
        )
        .await?
        .iter()
        .map(|r| WorldInfo {
            hash: r.get(0),
            world_id: r.get(1),
            version: r.get(2),
            name: r.get(3),
        })
        .collect())
}

/// A stored world's files, for a client to record against.
pub(crate) async fn files(db: &Client, hash: &str) -> Result<WorldUpload, ApiError> {
    let rows = db
        .query(
            "SELECT path, content FROM world_files WHERE world_hash = $1 ORDER BY path",
            &[&hash],
        )
        .await?;
    if rows.is_empty() {
        return Err(ApiError::not_found(format!(
            "the hub has no world with hash {hash}"
        )));
    }
    Ok(WorldUpload {
        files: rows
            .iter()
            .map(|r| crate::wire::WorldFile {
                path: r.get(0),
                hex: hex::encode(r.get::<_, Vec<u8>>(1)),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::safe_path;

    #[test]
    fn uploaded_paths_stay_inside_the_world_folder() {
        for ok in ["world.toml", "tools/a.toml", "data/seed/x.csv"] {
            assert!(safe_path(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "./world.toml",
            "a\\b",
        ] {
            let e = safe_path(bad).expect_err(bad);
            assert_eq!(e.code, "bad_request");
            assert!(e.message.contains("not a relative path"), "{}", e.message);
        }
    }
}
