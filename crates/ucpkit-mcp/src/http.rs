//! Streamable HTTP at `/mcp`: rmcp's service (one handler, so one agent
//! session, per MCP session id, and the `Host` and `Origin` checks) behind
//! a guard that checks the bearer token and reads the request body within
//! a size and a time limit, answering every refusal with a JSON-RPC error
//! object.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{json, Value};
use tokio_util::sync::CancellationToken;

use crate::listen::{ConnectionLimits, Ticket};
use crate::UcpServer;
use ucpkit_registry::{Library, ToolOffer};

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
    /// The tools offered and the token cap of their results.
    pub offer: ToolOffer,
    /// Browser origins allowed besides the loopback ones a loopback
    /// server allows (`http://localhost:*` ...); a request carrying any
    /// other `Origin` is refused with 403.
    pub allowed_origins: Vec<String>,
    /// A request's body must arrive within this time.
    pub body_read_timeout: Duration,
    /// Header timeout and the cap on connections not yet authenticated.
    pub connections: ConnectionLimits,
    /// An MCP session with no request for this long is closed, freeing
    /// its agent session (a named one is saved).
    pub session_idle_timeout: Duration,
}

/// Default time an idle MCP session is kept.
pub const SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// Default time a client has to send a request's body.
pub const BODY_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// Origins a server bound to loopback allows: pages served from the same
/// machine, any port.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

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
    /// The token's digest: a given token is hashed and the digests are
    /// compared in constant time, so neither the token's bytes nor its
    /// length show in the timing.
    token: Option<blake3::Hash>,
    max_request_bytes: usize,
    body_read_timeout: Duration,
}

/// A JSON-RPC error response with an HTTP status.
fn rpc_error(status: StatusCode, code: i64, message: String, id: Value) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (status, [(header::CONTENT_TYPE, "application/json")], body.to_string()).into_response()
}

async fn guard(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    if let Some(token) = &guard.token {
        let given = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok());
        // `blake3::Hash`'s equality is constant-time.
        let ok = given.and_then(|v| v.strip_prefix("Bearer ")).is_some_and(|v| blake3::hash(v.as_bytes()) == *token);
        if !ok {
            let mut response =
                rpc_error(StatusCode::UNAUTHORIZED, -32001, "a valid bearer token is required".into(), Value::Null);
            response.headers_mut().insert(header::WWW_AUTHENTICATE, "Bearer".parse().expect("valid header"));
            return response;
        }
    }
    if let Some(ticket) = request.extensions().get::<Ticket>() {
        ticket.authenticated();
    }
    if request.method() == Method::DELETE {
        // rmcp answers a closed session with 202; clients expect 200 or 204.
        let mut response = next.run(request).await;
        if response.status() == StatusCode::ACCEPTED {
            *response.status_mut() = StatusCode::NO_CONTENT;
        }
        return as_rpc_error(response).await;
    }
    if request.method() != Method::POST {
        return as_rpc_error(next.run(request).await).await;
    }
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(guard.body_read_timeout, axum::body::to_bytes(body, guard.max_request_bytes));
    let bytes: Bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return rpc_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                -32600,
                format!("the request is larger than {} bytes", guard.max_request_bytes),
                Value::Null,
            )
        }
        Err(_) => {
            return rpc_error(
                StatusCode::REQUEST_TIMEOUT,
                -32600,
                format!("the request body did not arrive within {:?}", guard.body_read_timeout),
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
    as_rpc_error(next.run(Request::from_parts(parts, Body::from(bytes))).await).await
}

/// rmcp refuses some requests with a plain-text body (a foreign `Host` or
/// `Origin`: 403; an `Accept` without both JSON and SSE: 406; an unknown
/// session: 404 ...): every refusal becomes a JSON-RPC error object, with
/// the same status and headers.
async fn as_rpc_error(response: Response) -> Response {
    let status = response.status();
    let json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|t| t.starts_with("application/json") || t.starts_with("text/event-stream"));
    if json || !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 4096).await.unwrap_or_default();
    let mut message = String::from_utf8_lossy(&text).trim().to_owned();
    if message.is_empty() {
        message = status.canonical_reason().unwrap_or("refused").to_owned();
    }
    let code = if status.is_server_error() { -32603 } else { -32600 };
    let mut refused = rpc_error(status, code, message, Value::Null);
    for (name, value) in &parts.headers {
        if name != header::CONTENT_TYPE && name != header::CONTENT_LENGTH {
            refused.headers_mut().insert(name.clone(), value.clone());
        }
    }
    refused
}

/// The router: `/mcp` behind the guard. Sessions end when `shutdown` is
/// cancelled.
pub fn router(library: Arc<Library>, config: &HttpConfig, shutdown: CancellationToken) -> Router {
    let offer = Arc::new(config.offer.clone());
    let mut server_config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(config.max_request_bytes)
        .with_cancellation_token(shutdown);
    let mut origins = config.allowed_origins.clone();
    if config.addr.ip().is_loopback() {
        origins.extend(LOOPBACK_ORIGINS.map(str::to_owned));
    } else {
        // Reachable from elsewhere by the operator's choice, behind the token.
        server_config = server_config.disable_allowed_hosts();
    }
    // A browser page may only call from an allowed origin (the MCP spec's
    // defence against DNS rebinding); clients that send no Origin pass.
    server_config = server_config.with_allowed_origins(origins).enforce_origin_validation();
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(config.session_idle_timeout);
    let service = StreamableHttpService::new(
        move || Ok(UcpServer::new(Arc::clone(&library), Arc::clone(&offer))),
        Arc::new(sessions),
        server_config,
    );
    let guard_state = Guard {
        token: config.token.as_deref().map(|token| blake3::hash(token.as_bytes())),
        max_request_bytes: config.max_request_bytes,
        body_read_timeout: config.body_read_timeout,
    };
    Router::new().nest_service("/mcp", service).layer(middleware::from_fn_with_state(guard_state, guard))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_may_go_without_a_token() {
        let config = |addr: &str, token: Option<&str>| HttpConfig {
            addr: addr.parse().unwrap(),
            token: token.map(str::to_owned),
            max_request_bytes: MAX_REQUEST_BYTES,
            offer: ToolOffer::documents(8000),
            allowed_origins: Vec::new(),
            body_read_timeout: BODY_READ_TIMEOUT,
            connections: ConnectionLimits::default(),
            session_idle_timeout: SESSION_IDLE_TIMEOUT,
        };
        assert!(config("127.0.0.1:0", None).check().is_ok());
        assert!(config("[::1]:0", None).check().is_ok());
        assert!(config("0.0.0.0:8080", None).check().unwrap_err().contains("bearer token"));
        assert!(config("0.0.0.0:8080", Some("s3cret")).check().is_ok());
        assert!(config("127.0.0.1:0", Some(" ")).check().is_err());
    }
}
