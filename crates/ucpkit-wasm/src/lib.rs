//! UCP in WebAssembly: the JavaScript face of [`store::MemoryStore`]. This
//! module only translates arguments and results between JavaScript and
//! Rust; the work is done by the engine's crates, built without what a
//! browser cannot run (the SQLite store, tree-sitter's C grammars, files,
//! threads, model calls).
//!
//! ```js
//! const store = new Store();
//! store.index("docs", { "guide.md": text });
//! const { text, tokens, blocks } = store.context("How do I ...?", { doc: "docs", budget: 2000 });
//! ```

use js_sys::{Array, JsString, Object, Reflect, Uint8Array, JSON};
use serde::Serialize;
use wasm_bindgen::prelude::*;

pub mod store;

use store::{MemoryStore, StoreError};

#[wasm_bindgen(typescript_custom_section)]
const TYPES: &'static str = r#"
/** Options of `Store.context`. */
export interface ContextOptions { doc?: string; budget?: number }
/** Options of `Store.search`. */
export interface SearchOptions { doc?: string; limit?: number }
/** Options of `Store.run`. */
export interface RunOptions { doc?: string; session?: string }
/** A context: its text, exact o200k tokens, and its blocks in order. */
export interface Context {
  text: string; tokens: number; budget: number;
  blocks: { id: string; role?: string; file?: string; lines?: [number, number];
            heading_path: string[]; relevance: number; representation: string; tokens: number }[];
}
/** A search hit with its block's text, verbatim. */
export interface Hit { id: string; score: number; role?: string; heading_path: string[]; text: string; tokens: number }
/** What `Store.index` made. */
export interface IndexReport { document: string; files: number; blocks: number; tokens: number; warnings: string[] }
/** A script that ran: every command up to the first failure. */
export interface RunReport {
  ok: boolean; text: string;
  steps: { line: number; column: number; command: string; reply?: unknown; text: string; error?: string }[];
}
/** A UCL script parsed, or where it does not. */
export interface ParseReport {
  ok: boolean; document?: unknown; rendered: string;
  errors: { message: string; line: number; column: number }[];
}
"#;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = console, js_name = error)]
    fn console_error(message: &str);
}

/// Runs when the module is instantiated: a panic (a bug: it ends the
/// module's instance, as WebAssembly cannot unwind) says where it happened
/// on the console before it traps.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| console_error(&format!("ucp-engine: {info}"))));
}

/// The default number of search hits.
const DEFAULT_LIMIT: usize = 10;

/// Documents held in memory: index them from strings, then ask for
/// contexts, search them, and run UCL on them.
#[wasm_bindgen]
#[derive(Default)]
pub struct Store {
    inner: MemoryStore,
}

#[wasm_bindgen]
impl Store {
    /// An empty store.
    #[wasm_bindgen(constructor)]
    pub fn new() -> Store {
        Store::default()
    }

    /// Ingests `files` (an object of path → text or bytes) into the
    /// document `name`, replacing one of that name.
    #[wasm_bindgen(unchecked_return_type = "IndexReport")]
    pub fn index(
        &mut self,
        name: &str,
        #[wasm_bindgen(unchecked_param_type = "Record<string, string | Uint8Array>")] files: &JsValue,
    ) -> Result<JsValue, JsError> {
        let files = file_entries(files)?;
        to_js(&self.inner.index(name, &files).map_err(error)?)
    }

    /// The best context for `question` within `options.budget` tokens
    /// (default 4000) from `options.doc` (or the only document).
    #[wasm_bindgen(unchecked_return_type = "Context")]
    pub fn context(
        &self,
        question: &str,
        #[wasm_bindgen(unchecked_param_type = "ContextOptions | undefined")] options: &JsValue,
    ) -> Result<JsValue, JsError> {
        let doc = string_option(options, "doc")?;
        let budget = number_option(options, "budget")?.unwrap_or(ucpkit_orchestrator::ContextRequest::DEFAULT_BUDGET);
        to_js(&self.inner.context(doc.as_deref(), question, budget).map_err(error)?)
    }

    /// The best `options.limit` blocks (default 10) for `query` (BM25).
    #[wasm_bindgen(unchecked_return_type = "Hit[]")]
    pub fn search(
        &self,
        query: &str,
        #[wasm_bindgen(unchecked_param_type = "SearchOptions | undefined")] options: &JsValue,
    ) -> Result<JsValue, JsError> {
        let doc = string_option(options, "doc")?;
        let limit = number_option(options, "limit")?.unwrap_or(DEFAULT_LIMIT);
        to_js(&self.inner.search(doc.as_deref(), query, limit).map_err(error)?)
    }

    /// Runs a UCL script on `options.doc`, in the session named
    /// `options.session` (kept between calls) or a new one.
    #[wasm_bindgen(unchecked_return_type = "RunReport")]
    pub fn run(
        &self,
        ucl: &str,
        #[wasm_bindgen(unchecked_param_type = "RunOptions | undefined")] options: &JsValue,
    ) -> Result<JsValue, JsError> {
        let doc = string_option(options, "doc")?;
        let session = string_option(options, "session")?;
        to_js(&self.inner.run(doc.as_deref(), ucl, session.as_deref()).map_err(error)?)
    }

    /// Closes the session named `name` of `options.doc`, freeing its slot
    /// (a store keeps at most 50 named sessions open); whether there was one.
    #[wasm_bindgen(js_name = closeSession)]
    pub fn close_session(
        &self,
        name: &str,
        #[wasm_bindgen(unchecked_param_type = "{ doc?: string } | undefined")] options: &JsValue,
    ) -> Result<bool, JsError> {
        let doc = string_option(options, "doc")?;
        self.inner.close_session(doc.as_deref(), name).map_err(error)
    }

    /// The names, blocks and tokens of the documents held.
    #[wasm_bindgen(unchecked_return_type = "{ name: string; blocks: number; tokens: number }[]")]
    pub fn documents(&self) -> Result<JsValue, JsError> {
        to_js(&self.inner.documents())
    }

    /// Forgets the document `name`; whether there was one.
    pub fn remove(&mut self, name: &str) -> bool {
        self.inner.remove(name)
    }

    /// The document `name` as JSON (UCP's form, as `ucp export --format
    /// json` writes it), to keep and import again.
    #[wasm_bindgen(js_name = exportDocument)]
    pub fn export_document(&self, name: &str) -> Result<String, JsError> {
        self.inner.export(name).map_err(error)
    }

    /// Holds a document exported as JSON, under its own name or `name`;
    /// returns the name.
    #[wasm_bindgen(js_name = importDocument)]
    pub fn import_document(&mut self, json: &str, name: Option<String>) -> Result<String, JsError> {
        self.inner.import(json, name.as_deref()).map_err(error)
    }
}

/// Parses a UCL script: its document form, or every error with its line
/// and column.
#[wasm_bindgen(js_name = parseUcl, unchecked_return_type = "ParseReport")]
pub fn parse_ucl(source: &str) -> Result<JsValue, JsError> {
    to_js(&store::parse(source).map_err(error)?)
}

/// The exact o200k token count of `text`.
#[wasm_bindgen(js_name = countTokens)]
pub fn count_tokens(text: &str) -> usize {
    use ucpkit_core::Tokenizer;
    ucpkit_core::BpeTokenizer::default().count(text)
}

/// A refusal as a JavaScript `Error` whose message leads with its code.
fn error(e: StoreError) -> JsError {
    JsError::new(&format!("{}: {e}", e.code()))
}

/// A result as a plain JavaScript value.
fn to_js(value: &impl Serialize) -> Result<JsValue, JsError> {
    let json = serde_json::to_string(value).map_err(|e| JsError::new(&e.to_string()))?;
    JSON::parse(&json).map_err(|_| JsError::new("a result could not be read back as JSON"))
}

/// The `(path, bytes)` of an object of path → string or Uint8Array. The
/// sizes are added up before anything is copied into the module's memory
/// (a string's UTF-8 form has at least as many bytes as UTF-16 units), so
/// an input over [`store::MAX_INPUT_BYTES`] is refused without first
/// filling that memory.
fn file_entries(files: &JsValue) -> Result<Vec<(String, Vec<u8>)>, JsError> {
    if !files.is_object() {
        return Err(JsError::new("invalid_argument: files must be an object of path -> text"));
    }
    let pairs: Vec<(JsValue, JsValue)> = Object::entries(files.unchecked_ref::<Object>())
        .iter()
        .map(|entry| {
            let pair = Array::from(&entry);
            (pair.get(0), pair.get(1))
        })
        .collect();
    let mut total = 0usize;
    for (path, value) in &pairs {
        let size = if let Some(text) = value.dyn_ref::<JsString>() {
            text.length() as usize
        } else if let Some(bytes) = value.dyn_ref::<Uint8Array>() {
            bytes.length() as usize
        } else {
            let path = path.as_string().unwrap_or_default();
            return Err(JsError::new(&format!("invalid_argument: {path}: give its text or its bytes")));
        };
        total = total.saturating_add(size);
        if total > store::MAX_INPUT_BYTES {
            return Err(JsError::new(&format!(
                "invalid_argument: the files hold over {} bytes, the limit of one index call; index fewer files at once",
                store::MAX_INPUT_BYTES
            )));
        }
    }
    Ok(pairs
        .into_iter()
        .map(|(path, value)| {
            let bytes = match value.as_string() {
                Some(text) => text.into_bytes(),
                None => Uint8Array::new(&value).to_vec(),
            };
            (path.as_string().unwrap_or_default(), bytes)
        })
        .collect())
}

/// `options[key]` as a string, when it is given.
fn string_option(options: &JsValue, key: &str) -> Result<Option<String>, JsError> {
    match option(options, key)? {
        None => Ok(None),
        Some(value) => value
            .as_string()
            .map(Some)
            .ok_or_else(|| JsError::new(&format!("invalid_argument: {key} must be a string"))),
    }
}

/// `options[key]` as a whole number, when it is given.
fn number_option(options: &JsValue, key: &str) -> Result<Option<usize>, JsError> {
    match option(options, key)? {
        None => Ok(None),
        Some(value) => match value.as_f64() {
            Some(n) if n.fract() == 0.0 && (0.0..=1e9).contains(&n) => Ok(Some(n as usize)),
            _ => Err(JsError::new(&format!("invalid_argument: {key} must be a whole number"))),
        },
    }
}

fn option(options: &JsValue, key: &str) -> Result<Option<JsValue>, JsError> {
    if options.is_undefined() || options.is_null() {
        return Ok(None);
    }
    let value = Reflect::get(options, &JsValue::from_str(key))
        .map_err(|_| JsError::new("invalid_argument: options must be an object"))?;
    Ok((!value.is_undefined() && !value.is_null()).then_some(value))
}
