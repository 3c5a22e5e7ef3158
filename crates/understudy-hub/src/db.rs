//! The hub's PostgreSQL database: connecting (a pool) and migrating the
//! schema (numbered SQL files in `migrations/`, embedded at build time and
//! applied by refinery, which records them in `refinery_schema_history`).

use std::str::FromStr;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio_postgres::NoTls;

use crate::error::HubError;

mod embedded {
    refinery::embed_migrations!("migrations");
}

/// How many connections the server keeps open at most.
pub const POOL_SIZE: usize = 16;

/// The URL with any password replaced, for messages.
pub fn redact(url: &str) -> String {
    match tokio_postgres::Config::from_str(url) {
        Ok(c) if c.get_password().is_some() => {
            let mut shown = url.to_string();
            if let Some(p) = c.get_password().and_then(|p| std::str::from_utf8(p).ok()) {
                if !p.is_empty() {
                    shown = shown.replace(p, "***");
                }
            }
            shown
        }
        _ => url.to_string(),
    }
}

fn config(url: &str) -> Result<tokio_postgres::Config, HubError> {
    tokio_postgres::Config::from_str(url).map_err(|e| HubError::Database {
        url: redact(url),
        message: format!(
            "not a PostgreSQL URL ({e}); expected e.g. postgres://user@host:5432/dbname"
        ),
    })
}

/// A connection pool on `url`. Connections are made when first needed.
pub fn pool(url: &str) -> Result<Pool, HubError> {
    let manager = Manager::from_config(
        config(url)?,
        NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(POOL_SIZE)
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .build()
        .map_err(|e| HubError::Database {
            url: redact(url),
            message: e.to_string(),
        })
}

/// Brings the database at `url` to this build's schema, on a connection of
/// its own. Safe to call on every start: applied migrations are skipped.
pub async fn migrate(url: &str) -> Result<(), HubError> {
    let (mut client, connection) =
        config(url)?
            .connect(NoTls)
            .await
            .map_err(|e| HubError::Database {
                url: redact(url),
                message: e.to_string(),
            })?;
    let conn = tokio::spawn(connection);
    // Two hubs starting at once on a new database must not both create
    // the schema: the first holds this lock until it is done.
    client
        .batch_execute("SELECT pg_advisory_lock(7311975)")
        .await
        .map_err(|e| HubError::Migration(e.to_string()))?;
    let result = embedded::migrations::runner()
        .run_async(&mut client)
        .await
        .map_err(|e| HubError::Migration(e.to_string()));
    let _ = client
        .batch_execute("SELECT pg_advisory_unlock(7311975)")
        .await;
    drop(client);
    let _ = conn.await;
    result.map(|_| ())
}

/// Connects a pool and migrates: what a server and the admin commands do
/// first.
pub async fn open(url: &str) -> Result<Pool, HubError> {
    migrate(url).await?;
    let pool = pool(url)?;
    // Fail at start, not at the first request, when the database is gone.
    let first = pool.get().await.map_err(|e| HubError::Database {
        url: redact(url),
        message: e.to_string(),
    })?;
    drop(first);
    Ok(pool)
}
