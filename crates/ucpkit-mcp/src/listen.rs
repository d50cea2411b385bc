//! Accepting HTTP connections: hyper's HTTP/1 server with a header read
//! timeout, TCP_NODELAY, graceful shutdown, and a cap on connections that
//! have not yet sent one authenticated request.
//!
//! A connection is *pending* from its accept until the guard lets a
//! request through (a valid token, or any well-formed request when no
//! token is set). Pending connections are few by design: a client that
//! sends only part of its headers (slowloris) is closed after the header
//! timeout, and when `max_pending` are open, the oldest is closed to make
//! room, so a real client is not locked out by idle sockets.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::extract::Request;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt as _;

/// How long a stopping server waits for open responses to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Limits on the connections of the HTTP server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// A client must send a request's whole header within this time.
    pub header_read_timeout: Duration,
    /// Most connections open at once that have not sent an authenticated
    /// request yet; at the cap, the oldest is closed.
    pub max_pending: usize,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits { header_read_timeout: Duration::from_secs(10), max_pending: 64 }
    }
}

/// The pending connections, oldest first, each with the token that closes it.
#[derive(Default)]
struct Pending {
    next: u64,
    open: BTreeMap<u64, CancellationToken>,
}

/// One connection's place among the pending ones; it leaves them when the
/// guard accepts one of its requests, or when the connection ends.
#[derive(Clone)]
pub(crate) struct Ticket {
    id: u64,
    pending: Arc<Mutex<Pending>>,
}

fn lock(pending: &Mutex<Pending>) -> MutexGuard<'_, Pending> {
    pending.lock().unwrap_or_else(|e| e.into_inner())
}

impl Ticket {
    /// Admits a new connection, closing the oldest pending one when
    /// `max_pending` are open; returns its ticket and the token that
    /// closes it.
    fn admit(pending: &Arc<Mutex<Pending>>, max_pending: usize) -> (Ticket, CancellationToken) {
        let mut guard = lock(pending);
        while guard.open.len() >= max_pending.max(1) {
            match guard.open.pop_first() {
                Some((_, oldest)) => oldest.cancel(),
                None => break,
            }
        }
        let id = guard.next;
        guard.next += 1;
        let close = CancellationToken::new();
        guard.open.insert(id, close.clone());
        (Ticket { id, pending: Arc::clone(pending) }, close)
    }

    /// The connection sent an authenticated request: it no longer counts.
    pub(crate) fn authenticated(&self) {
        lock(&self.pending).open.remove(&self.id);
    }
}

/// Serves `router` on `listener` until `shutdown` is cancelled (or Ctrl-C
/// or SIGTERM arrives), within `limits`.
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: CancellationToken,
    limits: ConnectionLimits,
) -> std::io::Result<()> {
    let stop = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        stop.cancel();
    });
    let graceful = GracefulShutdown::new();
    let pending = Arc::new(Mutex::new(Pending::default()));
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder.timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    loop {
        let (tcp, _) = tokio::select! {
            _ = shutdown.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors, or a connection reset before accept: go on.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        // Responses are small SSE frames: without TCP_NODELAY, Nagle's
        // algorithm meets the client's delayed ACK and adds ~40 ms a call.
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set: {e}");
        }
        let (ticket, close) = Ticket::admit(&pending, limits.max_pending);
        let router = router.clone();
        let tagged = ticket.clone();
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(tagged.clone());
            router.clone().oneshot(request)
        });
        let connection = graceful.watch(builder.serve_connection(TokioIo::new(tcp), service));
        tokio::spawn(async move {
            tokio::select! {
                result = connection => {
                    if let Err(e) = result {
                        tracing::debug!("connection ended: {e}");
                    }
                }
                _ = close.cancelled() => tracing::debug!("closed a pending connection to make room"),
            }
            ticket.authenticated();
        });
    }
    if tokio::time::timeout(SHUTDOWN_GRACE, graceful.shutdown()).await.is_err() {
        tracing::info!("some connections were still open after {SHUTDOWN_GRACE:?}; stopped anyway");
    }
    Ok(())
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = tokio::signal::ctrl_c().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_oldest_pending_connection_makes_room() {
        let pending = Arc::new(Mutex::new(Pending::default()));
        let (first, first_close) = Ticket::admit(&pending, 2);
        let (_second, second_close) = Ticket::admit(&pending, 2);
        first.authenticated();
        let (_third, _) = Ticket::admit(&pending, 2);
        assert!(!first_close.is_cancelled() && !second_close.is_cancelled(), "the first left the pending ones");
        let (_fourth, _) = Ticket::admit(&pending, 2);
        assert!(second_close.is_cancelled(), "the oldest pending one was closed");
        assert_eq!(lock(&pending).open.len(), 2);
    }
}
