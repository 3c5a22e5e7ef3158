//! Accepting connections: HTTP/1.1 through hyper with a deadline for
//! request headers, a cap on open connections, and a shutdown that waits
//! for requests in flight only so long.
//!
//! `axum::serve` offers none of the three (it sets no timer, so hyper's
//! `header_read_timeout` never fires, and its graceful shutdown waits for
//! ever on a step that never ends), so the loop is hyper's own connection
//! builder under a hyper-util graceful-shutdown watcher.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// How the connection loop is bounded.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A client must send a request's whole header within this time, on a
    /// new connection and between keep-alive requests alike; else the
    /// connection is closed.
    pub header_timeout: Duration,
    /// At most this many connections are open; more wait to be accepted.
    pub max_connections: usize,
    /// After shutdown starts, requests in flight get this long to finish.
    pub shutdown_grace: Duration,
}

/// Serves `app` on `listener` until `shutdown` completes, then lets
/// requests in flight finish for at most `limits.shutdown_grace`; those
/// still running then are abandoned (with the process). Returns when the
/// grace ends: shutdown start plus `shutdown_grace`.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) -> Instant {
    let graceful = GracefulShutdown::new();
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let permit = tokio::select! {
            _ = &mut shutdown => break,
            p = Arc::clone(&permits).acquire_owned() => match p {
                Ok(p) => p,
                Err(_) => break,
            },
        };
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: pause, go on.
                    tracing::warn!("cannot accept a connection: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let _ = stream.set_nodelay(true);
        let mut builder = http1::Builder::new();
        builder
            .timer(TokioTimer::new())
            .header_read_timeout(limits.header_timeout);
        let conn =
            builder.serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!("connection ended: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    let started = Instant::now();
    let deadline = started
        .checked_add(limits.shutdown_grace)
        .unwrap_or(started);
    let busy = graceful.count();
    if tokio::time::timeout_at(deadline.into(), graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!(
            busy,
            "requests still running {:.1}s after shutdown began were abandoned",
            limits.shutdown_grace.as_secs_f64()
        );
    }
    deadline
}
