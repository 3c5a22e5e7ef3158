//! The accept loop, with the limits a server on a shared network needs:
//! a connection that does not finish its request head in time is closed
//! (a slow or stalled client cannot hold a connection forever), at most
//! `max_connections` are served at once (one more is answered 503 `busy`
//! and closed, which clients retry), and bodies are capped by the `Body`
//! extractor (413).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;

use crate::error::{codes, ApiError};

/// Bodies larger than this are refused (413), before any parsing.
pub const DEFAULT_MAX_BODY_BYTES: usize = 32 * 1024 * 1024;
/// A request head (request line and headers) must arrive within this.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Connections served at once.
pub const DEFAULT_MAX_CONNECTIONS: usize = 256;
/// How long a stopping server waits for requests in flight.
const DRAIN: Duration = Duration::from_secs(10);

/// What a server accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The largest request body accepted.
    pub max_body_bytes: usize,
    /// How long a connection may take to send a request's head; idle
    /// keep-alive connections are closed after it too.
    pub header_read_timeout: Duration,
    /// Connections served at once; more are answered `503 busy`.
    pub max_connections: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            header_read_timeout: DEFAULT_HEADER_READ_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }
}

/// Serves `app` on `listener` within `limits` until `shutdown` completes,
/// then waits (up to ten seconds) for the requests in flight.
pub async fn serve_listener(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout);
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: wait, do not spin.
                tracing::warn!("accepting a connection: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&permits).try_acquire_owned() else {
            tokio::spawn(refuse_busy(stream, limits.max_connections));
            continue;
        };
        let conn =
            builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!("connection: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    let _ = tokio::time::timeout(DRAIN, graceful.shutdown()).await;
}

/// Answers a connection over the cap with `503 busy` and closes it. The
/// request is read first (briefly), so the client sees the answer rather
/// than a reset.
async fn refuse_busy(mut stream: TcpStream, max: usize) {
    let mut buf = [0u8; 8192];
    let _ = tokio::time::timeout(Duration::from_millis(500), stream.read(&mut buf)).await;
    let body = serde_json::to_string(&ApiError::new(
        503,
        codes::BUSY,
        format!("the hub is serving its maximum of {max} connections; try again in a moment"),
    ))
    .unwrap_or_default();
    let answer = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: {}\r\nretry-after: 1\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}
