//! Blocks from UCL: content type, properties and the `::` literal of an
//! APPEND or a block definition become [`Content`] and [`Metadata`].

use base64::Engine as _;
use serde_json::Value as Json;
use ucpkit_core::{Align, Content, MathNotation, MediaKind, Metadata, Role, SourceLocation, TextFormat, Timestamps};
use ucpkit_ucl::{ContentLiteral, ContentType, Properties, Value};

use crate::EngineError;

/// Content and metadata described by UCL.
pub(crate) fn build(
    content_type: ContentType,
    properties: &Properties,
    literal: Option<&ContentLiteral>,
) -> Result<(Content, Metadata), EngineError> {
    let mut props = Props::new(properties);
    let content = content(content_type, literal, &mut props)?;
    let metadata = metadata(&mut props)?;
    Ok((content, metadata))
}

/// Properties not yet consumed.
struct Props<'a> {
    entries: Vec<(&'a str, &'a Value)>,
}

impl<'a> Props<'a> {
    fn new(properties: &'a Properties) -> Self {
        Props { entries: properties.iter().map(|(k, v)| (k.as_str(), v)).collect() }
    }

    fn take(&mut self, names: &[&str]) -> Option<&'a Value> {
        let at = self.entries.iter().position(|(k, _)| names.iter().any(|n| n.eq_ignore_ascii_case(k)))?;
        Some(self.entries.remove(at).1)
    }

    fn string(&mut self, names: &[&str]) -> Result<Option<String>, EngineError> {
        match self.take(names) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(EngineError::InvalidValue(format!("{} must be a string, not {other}", names[0]))),
        }
    }

    fn int(&mut self, name: &str) -> Result<Option<i64>, EngineError> {
        match self.take(&[name]) {
            None => Ok(None),
            Some(Value::Int(i)) => Ok(Some(*i)),
            Some(other) => Err(EngineError::InvalidValue(format!("{name} must be a whole number, not {other}"))),
        }
    }

    fn parsed<T: serde::de::DeserializeOwned>(&mut self, name: &str) -> Result<Option<T>, EngineError> {
        match self.take(&[name]) {
            None => Ok(None),
            Some(value) => serde_json::from_value(value.to_json())
                .map(Some)
                .map_err(|e| EngineError::InvalidValue(format!("{name}: {e}"))),
        }
    }
}

fn text_of(literal: Option<&ContentLiteral>, content_type: ContentType) -> Result<String, EngineError> {
    match literal {
        Some(ContentLiteral::Value(Value::String(s))) => Ok(s.clone()),
        Some(ContentLiteral::Value(other)) => Err(EngineError::InvalidValue(
            format!("{content_type:?} content must be a string, not {other}").to_lowercase(),
        )),
        Some(ContentLiteral::Table(_)) => Err(EngineError::InvalidValue(
            format!("{content_type:?} content must be a string, not a table").to_lowercase(),
        )),
        None => {
            Err(EngineError::InvalidValue(format!("{content_type:?} blocks need content after '::'").to_lowercase()))
        }
    }
}

fn content(
    content_type: ContentType,
    literal: Option<&ContentLiteral>,
    props: &mut Props<'_>,
) -> Result<Content, EngineError> {
    Ok(match content_type {
        ContentType::Text => {
            let format = props.parsed::<TextFormat>("format")?.unwrap_or_default();
            Content::Text { text: text_of(literal, content_type)?, format }
        }
        ContentType::Code => {
            let language = props.string(&["lang", "language"])?;
            Content::Code { language, source: text_of(literal, content_type)? }
        }
        ContentType::Math => {
            let notation = props.parsed::<MathNotation>("notation")?.unwrap_or_default();
            Content::Math { notation, expression: text_of(literal, content_type)? }
        }
        ContentType::Media => {
            let kind = props.parsed::<MediaKind>("kind")?.unwrap_or(MediaKind::Image);
            let alt = props.string(&["alt"])?;
            let title = props.string(&["title"])?;
            Content::Media { kind, uri: text_of(literal, content_type)?, alt, title }
        }
        ContentType::Json => match literal {
            Some(ContentLiteral::Value(value)) => Content::Json { value: value.to_json() },
            Some(ContentLiteral::Table(_)) => {
                return Err(EngineError::InvalidValue("json content cannot be a table".into()))
            }
            None => return Err(EngineError::InvalidValue("json blocks need content after '::'".into())),
        },
        ContentType::Binary => {
            let mime = props.string(&["mime"])?.unwrap_or_else(|| "application/octet-stream".to_owned());
            let encoded = text_of(literal, content_type)?;
            let data = base64::engine::general_purpose::STANDARD
                .decode(encoded.trim())
                .map_err(|e| EngineError::InvalidValue(format!("binary content must be base64: {e}")))?;
            Content::Binary { mime, data }
        }
        ContentType::Table => {
            let align = props.parsed::<Vec<Align>>("align")?.unwrap_or_default();
            match literal {
                Some(ContentLiteral::Table(rows)) => {
                    let mut rows = rows.clone();
                    let columns = if rows.is_empty() { Vec::new() } else { rows.remove(0) };
                    Content::Table { columns, rows, align }
                }
                Some(ContentLiteral::Value(value @ Value::Object(_))) => {
                    let mut json = value.to_json();
                    json["type"] = Json::String("table".into());
                    if !align.is_empty() {
                        json["align"] = serde_json::to_value(&align).expect("alignments serialize");
                    }
                    serde_json::from_value(json)
                        .map_err(|e| EngineError::InvalidValue(format!("table content {{columns, rows}}: {e}")))?
                }
                Some(ContentLiteral::Value(other)) => {
                    return Err(EngineError::InvalidValue(format!("table content must be |a|b| rows, not {other}")))
                }
                None => return Err(EngineError::InvalidValue("table blocks need |a|b| rows after '::'".into())),
            }
        }
        ContentType::Composite => {
            if literal.is_some() {
                return Err(EngineError::InvalidValue(
                    "composite blocks take no content; append children to them".into(),
                ));
            }
            Content::Composite
        }
    })
}

fn metadata(props: &mut Props<'_>) -> Result<Metadata, EngineError> {
    let mut metadata = Metadata {
        role: props.string(&["role"])?.map(|r| r.parse::<Role>().unwrap_or_else(|never| match never {})),
        label: props.string(&["label"])?,
        summary: props.string(&["summary"])?,
        ..Metadata::default()
    };
    metadata.tags = match props.take(&["tags"]) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(tag)) => vec![tag.clone()],
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(EngineError::InvalidValue(format!("tags must be strings, not {other}"))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(EngineError::InvalidValue(format!("tags must be an array of strings, not {other}"))),
    };
    metadata.source = props.parsed::<SourceLocation>("source")?;
    metadata.tokens = match props.int("tokens")? {
        None => None,
        Some(n) => {
            Some(u32::try_from(n).map_err(|_| EngineError::InvalidValue(format!("tokens {n} is out of range")))?)
        }
    };
    metadata.timestamps = Timestamps {
        created_ms: props.int("created_ms")?.unwrap_or(0),
        modified_ms: props.int("modified_ms")?.unwrap_or(0),
    };
    if let Some(custom) = props.take(&["custom"]) {
        let Json::Object(map) = custom.to_json() else {
            return Err(EngineError::InvalidValue(format!("custom must be an object, not {custom}")));
        };
        metadata.custom.extend(map);
    }
    for (key, value) in props.entries.drain(..) {
        metadata.custom.insert(key.to_owned(), value.to_json());
    }
    Ok(metadata)
}

/// Properties (and literal) that rebuild `content` and `metadata` exactly:
/// the inverse of [`build`], used by the document-form export.
pub(crate) fn describe(content: &Content, metadata: &Metadata) -> (ContentType, Properties, Option<ContentLiteral>) {
    let mut props: Properties = Vec::new();
    let mut put = |key: &str, value: Value| props.push((key.to_owned(), value));
    let string = |s: &str| Value::String(s.to_owned());
    if let Some(role) = &metadata.role {
        put("role", string(role.as_str()));
    }
    if let Some(label) = &metadata.label {
        put("label", string(label));
    }
    if !metadata.tags.is_empty() {
        put("tags", Value::Array(metadata.tags.iter().map(|t| string(t)).collect()));
    }
    if let Some(summary) = &metadata.summary {
        put("summary", string(summary));
    }
    if let Some(source) = &metadata.source {
        put("source", Value::from_json(&serde_json::to_value(source).expect("sources serialize")));
    }
    if let Some(tokens) = metadata.tokens {
        put("tokens", Value::Int(i64::from(tokens)));
    }
    if metadata.timestamps.created_ms != 0 {
        put("created_ms", Value::Int(metadata.timestamps.created_ms));
    }
    if metadata.timestamps.modified_ms != 0 {
        put("modified_ms", Value::Int(metadata.timestamps.modified_ms));
    }
    if !metadata.custom.is_empty() {
        put("custom", Value::from_json(&Json::Object(metadata.custom.clone().into_iter().collect())));
    }
    let (content_type, literal) = match content {
        Content::Text { text, format } => {
            if *format != TextFormat::default() {
                put("format", as_value(format));
            }
            (ContentType::Text, Some(ContentLiteral::Value(string(text))))
        }
        Content::Code { language, source } => {
            if let Some(language) = language {
                put("lang", string(language));
            }
            (ContentType::Code, Some(ContentLiteral::Value(string(source))))
        }
        Content::Math { notation, expression } => {
            if *notation != MathNotation::default() {
                put("notation", as_value(notation));
            }
            (ContentType::Math, Some(ContentLiteral::Value(string(expression))))
        }
        Content::Media { kind, uri, alt, title } => {
            put("kind", as_value(kind));
            if let Some(alt) = alt {
                put("alt", string(alt));
            }
            if let Some(title) = title {
                put("title", string(title));
            }
            (ContentType::Media, Some(ContentLiteral::Value(string(uri))))
        }
        Content::Json { value } => (ContentType::Json, Some(ContentLiteral::Value(Value::from_json(value)))),
        Content::Binary { mime, data } => {
            put("mime", string(mime));
            let encoded = base64::engine::general_purpose::STANDARD.encode(data);
            (ContentType::Binary, Some(ContentLiteral::Value(Value::String(encoded))))
        }
        Content::Table { columns, rows, align } => {
            if !align.is_empty() {
                put("align", Value::from_json(&serde_json::to_value(align).expect("alignments serialize")));
            }
            let literal = if columns.is_empty() {
                let json = serde_json::json!({ "columns": columns, "rows": rows });
                ContentLiteral::Value(Value::from_json(&json))
            } else {
                ContentLiteral::Table(std::iter::once(columns.clone()).chain(rows.iter().cloned()).collect())
            };
            (ContentType::Table, Some(literal))
        }
        Content::Composite => (ContentType::Composite, None),
    };
    (content_type, props, literal)
}

/// A small content enum (format, notation, kind) as a UCL value.
fn as_value<T: serde::Serialize>(value: &T) -> Value {
    Value::from_json(&serde_json::to_value(value).expect("content enums serialize"))
}
