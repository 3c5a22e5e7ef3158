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

/// The URL with any password replaced, for messages: the userinfo's part
/// after `:` (`postgres://user:***@host/db`), read as text so that a URL
/// that does not parse is redacted too.
pub fn redact(url: &str) -> String {
    let Some(scheme_end) = url.find("://").map(|i| i + 3) else {
        return url.to_string();
    };
    let rest = &url[scheme_end..];
    let Some(at) = rest.rfind('@') else {
        return url.to_string();
    };
    match rest[..at].find(':') {
        Some(colon) => format!(
            "{}{}:***{}",
            &url[..scheme_end],
            &rest[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_kept_out_of_messages() {
        assert_eq!(
            redact("postgres://hub:s3cret@db:5432/hub"),
            "postgres://hub:***@db:5432/hub"
        );
        assert_eq!(redact("postgres://hub@db/hub"), "postgres://hub@db/hub");
        let e = pool("postgres://hub:s3cret@db:notaport/hub").expect_err("a bad URL");
        let text = e.to_string();
        assert!(text.contains("not a PostgreSQL URL"), "{text}");
        assert!(!text.contains("s3cret"), "{text}");
    }
}
