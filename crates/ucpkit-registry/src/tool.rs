//! What a tool is: one record holding its definition (name, description,
//! the JSON schema of its arguments), what it may do, what it needs
//! offered, how its results are paged, and its handler.
//!
//! A compiled-in tool declares its arguments once, as a serde type: the
//! schema clients see is derived from that type ([`schema_of`]) and the
//! handler receives it deserialized, so an argument's name, type and
//! description are written in one place. A tool from elsewhere (the agent
//! loop's, later another server's) brings its schema as JSON
//! ([`Tool::untyped`]).

use std::fmt;
use std::sync::Arc;

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::de::{self, DeserializeOwned, Deserializer, SeqAccess, Visitor};
use serde::Serialize;
use serde_json::Value;

use crate::{CallError, Connection, JsonObject, ToolOutput};

/// A tool as every front end lists it. It serializes as MCP's tool
/// definition does (`name`, `description`, `inputSchema`, `annotations`),
/// which is also what `find_tools` returns and what a tool list costs.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDef {
    /// Its name.
    pub name: String,
    /// What it does, for a model.
    pub description: String,
    /// The JSON schema of its arguments.
    pub input_schema: Arc<JsonObject>,
    /// What it may do.
    pub annotations: Annotations,
}

/// Hints about what a tool does (MCP's tool annotations).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// It changes nothing.
    pub read_only_hint: bool,
    /// It reaches beyond the workspace (never, for UCP's own tools).
    pub open_world_hint: bool,
}

/// Whether a tool changes documents, memory or files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Never.
    Never,
    /// Only where the offer and the store allow it: a read-only offer keeps
    /// the tool, which then does only its reading part (`ucl` without
    /// edits, `plan` that shows, `open` of stored documents).
    WhenAllowed,
    /// Always: a read-only offer does not offer it.
    Always,
}

/// What a tool may do beyond reading. A read-only offer drops the tools
/// that always write or that run programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effects {
    /// Whether it changes documents, memory or files.
    pub writes: Writes,
    /// It runs programs (a shell, language servers).
    pub executes: bool,
    /// It reaches beyond this machine (a model's provider).
    pub network: bool,
}

impl Effects {
    /// Reads only.
    pub const READS: Effects = Effects { writes: Writes::Never, executes: false, network: false };
}

/// What the offer must hold for a tool to be offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Needs {
    /// Nothing: the document and memory tools.
    Nothing,
    /// A workspace folder (`root`): the coding tools, rules and skills.
    Root,
    /// Language servers.
    Lsp,
    /// Sub-agents' models.
    Agents,
    /// Tool discovery.
    Discovery,
}

/// Who keeps a long result within the cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pages {
    /// The connection cuts it into pages at block boundaries, kept for the
    /// next call with `page` (of `ucl`, or of this tool where `ucl` is not
    /// offered).
    Kept,
    /// The tool itself (`ucl`'s `page`, the coding tools' `offset`, a
    /// sub-agent's own budget).
    ByTool,
}

/// Runs one call: the connection and the call's arguments.
pub type Handler = Arc<dyn Fn(&Connection, &JsonObject) -> Result<ToolOutput, CallError> + Send + Sync>;

/// One tool: its definition, what it may do and needs, and its handler.
#[derive(Clone)]
pub struct Tool {
    /// What clients are shown.
    pub def: ToolDef,
    /// What it may do.
    pub effects: Effects,
    /// What the offer must hold.
    pub needs: Needs,
    /// Who pages its long results.
    pub pages: Pages,
    /// What kind of action a call is, when not the one its effects
    /// suggest.
    kind: Option<crate::ActionKind>,
    /// For a tool that writes only when allowed: whether a call with these
    /// arguments changes something.
    changes: Option<fn(&JsonObject) -> bool>,
    handler: Handler,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.def.name)
            .field("effects", &self.effects)
            .field("needs", &self.needs)
            .field("pages", &self.pages)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// What is wrong with a call's arguments, naming the argument.
fn argument_error(error: &serde_path_to_error::Error<serde_json::Error>) -> String {
    let inner = error.inner().to_string();
    match error.path().to_string().as_str() {
        // An unknown argument's message names it already.
        path if path == "." || inner.starts_with("unknown field") => inner,
        path => format!("{path}: {inner}"),
    }
}

impl Tool {
    /// A tool taking arguments of type `A` (its schema derived from `A`),
    /// read-only, needing nothing, its results kept in pages; the builder
    /// methods below say otherwise.
    pub fn typed<A, F>(name: &str, description: &str, handler: F) -> Tool
    where
        A: DeserializeOwned + JsonSchema,
        F: Fn(&Connection, A) -> Result<ToolOutput, CallError> + Send + Sync + 'static,
    {
        let handler: Handler = Arc::new(move |connection, arguments| {
            let arguments = serde_path_to_error::deserialize(Value::Object(arguments.clone()))
                .map_err(|e| CallError::Arguments(argument_error(&e)))?;
            handler(connection, arguments)
        });
        Tool::untyped(name, description, schema_of::<A>(), handler)
    }

    /// A tool whose arguments are the JSON schema `input_schema`, which its
    /// handler checks itself.
    pub fn untyped(name: &str, description: &str, input_schema: JsonObject, handler: Handler) -> Tool {
        let mut input_schema = Value::Object(input_schema);
        sorted(&mut input_schema);
        let Value::Object(input_schema) = input_schema else { unreachable!("an object stays an object") };
        let def = ToolDef {
            name: name.to_owned(),
            description: description.to_owned(),
            input_schema: Arc::new(input_schema),
            annotations: Annotations { read_only_hint: true, open_world_hint: false },
        };
        let (kind, changes) = (None, None);
        Tool { def, effects: Effects::READS, needs: Needs::Nothing, pages: Pages::Kept, kind, changes, handler }
    }

    /// This tool may do `effects`.
    pub fn effects(mut self, effects: Effects) -> Tool {
        self.effects = effects;
        self.def.annotations.read_only_hint = effects.writes == Writes::Never && !effects.network;
        self
    }

    /// A call of this tool is an action of `kind`.
    pub fn kind(mut self, kind: crate::ActionKind) -> Tool {
        self.kind = Some(kind);
        self
    }

    /// A tool that writes only when allowed changes something when
    /// `changes` says so of a call's arguments (else never, for approval).
    pub fn changes_when(mut self, changes: fn(&JsonObject) -> bool) -> Tool {
        self.changes = Some(changes);
        self
    }

    /// What kind of action a call is: as set, else what its effects
    /// suggest (runs a command, edits, fetches, or reads).
    pub fn action_kind(&self) -> crate::ActionKind {
        self.kind.unwrap_or(match self.effects {
            Effects { executes: true, .. } => crate::ActionKind::Execute,
            Effects { writes: Writes::Always, .. } => crate::ActionKind::Edit,
            Effects { network: true, .. } => crate::ActionKind::Fetch,
            _ => crate::ActionKind::Read,
        })
    }

    /// Whether a call with `arguments` of a tool that writes only when
    /// allowed changes something.
    pub(crate) fn changes(&self, arguments: &JsonObject) -> bool {
        self.changes.is_some_and(|changes| changes(arguments))
    }

    /// This tool is offered only where the offer holds `needs`.
    pub fn needs(mut self, needs: Needs) -> Tool {
        self.needs = needs;
        self
    }

    /// This tool keeps its own results within the cap.
    pub fn pages_itself(mut self) -> Tool {
        self.pages = Pages::ByTool;
        self
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.def.name
    }

    /// Runs it for `connection` with `arguments` (a blocking call).
    pub fn call(&self, connection: &Connection, arguments: &JsonObject) -> Result<ToolOutput, CallError> {
        (self.handler)(connection, arguments)
    }
}

/// The JSON schema of arguments of type `A`, as tool lists show it: an
/// object, inline, without the generator's bookkeeping. An optional
/// argument is one that may be left out (`null` is also read as absent),
/// so its schema does not mention `null`; number formats and the implied
/// `minimum: 0` of unsigned numbers are left out, and enumerations list
/// their values alone.
pub fn schema_of<A: JsonSchema>() -> JsonObject {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|settings| {
            settings.inline_subschemas = true;
            settings.meta_schema = None;
        })
        .into_generator();
    let mut schema = generator.into_root_schema_for::<A>().to_value();
    if let Some(root) = schema.as_object_mut() {
        root.remove("title");
        root.remove("description");
        // An empty argument list still says it has no properties.
        root.entry("properties").or_insert_with(|| Value::Object(JsonObject::new()));
    }
    lean(&mut schema);
    match schema {
        Value::Object(object) => object,
        other => panic!("argument types are structs, whose schema is an object, not {other}"),
    }
}

/// `value` with the keys of its objects in order, at every depth: a
/// schema reads (and costs) the same whatever the build's JSON maps keep.
pub(crate) fn sorted(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.sort_keys();
            object.values_mut().for_each(sorted);
        }
        Value::Array(items) => items.iter_mut().for_each(sorted),
        _ => {}
    }
}

/// Takes out of `schema` and its subschemas what [`schema_of`] leaves
/// out.
fn lean(schema: &mut Value) {
    let Value::Object(object) = schema else { return };
    object.remove("format");
    if object.get("minimum") == Some(&Value::from(0)) {
        object.remove("minimum");
    }
    if let Some(Value::Array(types)) = object.get_mut("type") {
        types.retain(|t| t != "null");
        if let [one] = types.as_slice() {
            let one = one.clone();
            object.insert("type".into(), one);
        }
    }
    if let Some(Value::Array(values)) = object.get_mut("enum") {
        values.retain(|v| !v.is_null());
        object.remove("type");
    }
    // `Option<T>` of a schema with subschemas is `anyOf: [T, null]`.
    if let Some(Value::Array(any_of)) = object.get_mut("anyOf") {
        any_of.retain(|s| s.get("type") != Some(&Value::from("null")));
        if let [Value::Object(only)] = any_of.as_slice() {
            let only = only.clone();
            object.remove("anyOf");
            for (key, value) in only {
                object.entry(key).or_insert(value);
            }
            return lean(schema);
        }
    }
    if let Some(Value::Object(properties)) = object.get_mut("properties") {
        properties.values_mut().for_each(lean);
    }
    if let Some(items) = object.get_mut("items") {
        lean(items);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        if let Some(Value::Array(subschemas)) = object.get_mut(key) {
            subschemas.iter_mut().for_each(lean);
        }
    }
}

/// Strings given as one string or as an array of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Strings(pub Vec<String>);

impl<'de> serde::Deserialize<'de> for Strings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct OneOrMany;
        impl<'de> Visitor<'de> for OneOrMany {
            type Value = Strings;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or an array of strings")
            }
            fn visit_str<E: de::Error>(self, one: &str) -> Result<Strings, E> {
                Ok(Strings(vec![one.to_owned()]))
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut items: S) -> Result<Strings, S::Error> {
                let mut all = Vec::new();
                while let Some(item) = items.next_element::<String>()? {
                    all.push(item);
                }
                Ok(Strings(all))
            }
        }
        deserializer.deserialize_any(OneOrMany)
    }
}

/// Listed as an array of strings (one string is also taken).
impl JsonSchema for Strings {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Strings".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        <Vec<String>>::json_schema(generator)
    }
}

/// The schema of an argument listed as "a string or an array of strings".
pub struct StringOrArray;

impl JsonSchema for StringOrArray {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "StringOrArray".into()
    }

    fn inline_schema() -> bool {
        true
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        schemars::json_schema!({"type": ["string", "array"], "items": {"type": "string"}})
    }
}

impl Strings {
    /// The strings, none when absent.
    pub fn of(strings: Option<Strings>) -> Vec<String> {
        strings.map(|s| s.0).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use std::num::NonZeroUsize;

    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Example {
        query: String,
        /// How many
        #[schemars(range(max = 100))]
        limit: Option<NonZeroUsize>,
        since: Option<u64>,
        mode: Option<Mode>,
        edits: Option<Vec<Edit>>,
        tags: Option<Strings>,
        #[schemars(with = "Option<StringOrArray>")]
        glob: Option<Strings>,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    enum Mode {
        Files,
        Content,
    }

    #[derive(Deserialize, JsonSchema)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Edit {
        old: String,
        all: Option<bool>,
    }

    #[test]
    fn schemas_are_lean_and_exact() {
        let schema = Value::Object(schema_of::<Example>());
        let expected = json!({
            "type": "object",
            "properties": {
                "query": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100, "description": "How many"},
                "since": {"type": "integer"},
                "mode": {"enum": ["files", "content"]},
                "edits": {"type": "array", "items": {
                    "type": "object",
                    "properties": {"old": {"type": "string"}, "all": {"type": "boolean"}},
                    "required": ["old"],
                    "additionalProperties": false
                }},
                "tags": {"type": "array", "items": {"type": "string"}},
                "glob": {"type": ["string", "array"], "items": {"type": "string"}}
            },
            "required": ["query"],
            "additionalProperties": false
        });
        assert_eq!(schema, expected, "{schema:#}");
    }

    #[test]
    fn strings_are_one_or_many() {
        let one: Strings = serde_json::from_value(json!("a")).unwrap();
        let many: Strings = serde_json::from_value(json!(["a", "b"])).unwrap();
        assert_eq!((one.0, many.0), (vec!["a".to_owned()], vec!["a".to_owned(), "b".to_owned()]));
        let wrong = serde_json::from_value::<Strings>(json!(3)).unwrap_err().to_string();
        assert!(wrong.contains("a string or an array of strings"), "{wrong}");
        assert!(serde_json::from_value::<Strings>(json!([1])).is_err());
    }
}
