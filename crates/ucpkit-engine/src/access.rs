//! Paths into a block: which field a UCL path names, reading it as JSON
//! for conditions, and applying `= += -= ++ --` to it for EDIT.

use serde_json::{Map, Value as Json};
use ucpkit_core::{Block, Content, Role};
use ucpkit_ucl::{EditOp, Path, PathSegment};

use crate::EngineError;

/// The field of a block a path starts at.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Field<'p> {
    /// The main text: text, code source or math expression.
    Text,
    Label,
    Summary,
    Role,
    Tags,
    /// A code block's language.
    Language,
    /// Any other content field (`rows`, `columns`, `value`, `uri` ...).
    Content(&'p str),
    /// A free-form metadata value.
    Custom(&'p str),
    /// Read-only facts: id, content kind, source, token count, timestamps.
    ReadOnly(&'p str),
}

/// Splits a path into the field it names and the segments below it.
pub(crate) fn resolve(path: &Path) -> Result<(Field<'_>, &[PathSegment]), EngineError> {
    let segments = path.0.as_slice();
    let name = |i: usize| match segments.get(i) {
        Some(PathSegment::Field(name)) => Some(name.as_str()),
        _ => None,
    };
    let Some(first) = name(0) else {
        return Err(EngineError::path(path, "a path starts with a field name"));
    };
    let meta = |field: &str| match field {
        "label" => Some(Field::Label),
        "summary" => Some(Field::Summary),
        "role" => Some(Field::Role),
        "tags" => Some(Field::Tags),
        _ => None,
    };
    let resolved = match first {
        "text" => (Field::Text, 1),
        "lang" | "language" => (Field::Language, 1),
        "id" | "type" | "kind" => (Field::ReadOnly(first), 1),
        "content" => match name(1) {
            Some("text" | "source" | "expression") => (Field::Text, 2),
            Some("lang" | "language") => (Field::Language, 2),
            Some("type") => (Field::ReadOnly("type"), 2),
            Some(field) => (Field::Content(field), 2),
            None => return Err(EngineError::path(path, "name a content field (content.text, content.rows ...)")),
        },
        "metadata" => match name(1) {
            Some(field) if meta(field).is_some() => (meta(field).expect("checked"), 2),
            Some(field @ ("source" | "tokens" | "timestamps" | "created_ms" | "modified_ms")) => {
                (Field::ReadOnly(field), 2)
            }
            Some("custom") => match name(2) {
                Some(key) => (Field::Custom(key), 3),
                None => return Err(EngineError::path(path, "name a key under metadata.custom")),
            },
            Some(key) => (Field::Custom(key), 2),
            None => return Err(EngineError::path(path, "name a metadata field (metadata.label, metadata.tags ...)")),
        },
        other => match meta(other) {
            Some(field) => (field, 1),
            None => (Field::Custom(other), 1),
        },
    };
    Ok((resolved.0, &segments[resolved.1..]))
}

/// The main text of a block, when it has one.
pub(crate) fn main_text(content: &Content) -> Option<&str> {
    match content {
        Content::Text { text, .. } => Some(text),
        Content::Code { source, .. } => Some(source),
        Content::Math { expression, .. } => Some(expression),
        _ => None,
    }
}

fn main_text_mut(content: &mut Content) -> Option<&mut String> {
    match content {
        Content::Text { text, .. } => Some(text),
        Content::Code { source, .. } => Some(source),
        Content::Math { expression, .. } => Some(expression),
        _ => None,
    }
}

/// Reads the value a path names, as JSON (`None` when absent).
pub(crate) fn read(block: &Block, path: &Path) -> Result<Option<Json>, EngineError> {
    let (field, rest) = resolve(path)?;
    Ok(read_field(block, field).and_then(|v| descend(v, rest)))
}

/// The value of one field of a block, as JSON (`None` when absent).
fn read_field(block: &Block, field: Field<'_>) -> Option<Json> {
    match field {
        Field::Text => main_text(&block.content).map(|t| Json::String(t.to_owned())),
        Field::Label => block.metadata.label.clone().map(Json::String),
        Field::Summary => block.metadata.summary.clone().map(Json::String),
        Field::Role => block.metadata.role.as_ref().map(|r| Json::String(r.as_str().to_owned())),
        Field::Tags => Some(Json::Array(block.metadata.tags.iter().cloned().map(Json::String).collect())),
        Field::Language => match &block.content {
            Content::Code { language, .. } => language.clone().map(Json::String),
            _ => None,
        },
        Field::Custom(key) => block.metadata.custom.get(key).cloned(),
        Field::Content(name) => content_json(&block.content).remove(name),
        Field::ReadOnly(name) => match name {
            "id" => Some(Json::String(block.id.to_string())),
            "type" | "kind" => Some(Json::String(block.content.kind().to_owned())),
            "tokens" => block.metadata.tokens.map(Json::from),
            "created_ms" => Some(block.metadata.timestamps.created_ms.into()),
            "modified_ms" => Some(block.metadata.timestamps.modified_ms.into()),
            "source" => block.metadata.source.as_ref().and_then(|s| serde_json::to_value(s).ok()),
            _ => serde_json::to_value(block.metadata.timestamps).ok(),
        },
    }
}

fn content_json(content: &Content) -> Map<String, Json> {
    match serde_json::to_value(content) {
        Ok(Json::Object(map)) => map,
        _ => Map::new(),
    }
}

/// Follows field, index and slice segments into a JSON value.
fn descend(mut value: Json, rest: &[PathSegment]) -> Option<Json> {
    for segment in rest {
        value = match (segment, value) {
            (PathSegment::Field(name), Json::Object(mut map)) => map.remove(name)?,
            (PathSegment::Index(i), Json::Array(mut items)) => {
                let at = index(*i, items.len())?;
                items.swap_remove(at)
            }
            (PathSegment::Index(i), Json::String(s)) => {
                let chars: Vec<char> = s.chars().collect();
                Json::String(chars.get(index(*i, chars.len())?)?.to_string())
            }
            (PathSegment::Slice(a, b), Json::Array(items)) => {
                let (a, b) = slice(*a, *b, items.len());
                Json::Array(items[a..b].to_vec())
            }
            (PathSegment::Slice(a, b), Json::String(s)) => {
                let chars: Vec<char> = s.chars().collect();
                let (a, b) = slice(*a, *b, chars.len());
                Json::String(chars[a..b].iter().collect())
            }
            _ => return None,
        };
    }
    Some(value)
}

/// A position from a possibly negative index; `None` when out of range.
fn index(i: i64, len: usize) -> Option<usize> {
    let len = i64::try_from(len).ok()?;
    let at = if i < 0 { len + i } else { i };
    (0..len).contains(&at).then(|| usize::try_from(at).expect("in range"))
}

/// A clamped `[a:b]` range (negative ends count from the end).
fn slice(a: Option<i64>, b: Option<i64>, len: usize) -> (usize, usize) {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let clamp = |x: i64| {
        let x = if x < 0 { len_i + x } else { x };
        usize::try_from(x.clamp(0, len_i)).unwrap_or(0)
    };
    let start = a.map_or(0, clamp);
    let end = b.map_or(len, clamp).max(start);
    (start, end)
}

/// The `[a:b]` range an edit replaces: unlike a read, which clamps, a
/// range outside the value or one whose start is after its end is an error.
fn exact_slice(a: Option<i64>, b: Option<i64>, len: usize, path: &Path) -> Result<(usize, usize), EngineError> {
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let at = |x: i64| if x < 0 { len_i.checked_add(x) } else { Some(x) }.filter(|x| (0..=len_i).contains(x));
    let written = |x: Option<i64>| x.map(|x| x.to_string()).unwrap_or_default();
    let range = format!("[{}:{}]", written(a), written(b));
    let start = a.map_or(Some(0), at);
    let end = b.map_or(Some(len_i), at);
    let (Some(start), Some(end)) = (start, end) else {
        return Err(EngineError::path(path, format!("slice {range} is out of range (length {len})")));
    };
    if start > end {
        return Err(EngineError::path(path, format!("slice {range} is reversed: its start comes after its end")));
    }
    Ok((usize::try_from(start).unwrap_or(len), usize::try_from(end).unwrap_or(len)))
}

/// Applies an EDIT operation to the field a path names. Nothing changes
/// when an error is returned.
pub(crate) fn edit(block: &mut Block, path: &Path, op: &EditOp) -> Result<(), EngineError> {
    let (field, rest) = resolve(path)?;
    let kind = block.content.kind();
    // Fast paths for the common edits: whole text, label, summary.
    if rest.is_empty() {
        if let (Field::Text, EditOp::Set(ucpkit_ucl::Value::String(new))) = (field, op) {
            let text = main_text_mut(&mut block.content).ok_or_else(|| not_text(path, kind))?;
            text.clone_from(new);
            return Ok(());
        }
        if let (Field::Text, EditOp::Append(ucpkit_ucl::Value::String(more))) = (field, op) {
            let text = main_text_mut(&mut block.content).ok_or_else(|| not_text(path, kind))?;
            text.push_str(more);
            return Ok(());
        }
        if let (Field::Label | Field::Summary, EditOp::Set(ucpkit_ucl::Value::String(new))) = (field, op) {
            let slot = if field == Field::Label { &mut block.metadata.label } else { &mut block.metadata.summary };
            *slot = Some(new.clone());
            return Ok(());
        }
    }
    let current = read_field(block, field).unwrap_or(Json::Null);
    let updated = apply_at(current, rest, op, path)?;
    write(block, field, updated, path)
}

fn not_text(path: &Path, kind: &str) -> EngineError {
    EngineError::path(
        path,
        format!("a {kind} block has no text; edit its content fields (content.rows, content.value ...)"),
    )
}

/// Stores a new value for a field, checking its type.
fn write(block: &mut Block, field: Field<'_>, value: Json, path: &Path) -> Result<(), EngineError> {
    let string_or_null = |value: Json, what: &str| match value {
        Json::String(s) => Ok(Some(s)),
        Json::Null => Ok(None),
        other => Err(EngineError::InvalidValue(format!("{what} must be a string, not {other}"))),
    };
    match field {
        Field::Text => {
            let kind = block.content.kind();
            let Json::String(new) = value else {
                return Err(EngineError::InvalidValue(format!("{path} must be a string, not {value}")));
            };
            *main_text_mut(&mut block.content).ok_or_else(|| not_text(path, kind))? = new;
        }
        Field::Label => block.metadata.label = string_or_null(value, "a label")?,
        Field::Summary => block.metadata.summary = string_or_null(value, "a summary")?,
        Field::Role => {
            block.metadata.role =
                string_or_null(value, "a role")?.map(|r| r.parse::<Role>().unwrap_or_else(|n| match n {}))
        }
        Field::Tags => {
            let tags = match value {
                Json::Array(items) => items
                    .into_iter()
                    .map(|t| match t {
                        Json::String(s) => Ok(s),
                        other => Err(EngineError::InvalidValue(format!("tags must be strings, not {other}"))),
                    })
                    .collect::<Result<Vec<_>, _>>()?,
                Json::String(tag) => vec![tag],
                Json::Null => Vec::new(),
                other => {
                    return Err(EngineError::InvalidValue(format!("tags must be an array of strings, not {other}")))
                }
            };
            let mut unique = Vec::with_capacity(tags.len());
            for tag in tags {
                if !unique.contains(&tag) {
                    unique.push(tag);
                }
            }
            block.metadata.tags = unique;
        }
        Field::Language => {
            let Content::Code { language, .. } = &mut block.content else {
                return Err(EngineError::path(path, format!("a {} block has no language", block.content.kind())));
            };
            *language = string_or_null(value, "a language")?;
        }
        Field::Custom(key) => {
            block.metadata.custom.insert(key.to_owned(), value);
        }
        Field::Content(name) => {
            let mut map = content_json(&block.content);
            if !map.contains_key(name) && !matches!(name, "language" | "alt" | "title" | "align") {
                return Err(EngineError::path(path, format!("a {} block has no field {name}", block.content.kind())));
            }
            map.insert(name.to_owned(), value);
            let content: Content = serde_json::from_value(Json::Object(map))
                .map_err(|e| EngineError::InvalidValue(format!("{path}: {e}")))?;
            block.content = content;
        }
        Field::ReadOnly(name) => return Err(EngineError::path(path, format!("{name} cannot be edited"))),
    }
    Ok(())
}

/// Applies `op` at `rest` below `current`, returning the new value.
fn apply_at(current: Json, rest: &[PathSegment], op: &EditOp, path: &Path) -> Result<Json, EngineError> {
    let Some((segment, deeper)) = rest.split_first() else {
        return apply(current, op, path);
    };
    match (segment, current) {
        (PathSegment::Field(name), Json::Object(mut map)) => {
            let child = map.remove(name).unwrap_or(Json::Null);
            map.insert(name.clone(), apply_at(child, deeper, op, path)?);
            Ok(Json::Object(map))
        }
        (PathSegment::Field(name), Json::Null) => {
            let mut map = Map::new();
            map.insert(name.clone(), apply_at(Json::Null, deeper, op, path)?);
            Ok(Json::Object(map))
        }
        (PathSegment::Index(i), Json::Array(mut items)) => {
            let len = items.len();
            let at = index(*i, len)
                .ok_or_else(|| EngineError::path(path, format!("index {i} is out of range (length {len})")))?;
            let child = std::mem::take(&mut items[at]);
            items[at] = apply_at(child, deeper, op, path)?;
            Ok(Json::Array(items))
        }
        (PathSegment::Slice(a, b), current) if deeper.is_empty() => {
            let EditOp::Set(replacement) = op else {
                return Err(EngineError::path(path, "a slice can only be replaced with ="));
            };
            match (current, replacement.to_json()) {
                (Json::String(s), Json::String(new)) => {
                    let chars: Vec<char> = s.chars().collect();
                    let (a, b) = exact_slice(*a, *b, chars.len(), path)?;
                    let mut out: String = chars[..a].iter().collect();
                    out.push_str(&new);
                    out.extend(&chars[b..]);
                    Ok(Json::String(out))
                }
                (Json::Array(mut items), Json::Array(new)) => {
                    let (a, b) = exact_slice(*a, *b, items.len(), path)?;
                    items.splice(a..b, new);
                    Ok(Json::Array(items))
                }
                (current, new) => Err(EngineError::InvalidValue(format!(
                    "{path}: a slice of {} cannot be replaced by {new}",
                    kind_name(&current)
                ))),
            }
        }
        (segment, current) => {
            Err(EngineError::path(path, format!("cannot apply {} to {}", segment_text(segment), kind_name(&current))))
        }
    }
}

fn segment_text(segment: &PathSegment) -> String {
    match segment {
        PathSegment::Field(name) => format!(".{name}"),
        PathSegment::Index(i) => format!("[{i}]"),
        PathSegment::Slice(..) => "a slice inside a path".to_owned(),
    }
}

fn kind_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "nothing",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "text",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

fn apply(current: Json, op: &EditOp, path: &Path) -> Result<Json, EngineError> {
    let mismatch = |verb: &str, current: &Json, value: &Json| {
        EngineError::InvalidValue(format!("{path}: cannot {verb} {} and {}", kind_name(current), kind_name(value)))
    };
    Ok(match op {
        EditOp::Set(value) => value.to_json(),
        EditOp::Append(value) => match (current, value.to_json()) {
            (Json::String(mut s), Json::String(t)) => {
                s.push_str(&t);
                Json::String(s)
            }
            (Json::Array(mut items), Json::Array(more)) => {
                items.extend(more);
                Json::Array(items)
            }
            (Json::Array(mut items), item) => {
                items.push(item);
                Json::Array(items)
            }
            (Json::Number(a), Json::Number(b)) => add(&a, &b, 1)?,
            (Json::Null, value) => value,
            (current, value) => return Err(mismatch("add", &current, &value)),
        },
        EditOp::Remove(value) => match (current, value.to_json()) {
            (Json::String(s), Json::String(t)) if !t.is_empty() => Json::String(s.replace(&t, "")),
            (Json::Array(items), Json::Array(gone)) => {
                Json::Array(items.into_iter().filter(|i| !gone.contains(i)).collect())
            }
            (Json::Array(items), gone) => Json::Array(items.into_iter().filter(|i| *i != gone).collect()),
            (Json::Number(a), Json::Number(b)) => add(&a, &b, -1)?,
            (Json::Null, _) => Json::Null,
            (current, value) => return Err(mismatch("remove", &current, &value)),
        },
        EditOp::Increment | EditOp::Decrement => {
            let sign = if matches!(op, EditOp::Increment) { 1 } else { -1 };
            match current {
                Json::Number(a) => add(&a, &serde_json::Number::from(1), sign)?,
                Json::Null => Json::from(sign),
                other => {
                    return Err(EngineError::InvalidValue(format!(
                        "{path}: ++ and -- need a number, not {}",
                        kind_name(&other)
                    )))
                }
            }
        }
    })
}

/// `a + sign * b`, exact for integers: integers whose result leaves the
/// 64-bit range are an error, never silently a float.
fn add(a: &serde_json::Number, b: &serde_json::Number, sign: i64) -> Result<Json, EngineError> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        let sum = if sign < 0 { x.checked_sub(y) } else { x.checked_add(y) };
        return sum.map(Json::from).ok_or_else(|| {
            let operator = if sign < 0 { '-' } else { '+' };
            EngineError::InvalidValue(format!(
                "integer overflow: {x} {operator} {y} is outside the 64-bit range ({} to {})",
                i64::MIN,
                i64::MAX
            ))
        });
    }
    let sum = a.as_f64().unwrap_or(0.0) + sign as f64 * b.as_f64().unwrap_or(0.0);
    serde_json::Number::from_f64(sum)
        .map(Json::Number)
        .ok_or_else(|| EngineError::InvalidValue("the result is not a finite number".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::{BlockId, Metadata};
    use ucpkit_ucl::Value;

    fn path(text: &str) -> Path {
        match ucpkit_ucl::parse_commands(&format!("EDIT blk_a SET {text} ++")).unwrap().remove(0) {
            ucpkit_ucl::Command::Edit(edit) => edit.path,
            _ => unreachable!(),
        }
    }

    fn block(content: Content) -> Block {
        Block::new(BlockId::ROOT, content, Metadata::default())
    }

    #[test]
    fn aliases_resolve_to_the_same_field() {
        for text in ["text", "content.text", "content.source"] {
            assert_eq!(resolve(&path(text)).unwrap().0, Field::Text);
        }
        assert_eq!(resolve(&path("metadata.tags")).unwrap().0, Field::Tags);
        assert_eq!(resolve(&path("status")).unwrap().0, Field::Custom("status"));
        assert_eq!(resolve(&path("metadata.custom.status")).unwrap().0, Field::Custom("status"));
        assert_eq!(resolve(&path("content.rows[0]")).unwrap().1, &[PathSegment::Index(0)]);
    }

    #[test]
    fn string_and_array_operations() {
        let mut b = block(Content::markdown("hello world"));
        edit(&mut b, &path("text"), &EditOp::Remove(Value::String(" world".into()))).unwrap();
        edit(&mut b, &path("text[0:1]"), &EditOp::Set(Value::String("J".into()))).unwrap();
        assert_eq!(main_text(&b.content), Some("Jello"));
        edit(
            &mut b,
            &path("tags"),
            &EditOp::Append(Value::Array(vec![Value::String("a".into()), Value::String("a".into())])),
        )
        .unwrap();
        assert_eq!(b.metadata.tags, ["a"]);
        edit(&mut b, &path("metadata.count"), &EditOp::Increment).unwrap();
        edit(&mut b, &path("metadata.count"), &EditOp::Append(Value::Int(41))).unwrap();
        assert_eq!(b.metadata.custom["count"], Json::from(42));
    }

    #[test]
    fn integer_overflow_is_an_error_not_a_float() {
        let mut b = block(Content::markdown("x"));
        b.metadata.custom.insert("n".into(), Json::from(i64::MAX));
        b.metadata.custom.insert("m".into(), Json::from(i64::MIN));
        let before = b.clone();
        for (field, op) in [
            ("metadata.n", EditOp::Increment),
            ("metadata.m", EditOp::Decrement),
            ("metadata.n", EditOp::Append(Value::Int(1))),
            ("metadata.m", EditOp::Remove(Value::Int(1))),
        ] {
            let error = edit(&mut b, &path(field), &op).unwrap_err();
            assert!(error.to_string().contains("integer overflow"), "{error}");
        }
        assert_eq!(b, before);
    }

    #[test]
    fn reversed_or_out_of_range_slices_are_errors_in_edits() {
        let mut b = block(Content::markdown("hello"));
        for slice in ["text[5:2]", "text[0:9]", "text[-9:]", "text[7:]"] {
            assert!(edit(&mut b, &path(slice), &EditOp::Set(Value::String("Y".into()))).is_err(), "{slice}");
        }
        edit(&mut b, &path("text[5:]"), &EditOp::Set(Value::String("!".into()))).unwrap();
        edit(&mut b, &path("text[-1:]"), &EditOp::Set(Value::String("?".into()))).unwrap();
        assert_eq!(main_text(&b.content), Some("hello?"));
    }

    #[test]
    fn table_cells_and_json_paths() {
        let mut b = block(Content::Table { columns: vec!["a".into()], rows: vec![vec!["1".into()]], align: vec![] });
        edit(&mut b, &path("content.rows[0][0]"), &EditOp::Set(Value::String("2".into()))).unwrap();
        assert!(matches!(&b.content, Content::Table { rows, .. } if rows[0][0] == "2"));
        let before = b.clone();
        assert!(edit(&mut b, &path("content.rows[5][0]"), &EditOp::Set(Value::String("x".into()))).is_err());
        assert!(edit(&mut b, &path("content.rows[0]"), &EditOp::Set(Value::Int(3))).is_err());
        assert!(edit(&mut b, &path("text"), &EditOp::Set(Value::String("x".into()))).is_err());
        assert_eq!(b, before);

        let mut j = block(Content::Json { value: serde_json::json!({"users": [{"name": "a"}]}) });
        edit(&mut j, &path("$users[0].name"), &EditOp::Set(Value::String("b".into()))).unwrap();
        edit(&mut j, &path("$count"), &EditOp::Increment).unwrap();
        assert_eq!(j.content, Content::Json { value: serde_json::json!({"users": [{"name": "b"}], "count": 1}) });
    }
}
