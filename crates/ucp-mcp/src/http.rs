//! Streamable HTTP at `/mcp`: rmcp's service (one handler, so one agent
//! session, per MCP session id) behind a guard that checks the bearer
//! token and the request body, answering every refusal with a JSON-RPC
//! error object.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt as _;
use axum::Router;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::{Library, UcpServer};

/// Default largest request body, in bytes.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// How the HTTP transport serves.
#[derive(Debug, Clone)]
pub struct HttpConfig {
    /// Where it listens (its IP decides whether a token is required).
    pub addr: SocketAddr,
    /// The bearer token every request must carry.
    pub token: Option<String>,
    /// Largest request body, in bytes.
    pub max_request_bytes: usize,
    /// Most tokens of one result.
    pub max_result_tokens: usize,
}

impl HttpConfig {
    /// Refuses a configuration that would expose the server without a
    /// token (anything but a loopback address).
    pub fn check(&self) -> Result<(), String> {
        match &self.token {
            Some(token) if token.trim().is_empty() => Err("the bearer token is empty".into()),
            None if !self.addr.ip().is_loopback() => {
                Err(format!("{} is not a loopback address: give a bearer token (--token or UCP_MCP_TOKEN)", self.addr))
            }
            _ => Ok(()),
        }
    }
}

#[derive(Clone)]
struct Guard {
    token: Option<Arc<str>>,
    max_request_bytes: usize,
}

/// A JSON-RPC error response with an HTTP status.
fn rpc_error(status: StatusCode, code: i64, message: String, id: Value) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

/// Compares without an early exit, so timing does not reveal the token.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len() && given.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

async fn guard(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    if let Some(token) = &guard.token {
        let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        let ok =
            given.and_then(|v| v.strip_prefix("Bearer ")).is_some_and(|v| same_secret(v.as_bytes(), token.as_bytes()));
        if !ok {
            let mut response =
                rpc_error(StatusCode::UNAUTHORIZED, -32001, "a valid bearer token is required".into(), Value::Null);
            response.headers_mut().insert(header::WWW_AUTHENTICATE, "Bearer".parse().expect("valid header"));
            return response;
        }
    }
    if request.method() == Method::DELETE {
        // rmcp answers a closed session with 202; clients expect 200 or 204.
        let mut response = next.run(request).await;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        return response;
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let bytes: Bytes = match axum::body::to_bytes(body, guard.max_request_bytes).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                -32600,
                format!("the request is larger than {} bytes", guard.max_request_bytes),
                Value::Null,
            )
        }
    };
    if let Err(e) = serde_json::from_slice::<ClientJsonRpcMessage>(&bytes) {
        // Refused: parse again only to tell bad JSON from a bad message.
        return match serde_json::from_slice::<Value>(&bytes) {
            Err(e) => rpc_error(StatusCode::BAD_REQUEST, -32700, format!("parse error: {e}"), Value::Null),
            Ok(value) => {
                let id = value.get("id").cloned().unwrap_or(Value::Null);
                rpc_error(StatusCode::BAD_REQUEST, -32600, format!("not a JSON-RPC request the server knows: {e}"), id)
            }
        };
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The router: `/mcp` behind the guard. Sessions end when `shutdown` is
/// cancelled.
pub fn router(library: Arc<Library>, config: &HttpConfig, shutdown: CancellationToken) -> Router {
    let cap = config.max_result_tokens;
    let mut server_config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(config.max_request_bytes)
        .with_cancellation_token(shutdown);
    if !config.addr.ip().is_loopback() {
        // Reachable from elsewhere by the operator's choice, behind the token.
        server_config = server_config.disable_allowed_hosts();
    }
    let service = StreamableHttpService::new(
        move || Ok(UcpServer::new(Arc::clone(&library), cap)),
        Arc::new(LocalSessionManager::default()),
        server_config,
    );
    let guard_state =
        Guard { token: config.token.as_deref().map(Arc::from), max_request_bytes: config.max_request_bytes };
    Router::new().nest_service("/mcp", service).layer(middleware::from_fn_with_state(guard_state, guard))
}

/// Serves `router` on `listener` until Ctrl-C (or SIGTERM on Unix).
pub async fn serve_http(
    listener: tokio::net::TcpListener,
    router: Router,
    shutdown: CancellationToken,
) -> std::io::Result<()> {
    let stop = shutdown.clone();
    tokio::spawn(async move {
        wait_for_signal().await;
        stop.cancel();
    });
    // Responses are small SSE frames: without TCP_NODELAY, Nagle's algorithm
    // meets the client's delayed ACK and adds ~40 ms to every call.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set: {e}");
        }
    });
    axum::serve(listener, router).with_graceful_shutdown(async move { shutdown.cancelled().await }).await
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
    fn tokens_compare_whole() {
        assert!(same_secret(b"abc", b"abc"));
        assert!(!same_secret(b"abd", b"abc"));
        assert!(!same_secret(b"ab", b"abc"));
    }

    #[test]
    fn only_loopback_may_go_without_a_token() {
        let config = |addr: &str, token: Option<&str>| HttpConfig {
            addr: addr.parse().unwrap(),
            token: token.map(str::to_owned),
            max_request_bytes: MAX_REQUEST_BYTES,
            max_result_tokens: 8000,
        };
        assert!(config("127.0.0.1:0", None).check().is_ok());
        assert!(config("[::1]:0", None).check().is_ok());
        assert!(config("0.0.0.0:8080", None).check().unwrap_err().contains("bearer token"));
        assert!(config("0.0.0.0:8080", Some("s3cret")).check().is_ok());
        assert!(config("127.0.0.1:0", Some(" ")).check().is_err());
    }
}
