//! What a block holds: text, code, a table, math, media, JSON, bytes, or
//! nothing at all (a composite container such as a folder or a file).

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use crate::id::IdHasher;

/// The content of one block.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Content {
    /// Prose: plain text, markdown source or an HTML fragment.
    Text {
        /// The text itself.
        text: String,
        /// How `text` is written.
        #[serde(default)]
        format: TextFormat,
    },
    /// Source code.
    Code {
        /// Language name as written in the source (`rust`, `js`, ...).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        language: Option<String>,
        /// The code, without fences.
        source: String,
    },
    /// A table of cells, each cell inline markdown.
    Table {
        /// Header cells.
        columns: Vec<String>,
        /// Body rows.
        rows: Vec<Vec<String>>,
        /// Column alignments, empty when the source had none.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        align: Vec<Align>,
    },
    /// A formula.
    Math {
        /// Notation of `expression`.
        #[serde(default)]
        notation: MathNotation,
        /// The formula source.
        expression: String,
    },
    /// An image, video or other media referenced by uri.
    Media {
        /// What kind of media.
        kind: MediaKind,
        /// Where it lives (a URL or a path relative to the source).
        uri: String,
        /// Alternative text.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        alt: Option<String>,
        /// Title, when the source gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
    /// Any JSON value.
    Json {
        /// The value.
        value: serde_json::Value,
    },
    /// Opaque bytes with a MIME type (serialized as base64).
    Binary {
        /// MIME type.
        mime: String,
        /// The bytes.
        #[serde(with = "base64_bytes")]
        data: Vec<u8>,
    },
    /// A container whose meaning lives in its children (document root,
    /// folder, file).
    Composite,
}

/// How a [`Content::Text`] is written.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TextFormat {
    /// Plain text.
    Plain,
    /// Markdown source.
    #[default]
    Markdown,
    /// An HTML fragment.
    Html,
}

/// Column alignment of a table.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Align {
    /// No alignment given.
    #[default]
    None,
    /// `:---`
    Left,
    /// `:---:`
    Center,
    /// `---:`
    Right,
}

/// Notation of a [`Content::Math`] expression.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MathNotation {
    /// LaTeX.
    #[default]
    Latex,
    /// MathML.
    Mathml,
}

/// Kind of a [`Content::Media`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MediaKind {
    /// A picture.
    Image,
    /// A video.
    Video,
    /// A sound.
    Audio,
    /// Anything else.
    Other,
}

impl Content {
    /// The role a block of this content has when nothing names one: text
    /// is a paragraph, code is code, a table a table, a formula an
    /// equation, an image an image; other content has none.
    pub fn default_role(&self) -> Option<crate::Role> {
        use crate::Role;
        match self {
            Content::Text { .. } => Some(Role::Paragraph),
            Content::Code { .. } => Some(Role::Code),
            Content::Table { .. } => Some(Role::Table),
            Content::Math { .. } => Some(Role::Equation),
            Content::Media { kind: MediaKind::Image, .. } => Some(Role::Image),
            _ => None,
        }
    }

    /// Markdown text content.
    pub fn markdown(text: impl Into<String>) -> Self {
        Content::Text { text: text.into(), format: TextFormat::Markdown }
    }

    /// Plain text content.
    pub fn plain(text: impl Into<String>) -> Self {
        Content::Text { text: text.into(), format: TextFormat::Plain }
    }

    /// Code content.
    pub fn code(language: Option<String>, source: impl Into<String>) -> Self {
        Content::Code { language, source: source.into() }
    }

    /// The variant's name as used in JSON, ids and the store.
    pub fn kind(&self) -> &'static str {
        match self {
            Content::Text { .. } => "text",
            Content::Code { .. } => "code",
            Content::Table { .. } => "table",
            Content::Math { .. } => "math",
            Content::Media { .. } => "media",
            Content::Json { .. } => "json",
            Content::Binary { .. } => "binary",
            Content::Composite => "composite",
        }
    }

    /// Whether the content carries nothing readable.
    pub fn is_empty(&self) -> bool {
        match self {
            Content::Text { text, .. } => text.trim().is_empty(),
            Content::Code { source, .. } => source.is_empty(),
            Content::Table { columns, rows, .. } => columns.is_empty() && rows.is_empty(),
            Content::Math { expression, .. } => expression.trim().is_empty(),
            Content::Media { uri, .. } => uri.is_empty(),
            Content::Json { value } => value.is_null(),
            Content::Binary { data, .. } => data.is_empty(),
            Content::Composite => true,
        }
    }

    /// Feeds the identity of this content into an id derivation.
    ///
    /// Text is normalized first (see [`normalize_text`]) so that line-ending
    /// and trailing-space differences do not change ids.
    pub fn hash_into(&self, hasher: &mut IdHasher) {
        match self {
            Content::Text { text, format } => {
                hasher.field(format_tag(*format).as_bytes());
                hasher.field(normalize_text(text).as_bytes());
            }
            Content::Code { language, source } => {
                hasher.field(language.as_deref().unwrap_or("").as_bytes());
                hasher.field(source.replace("\r\n", "\n").as_bytes());
            }
            Content::Binary { mime, data } => {
                hasher.field(mime.as_bytes());
                hasher.field(data);
            }
            Content::Composite => {}
            Content::Json { value } => {
                // A value's keys in order, whatever order the build's JSON
                // maps keep: the same value has the same id everywhere.
                let json = serde_json::to_vec(&Content::Json { value: canonical_json(value) }).unwrap_or_default();
                hasher.field(&json);
            }
            other => {
                // Field order of these variants is fixed, so their JSON is canonical.
                let json = serde_json::to_vec(other).unwrap_or_default();
                hasher.field(&json);
            }
        }
    }
}

/// `value` with the keys of its objects in order, at every depth (what a
/// build without serde_json's `preserve_order` keeps anyway).
pub fn canonical_json(value: &serde_json::Value) -> serde_json::Value {
    match value {
        serde_json::Value::Object(map) => {
            let mut entries: Vec<(&String, &serde_json::Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            serde_json::Value::Object(entries.into_iter().map(|(k, v)| (k.clone(), canonical_json(v))).collect())
        }
        serde_json::Value::Array(items) => serde_json::Value::Array(items.iter().map(canonical_json).collect()),
        other => other.clone(),
    }
}

fn format_tag(format: TextFormat) -> &'static str {
    match format {
        TextFormat::Plain => "plain",
        TextFormat::Markdown => "markdown",
        TextFormat::Html => "html",
    }
}

/// Normalizes text the way ids see it: CRLF becomes LF, trailing whitespace
/// of every line and surrounding blank lines are dropped.
pub fn normalize_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.trim_matches(|c| c == '\n' || c == '\r').lines() {
        if !out.is_empty() {
            out.push('\n');
        }
        out.push_str(line.trim_end());
    }
    out
}

mod base64_bytes {
    use super::*;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(data: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&base64::engine::general_purpose::STANDARD.encode(data))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
        let text = String::deserialize(deserializer)?;
        base64::engine::general_purpose::STANDARD.decode(text.as_bytes()).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalization_ignores_line_endings_and_trailing_space() {
        assert_eq!(normalize_text("a  \r\nb\t\n\n"), "a\nb");
        assert_eq!(normalize_text("\n\n  indented\n"), "  indented");
    }

    #[test]
    fn every_variant_round_trips_through_json() {
        let all = vec![
            Content::markdown("hello *world*"),
            Content::code(Some("rust".into()), "fn main() {}\n"),
            Content::Table {
                columns: vec!["a".into(), "b".into()],
                rows: vec![vec!["1".into(), "2".into()]],
                align: vec![Align::Left, Align::Right],
            },
            Content::Math { notation: MathNotation::Latex, expression: "e^{i\\pi}+1=0".into() },
            Content::Media { kind: MediaKind::Image, uri: "a.png".into(), alt: Some("A".into()), title: None },
            Content::Json { value: serde_json::json!({"k": [1, 2]}) },
            Content::Binary { mime: "application/octet-stream".into(), data: vec![0, 159, 255] },
            Content::Composite,
        ];
        for content in all {
            let json = serde_json::to_string(&content).unwrap();
            let back: Content = serde_json::from_str(&json).unwrap();
            assert_eq!(back, content, "{json}");
        }
    }

    #[test]
    fn a_json_blocks_id_does_not_depend_on_key_order() {
        let ordered: serde_json::Value = serde_json::from_str(r#"{"a": 1, "b": {"c": 2, "d": 3}}"#).unwrap();
        let reversed: serde_json::Value = serde_json::from_str(r#"{"b": {"d": 3, "c": 2}, "a": 1}"#).unwrap();
        let id = |value: serde_json::Value| crate::Block::derive_id(&Content::Json { value }, None, "", 0);
        assert_eq!(id(ordered.clone()), id(reversed));
        // The id of a build that keeps maps sorted, as it always was.
        assert_eq!(id(ordered).to_string(), "blk_9d8a73a7352991ad25ffe7ef");
    }
}
