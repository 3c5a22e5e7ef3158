//! Accepting connections: HTTP/1.1 through hyper with a deadline for
//! request headers, a cap on open connections, and a shutdown that waits
//! for requests in flight only so long.
//!
//! `axum::serve` offers none of the three (it sets no timer, so hyper's
//! `header_read_timeout` never fires, and its graceful shutdown waits for
//! ever on a step that never ends), so the loop is hyper's own connection
//! builder. Connections allow upgrades (WebSocket sessions on `/ws`), and
//! hyper-util's graceful watcher does not take upgradeable connections, so
//! each connection task watches a [`Stopping`] signal itself. Shutdown
//! waits (within the grace) until every clone of the router's [`Stopping`]
//! is gone: connections hold one through their router clone, WebSocket
//! sessions one of their own.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch, Semaphore};

/// What [`serve`] holds: the signal it fires when shutdown begins, and
/// what tells it that every [`Stopping`] handed out is gone.
pub struct Stop {
    tx: watch::Sender<bool>,
    idle: mpsc::Receiver<()>,
}

/// A shutdown signal and the [`Stopping`] that the router (so every
/// connection) and every WebSocket session hold a clone of.
pub fn stop_signal() -> (Stop, Stopping) {
    let (tx, rx) = watch::channel(false);
    let (busy, idle) = mpsc::channel(1);
    (
        Stop { tx, idle },
        Stopping {
            rx,
            _busy: Some(busy),
            _keep: None,
        },
    )
}

/// Tells connections and WebSocket sessions that shutdown began; while a
/// clone lives, shutdown counts its holder as busy.
#[derive(Debug, Clone)]
pub struct Stopping {
    rx: watch::Receiver<bool>,
    _busy: Option<mpsc::Sender<()>>,
    /// The sender of a signal that never fires: a dropped sender would
    /// read as a stop.
    _keep: Option<Arc<watch::Sender<bool>>>,
}

impl Stopping {
    /// A signal that never fires, for routers served without [`serve`].
    pub fn never() -> Stopping {
        let (tx, rx) = watch::channel(false);
        Stopping {
            rx,
            _busy: None,
            _keep: Some(Arc::new(tx)),
        }
    }

    /// Completes once shutdown began (or the server is gone).
    pub async fn wait(&mut self) {
        let _ = self.rx.wait_for(|stopping| *stopping).await;
    }
}

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
    stop: Stop,
    shutdown: impl Future<Output = ()>,
) -> Instant {
    let Stop { tx: stop, mut idle } = stop;
    // Fires like the router's, without counting as busy: a connection
    // task is counted by its router clone.
    let watcher = Stopping {
        rx: stop.subscribe(),
        _busy: None,
        _keep: None,
    };
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
        let service = TowerToHyperService::new(app.clone());
        let mut stopping = watcher.clone();
        tokio::spawn(async move {
            let conn = builder
                .serve_connection(TokioIo::new(stream), service)
                .with_upgrades();
            let mut conn = std::pin::pin!(conn);
            let ended = tokio::select! {
                ended = conn.as_mut() => ended,
                _ = stopping.wait() => {
                    // Finish the request in flight, then close.
                    conn.as_mut().graceful_shutdown();
                    conn.await
                }
            };
            if let Err(e) = ended {
                tracing::debug!("connection ended: {e}");
            }
            drop(permit);
        });
    }
    drop(listener);
    // The router's clone of the signal counts as busy: only connections'
    // and WebSocket sessions' clones may keep shutdown waiting.
    drop(app);
    let started = Instant::now();
    let deadline = started
        .checked_add(limits.shutdown_grace)
        .unwrap_or(started);
    let _ = stop.send(true);
    if tokio::time::timeout_at(deadline.into(), idle.recv())
        .await
        .is_err()
    {
        tracing::warn!(
            "requests still running {:.1}s after shutdown began were abandoned",
            limits.shutdown_grace.as_secs_f64()
        );
    }
    deadline
}
