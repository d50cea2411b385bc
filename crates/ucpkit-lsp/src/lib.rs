//! A Language Server Protocol client for coding agents. [`Lsp`] starts
//! the language server of a file's language on first use (from
//! [`LspConfig`]: built-in defaults or a TOML file), keeps it, starts it
//! again when it has crashed, opens the files asked about (and sends their
//! text again when it changed on disk), and shuts every server down when
//! dropped. Requests time out. Positions are 1-based lines and columns
//! (counted in characters, as an editor shows them; LSP's UTF-16 offsets
//! are converted both ways), and every result place carries its line of
//! code, so an agent reads the answer without opening the file.

mod config;
mod server;
mod transport;
mod uri;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use lsp_types::{DocumentSymbolResponse, GotoDefinitionResponse, Hover, HoverContents, Location, MarkedString};
use serde::Serialize;
use serde_json::{json, Value};

pub use config::{LspConfig, ServerConfig};
use server::Server;
use uri::{file_uri, uri_path};

/// Seconds a request may take by default (a server still indexing a
/// large project answers its first request late).
const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// The longest a request may be given.
const MAX_TIMEOUT_SECS: u64 = 3600;
/// Largest file a result's line of code is read from.
const MAX_CODE_FILE: u64 = 16 << 20;
/// Most places or symbols returned from one request.
const MAX_RESULTS: usize = 500;
/// Longest code line kept in a result, in characters.
const CODE_CHARS: usize = 240;

/// What can go wrong.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// The configuration is unusable.
    #[error("LSP configuration: {0}")]
    Config(String),
    /// No server is configured for the file's language.
    #[error(
        "no language server is configured for {0} (add one to the LSP config: [servers.NAME] command, extensions)"
    )]
    NoServer(String),
    /// The server could not be started (usually: not installed).
    #[error("language server {server} could not be started ({command}: {source}){}", install_hint(.server))]
    Start {
        /// The server's name.
        server: String,
        /// Its command.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// No thread could be started to talk to the server (the process
    /// limit is reached); the server was stopped.
    #[error("no thread can talk to language server {server}: {source}")]
    Threads {
        /// The server's name.
        server: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The server exited.
    #[error("language server {server} exited{}", if .stderr.is_empty() { String::new() } else { format!("; its last output:\n{}", .stderr) })]
    Exited {
        /// The server's name.
        server: String,
        /// The last lines it wrote to stderr.
        stderr: String,
    },
    /// The server did not answer in time.
    #[error("language server {server} did not answer {method} within {after:?}")]
    Timeout {
        /// The server's name.
        server: String,
        /// The request.
        method: String,
        /// How long it was given.
        after: Duration,
    },
    /// The server answered with an error.
    #[error("language server {server} refused {method}: {message}")]
    Server {
        /// The server's name.
        server: String,
        /// The request.
        method: String,
        /// Its message.
        message: String,
    },
    /// The server broke the protocol.
    #[error("language server protocol: {0}")]
    Protocol(String),
    /// The file or position asked about is not usable.
    #[error("{0}")]
    Input(String),
}

fn install_hint(server: &str) -> String {
    match LspConfig::default().servers.get(server).and_then(|s| s.install.clone()) {
        Some(install) => format!("; install it with `{install}`, or name another command in the LSP config"),
        None => String::new(),
    }
}

/// A place in a file, 1-based, with its line of code.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Place {
    /// The file, relative to the root when it is inside.
    pub path: String,
    /// First line.
    pub line: u32,
    /// First column (characters).
    pub column: u32,
    /// Last line.
    pub end_line: u32,
    /// Column after the end (characters).
    pub end_column: u32,
    /// The text of the first line.
    pub code: String,
}

/// A symbol a server reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LspSymbol {
    /// Its name.
    pub name: String,
    /// Its kind (`class`, `function`, `method` ...).
    pub kind: String,
    /// What it is in (a class, a module), when the server says.
    pub container: Option<String>,
    /// Nesting depth in a document's outline (0 at the top).
    pub depth: usize,
    /// Where it is.
    pub place: Place,
}

/// Language servers over one root folder.
pub struct Lsp {
    root: PathBuf,
    config: LspConfig,
    timeout: Duration,
    servers: Mutex<HashMap<String, Arc<Server>>>,
    /// One gate per server name, held while that server starts.
    starting: Mutex<HashMap<String, Arc<Mutex<()>>>>,
}

impl Lsp {
    /// A client for the files under `root`.
    pub fn new(root: &Path, config: LspConfig) -> Result<Lsp, LspError> {
        let root = root.canonicalize().map_err(|e| LspError::Input(format!("{}: {e}", root.display())))?;
        let timeout =
            Duration::from_secs(config.timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS).clamp(1, MAX_TIMEOUT_SECS));
        Ok(Lsp { root, config, timeout, servers: Mutex::default(), starting: Mutex::default() })
    }

    /// Where `file` (1-based `line` and `column`) is defined.
    pub fn definition(&self, file: &str, line: u32, column: u32) -> Result<Vec<Place>, LspError> {
        let value = self.at_position("textDocument/definition", file, line, column, json!({}))?;
        let locations: Vec<Location> = match serde_json::from_value::<Option<GotoDefinitionResponse>>(value)
            .map_err(|e| LspError::Protocol(format!("definition: {e}")))?
        {
            None => Vec::new(),
            Some(GotoDefinitionResponse::Scalar(location)) => vec![location],
            Some(GotoDefinitionResponse::Array(locations)) => locations,
            Some(GotoDefinitionResponse::Link(links)) => {
                links.into_iter().map(|l| Location { uri: l.target_uri, range: l.target_selection_range }).collect()
            }
        };
        Ok(self.places(&locations))
    }

    /// Every use of the symbol at `file:line:column`, its definition
    /// included.
    pub fn references(&self, file: &str, line: u32, column: u32) -> Result<Vec<Place>, LspError> {
        let extra = json!({"context": {"includeDeclaration": true}});
        let value = self.at_position("textDocument/references", file, line, column, extra)?;
        let locations: Option<Vec<Location>> =
            serde_json::from_value(value).map_err(|e| LspError::Protocol(format!("references: {e}")))?;
        Ok(self.places(&locations.unwrap_or_default()))
    }

    /// What the server says about the symbol at `file:line:column` (its
    /// signature and docs), as text.
    pub fn hover(&self, file: &str, line: u32, column: u32) -> Result<Option<String>, LspError> {
        let value = self.at_position("textDocument/hover", file, line, column, json!({}))?;
        let hover: Option<Hover> =
            serde_json::from_value(value).map_err(|e| LspError::Protocol(format!("hover: {e}")))?;
        let marked = |m: MarkedString| match m {
            MarkedString::String(s) => s,
            MarkedString::LanguageString(l) => l.value,
        };
        Ok(hover
            .map(|h| match h.contents {
                HoverContents::Scalar(m) => marked(m),
                HoverContents::Array(list) => list.into_iter().map(marked).collect::<Vec<_>>().join("\n\n"),
                HoverContents::Markup(markup) => markup.value,
            })
            .filter(|text| !text.trim().is_empty()))
    }

    /// The outline of `file`: its symbols, nested.
    pub fn document_symbols(&self, file: &str) -> Result<Vec<LspSymbol>, LspError> {
        let (server, path, _) = self.open(file)?;
        let params = json!({"textDocument": {"uri": file_uri(&path)}});
        let value = server.request("textDocument/documentSymbol", params, self.timeout)?;
        let response: Option<DocumentSymbolResponse> =
            serde_json::from_value(value).map_err(|e| LspError::Protocol(format!("documentSymbol: {e}")))?;
        let mut out = Vec::new();
        let texts = &mut HashMap::new();
        match response {
            None => {}
            Some(DocumentSymbolResponse::Flat(list)) => {
                for s in list.into_iter().take(MAX_RESULTS) {
                    out.push(self.symbol(s.name, s.kind, s.container_name, 0, &s.location, texts));
                }
            }
            Some(DocumentSymbolResponse::Nested(list)) => {
                let uri: lsp_types::Uri =
                    file_uri(&path).parse().map_err(|e| LspError::Protocol(format!("file URI: {e:?}")))?;
                let mut stack: Vec<(lsp_types::DocumentSymbol, usize, Option<String>)> =
                    list.into_iter().rev().map(|s| (s, 0, None)).collect();
                while let Some((symbol, depth, container)) = stack.pop() {
                    if out.len() == MAX_RESULTS {
                        break;
                    }
                    let location = Location { uri: uri.clone(), range: symbol.selection_range };
                    let children = symbol.children.unwrap_or_default();
                    let name = symbol.name;
                    stack.extend(children.into_iter().rev().map(|c| (c, depth + 1, Some(name.clone()))));
                    out.push(self.symbol(name, symbol.kind, container, depth, &location, texts));
                }
            }
        }
        out.truncate(MAX_RESULTS);
        Ok(out)
    }

    /// Symbols matching `query` across the workspace, from the server of
    /// `file`'s language, else from every server whose files the root
    /// holds.
    pub fn workspace_symbols(&self, query: &str, file: Option<&str>) -> Result<Vec<LspSymbol>, LspError> {
        let servers: Vec<Arc<Server>> = match file {
            Some(file) => vec![self.open(file)?.0],
            None => {
                let names = self.languages_present();
                if names.is_empty() {
                    return Err(LspError::Input(format!(
                        "no file under {} is served by a configured language server",
                        self.root.display()
                    )));
                }
                names.iter().map(|name| self.server(name)).collect::<Result<_, _>>()?
            }
        };
        let mut out = Vec::new();
        let texts = &mut HashMap::new();
        for server in servers {
            let value = server.request("workspace/symbol", json!({ "query": query }), self.timeout)?;
            let list: Vec<Value> = serde_json::from_value(value).unwrap_or_default();
            for item in list.into_iter().take(MAX_RESULTS.saturating_sub(out.len())) {
                let Ok(symbol) = serde_json::from_value::<lsp_types::SymbolInformation>(item) else { continue };
                out.push(self.symbol(symbol.name, symbol.kind, symbol.container_name, 0, &symbol.location, texts));
            }
        }
        out.truncate(MAX_RESULTS);
        Ok(out)
    }

    /// Shuts every server down.
    pub fn shutdown(&self) {
        let servers: Vec<Arc<Server>> = lock(&self.servers).drain().map(|(_, s)| s).collect();
        for server in servers {
            server.shutdown();
        }
    }

    fn at_position(&self, method: &str, file: &str, line: u32, column: u32, extra: Value) -> Result<Value, LspError> {
        let (server, path, text) = self.open(file)?;
        let position = utf16_position(&text, line, column)
            .ok_or_else(|| LspError::Input(format!("{file} has no line {line} column {column}")))?;
        let mut params = json!({"textDocument": {"uri": file_uri(&path)}, "position": position});
        if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
            params.extend(extra);
        }
        server.request(method, params, self.timeout)
    }

    /// The file's server, with the file open in it at its current text.
    fn open(&self, file: &str) -> Result<(Arc<Server>, PathBuf, String), LspError> {
        let path = self.resolve(file)?;
        let (name, _) = self.config.server_for(&path).ok_or_else(|| LspError::NoServer(file.to_owned()))?;
        let server = self.server(name)?;
        let text = std::fs::read_to_string(&path).map_err(|e| LspError::Input(format!("{file}: {e}")))?;
        server.sync(&path, config::language_id(&path), &text)?;
        Ok((server, path, text))
    }

    /// The running server `name`, started (again, when it crashed).
    /// Starting one server holds back only those asking for the same one
    /// (they find it running when it is up), never calls to other servers.
    fn server(&self, name: &str) -> Result<Arc<Server>, LspError> {
        let running = |servers: &HashMap<String, Arc<Server>>| servers.get(name).filter(|s| s.is_alive()).cloned();
        if let Some(server) = running(&lock(&self.servers)) {
            return Ok(server);
        }
        let gate = Arc::clone(lock(&self.starting).entry(name.to_owned()).or_default());
        let _starting = lock(&gate);
        if let Some(server) = running(&lock(&self.servers)) {
            return Ok(server);
        }
        let config = self.config.servers.get(name).ok_or_else(|| LspError::NoServer(name.to_owned()))?;
        let server = Arc::new(Server::start(name, &config.command, &self.root, self.timeout)?);
        // The one it replaces (gone) is shut down outside the lock.
        let gone = lock(&self.servers).insert(name.to_owned(), Arc::clone(&server));
        drop(gone);
        Ok(server)
    }

    /// `file` (relative to the root, or absolute) as a path inside it.
    fn resolve(&self, file: &str) -> Result<PathBuf, LspError> {
        let joined = self.root.join(file);
        let path = joined.canonicalize().map_err(|e| LspError::Input(format!("{file}: {e}")))?;
        if !path.starts_with(&self.root) {
            return Err(LspError::Input(format!("{file} is outside {}", self.root.display())));
        }
        Ok(path)
    }

    /// Servers whose files the root holds (a shallow look: the `ignore`
    /// walker four levels deep, gitignored and hidden files and dependency
    /// folders left out, at most 20,000 entries).
    fn languages_present(&self) -> Vec<String> {
        let mut found: Vec<String> = Vec::new();
        let walk = ignore::WalkBuilder::new(&self.root)
            .max_depth(Some(5))
            .filter_entry(|e| !matches!(e.file_name().to_str(), Some("node_modules" | "target")))
            .build();
        for entry in walk.flatten().take(20_000) {
            if let Some((server, _)) = self.config.server_for(entry.path()) {
                if !found.iter().any(|f| f == server) {
                    found.push(server.to_owned());
                }
            }
        }
        found
    }

    fn places(&self, locations: &[Location]) -> Vec<Place> {
        let mut texts: HashMap<PathBuf, Option<String>> = HashMap::new();
        locations.iter().take(MAX_RESULTS).map(|l| self.place(l, &mut texts)).collect()
    }

    fn place(&self, location: &Location, texts: &mut HashMap<PathBuf, Option<String>>) -> Place {
        let uri = location.uri.as_str();
        let path = uri_path(uri).unwrap_or_else(|| PathBuf::from(uri));
        let text = texts.entry(path.clone()).or_insert_with(|| self.read_code(&path));
        let (start, end) = (location.range.start, location.range.end);
        let (line, column) = char_position(text.as_deref(), start.line, start.character);
        let (end_line, end_column) = char_position(text.as_deref(), end.line, end.character);
        let code = text.as_deref().and_then(|t| t.lines().nth(start.line as usize)).unwrap_or("").trim_end();
        let code = match code.char_indices().nth(CODE_CHARS) {
            Some((at, _)) => format!("{}…", &code[..at]),
            None => code.to_owned(),
        };
        let shown = path.strip_prefix(&self.root).unwrap_or(&path).to_string_lossy().into_owned();
        Place { path: shown, line, column, end_line, end_column, code }
    }

    /// The text of a file a result names, when it is a regular file under
    /// the root and not huge: nothing outside the root is read (a server
    /// may name any path), and no device or pipe.
    fn read_code(&self, path: &Path) -> Option<String> {
        let real = path.canonicalize().ok()?;
        let meta = std::fs::metadata(&real).ok()?;
        if !real.starts_with(&self.root) || !meta.is_file() || meta.len() > MAX_CODE_FILE {
            return None;
        }
        std::fs::read_to_string(real).ok()
    }

    fn symbol(
        &self,
        name: String,
        kind: lsp_types::SymbolKind,
        container: Option<String>,
        depth: usize,
        location: &Location,
        texts: &mut HashMap<PathBuf, Option<String>>,
    ) -> LspSymbol {
        let kind = format!("{kind:?}").to_ascii_lowercase();
        let place = self.place(location, texts);
        LspSymbol { name, kind, container, depth, place }
    }
}

impl Drop for Lsp {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// An LSP position (0-based line, UTF-16 column) from a 1-based line and
/// character column of `text`; `None` past the text.
fn utf16_position(text: &str, line: u32, column: u32) -> Option<Value> {
    let line_index = line.checked_sub(1)?;
    let line_text = text.split('\n').nth(line_index as usize)?;
    let line_text = line_text.strip_suffix('\r').unwrap_or(line_text);
    let before = column.checked_sub(1)? as usize;
    if before > line_text.chars().count() {
        return None;
    }
    let character: usize = line_text.chars().take(before).map(char::len_utf16).sum();
    Some(json!({"line": line_index, "character": character}))
}

/// A 1-based line and character column from an LSP position.
fn char_position(text: Option<&str>, line: u32, character: u32) -> (u32, u32) {
    let Some(line_text) = text.and_then(|t| t.split('\n').nth(line as usize)) else {
        return (line.saturating_add(1), character.saturating_add(1));
    };
    let mut units = 0u32;
    let mut chars = 0u32;
    for c in line_text.chars() {
        if units >= character {
            break;
        }
        units += c.len_utf16() as u32;
        chars += 1;
    }
    (line.saturating_add(1), chars + 1)
}

/// Places as lines: `path:line:column: code`.
pub fn format_places(places: &[Place]) -> String {
    places.iter().map(|p| format!("{}:{}:{}: {}\n", p.path, p.line, p.column, p.code.trim())).collect()
}

/// Symbols as lines: indented by depth, `kind name  path:line`.
pub fn format_symbols(symbols: &[LspSymbol]) -> String {
    symbols
        .iter()
        .map(|s| {
            let container = s.container.as_deref().map(|c| format!(" (in {c})")).unwrap_or_default();
            format!("{}{} {}{container}  {}:{}\n", "  ".repeat(s.depth), s.kind, s.name, s.place.path, s.place.line)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_from_a_server_never_overflow() {
        assert_eq!(char_position(None, u32::MAX, u32::MAX), (u32::MAX, u32::MAX));
        assert_eq!(char_position(Some("ab\n"), u32::MAX, 0), (u32::MAX, 1));
    }

    #[test]
    fn columns_convert_between_characters_and_utf16() {
        let text = "a = 1\nx = '😀é' + y\n";
        assert_eq!(utf16_position(text, 2, 1).unwrap(), json!({"line": 1, "character": 0}));
        // `+` is the 10th character; the emoji takes two UTF-16 units.
        assert_eq!(utf16_position(text, 2, 10).unwrap(), json!({"line": 1, "character": 10}));
        assert_eq!(char_position(Some(text), 1, 10), (2, 10));
        assert!(utf16_position(text, 9, 1).is_none());
        assert!(utf16_position(text, 1, 99).is_none());
        assert!(utf16_position(text, 0, 1).is_none());
    }
}
