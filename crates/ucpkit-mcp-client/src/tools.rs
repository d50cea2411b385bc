//! The servers' tools as records of UCP's registry, next to UCP's own:
//! each server tool as `mcp__<server>__<tool>` with the server's own
//! description and schema, and for a server with resources or prompts a
//! `…__read-resource` and a `…__get-prompt` tool whose descriptions list
//! them (so `find_tools` finds them too). A call is forwarded to the
//! server and its answer turned into text, capped before the registry
//! pages it.

use std::collections::BTreeSet;
use std::sync::Arc;

use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceContents,
};
use serde_json::{json, Value};
use ucpkit_registry::{ActionKind, CallError, Effects, JsonObject, Tool, ToolOutput, Writes};

use crate::cache::Listing;
use crate::names::tool_name;
use crate::McpServers;

/// Most bytes of one answer kept (the registry pages what is kept).
pub const MAX_RESULT_BYTES: usize = 1 << 20;

/// How many resources or prompts a description lists by name.
const LISTED_BY_NAME: usize = 25;

/// The registry records of every server's tools, from their lists, and
/// notes on what is not offered (a name too long or taken twice, a server
/// that could not be listed).
pub fn registry_tools(servers: &Arc<McpServers>) -> (Vec<Tool>, Vec<String>) {
    let mut tools = Vec::new();
    let mut notes = Vec::new();
    let mut taken = BTreeSet::new();
    for (server, listing) in servers.listings(false) {
        let listing = match listing {
            Ok(listing) => listing,
            Err(e) => {
                notes.push(format!("{e}; its tools are not offered"));
                continue;
            }
        };
        let Some(config) = servers.config(&server) else { continue };
        let own =
            listing.tools.iter().filter(|t| config.offers_tool(&t.name)).map(|t| tool_record(servers, &server, t));
        let extra = [
            resource_tool(servers, &server, &listing).transpose(),
            prompt_tool(servers, &server, &listing).transpose(),
        ];
        for record in own.chain(extra.into_iter().flatten()) {
            match record {
                Ok(tool) if taken.insert(tool.name().to_owned()) => tools.push(tool),
                Ok(tool) => {
                    notes.push(format!("{server}: two tools take the name {}; the second is not offered", tool.name()))
                }
                Err(note) => notes.push(note),
            }
        }
    }
    (tools, notes)
}

/// The record of `server`'s tool `tool`.
fn tool_record(servers: &Arc<McpServers>, server: &str, tool: &rmcp::model::Tool) -> Result<Tool, String> {
    let name = tool_name(server, &tool.name)?;
    let description = tool.description.as_deref().or(tool.title.as_deref()).unwrap_or_default();
    let (servers, server_name, own_name, registered) =
        (servers.clone(), server.to_owned(), tool.name.to_string(), name.clone());
    let handler: ucpkit_registry::tool::Handler = Arc::new(move |connection, arguments: &JsonObject| {
        let result = servers.call_tool(&server_name, &own_name, arguments.clone()).map_err(call_error)?;
        Ok(connection.bounded_output(&registered, call_output(&result)))
    });
    let hints = tool.annotations.as_ref();
    let read_only = hints.and_then(|h| h.read_only_hint) == Some(true);
    let open_world = hints.and_then(|h| h.open_world_hint) != Some(false);
    Ok(external(Tool::untyped(&name, description, (*tool.input_schema).clone(), handler), read_only, open_world))
}

/// `tool` as an external one: a read-only offer keeps it only when its
/// server says it changes nothing.
fn external(tool: Tool, read_only: bool, open_world: bool) -> Tool {
    let writes = if read_only { Writes::Never } else { Writes::Always };
    // Whatever else it does, its server alone knows: an action of its own kind.
    let kind = if read_only { ActionKind::Read } else { ActionKind::Other };
    let mut tool = tool.effects(Effects { writes, executes: false, network: open_world }).kind(kind);
    tool.def.annotations.read_only_hint = read_only;
    tool.def.annotations.open_world_hint = open_world;
    tool
}

/// `server`'s resource reader, when it has resources.
fn resource_tool(servers: &Arc<McpServers>, server: &str, listing: &Listing) -> Result<Option<Tool>, String> {
    if listing.resources.is_empty() {
        return Ok(None);
    }
    let name = tool_name(server, "read-resource")?;
    let listed = listed(&listing.resources, |r: &Resource| match &r.description {
        Some(d) => format!("{} ({}): {}", r.name, r.uri, first_line(d)),
        None => format!("{} ({})", r.name, r.uri),
    });
    let description = format!("Read a resource of the MCP server {server} by its URI. Its resources: {listed}");
    let schema = json!({"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]});
    let (servers, server, registered) = (servers.clone(), server.to_owned(), name.clone());
    let handler: ucpkit_registry::tool::Handler = Arc::new(move |connection, arguments: &JsonObject| {
        let uri = arguments.get("uri").and_then(Value::as_str).ok_or_else(|| missing("uri"))?;
        let result = servers.read_resource(&server, uri).map_err(call_error)?;
        let output = ToolOutput { text: capped(resource_text(&result)), is_error: false };
        Ok(connection.bounded_output(&registered, output))
    });
    Ok(Some(external(Tool::untyped(&name, &description, object(schema), handler), true, true)))
}

/// `server`'s prompt getter, when it has prompts.
fn prompt_tool(servers: &Arc<McpServers>, server: &str, listing: &Listing) -> Result<Option<Tool>, String> {
    if listing.prompts.is_empty() {
        return Ok(None);
    }
    let name = tool_name(server, "get-prompt")?;
    let listed = listed(&listing.prompts, |p: &Prompt| {
        let arguments: Vec<String> = p
            .arguments
            .iter()
            .flatten()
            .map(|a| format!("{}{}", a.name, if a.required == Some(true) { "" } else { "?" }))
            .collect();
        let description = p.description.as_deref().map(|d| format!(": {}", first_line(d))).unwrap_or_default();
        format!("{}({}){description}", p.name, arguments.join(", "))
    });
    let description =
        format!("Get a prompt of the MCP server {server}, filled with its arguments. Its prompts: {listed}");
    let schema = json!({"type": "object", "properties": {
        "name": {"type": "string"},
        "arguments": {"type": "object", "additionalProperties": {"type": "string"}}
    }, "required": ["name"]});
    let (servers, server, registered) = (servers.clone(), server.to_owned(), name.clone());
    let handler: ucpkit_registry::tool::Handler = Arc::new(move |connection, arguments: &JsonObject| {
        let name = arguments.get("name").and_then(Value::as_str).ok_or_else(|| missing("name"))?;
        let filled = match arguments.get("arguments") {
            Some(Value::Object(filled)) => filled.clone(),
            None | Some(Value::Null) => JsonObject::new(),
            Some(_) => return Err(CallError::Arguments("arguments: expected an object of strings".into())),
        };
        let result = servers.get_prompt(&server, name, filled).map_err(call_error)?;
        let output = ToolOutput { text: capped(prompt_text(&result)), is_error: false };
        Ok(connection.bounded_output(&registered, output))
    });
    Ok(Some(external(Tool::untyped(&name, &description, object(schema), handler), true, true)))
}

fn listed<T>(items: &[T], line: impl Fn(&T) -> String) -> String {
    let mut text: Vec<String> = items.iter().take(LISTED_BY_NAME).map(line).collect();
    if items.len() > LISTED_BY_NAME {
        text.push(format!("and {} more", items.len() - LISTED_BY_NAME));
    }
    text.join("; ")
}

fn first_line(text: &str) -> &str {
    text.lines().next().unwrap_or_default().trim()
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

fn missing(argument: &str) -> CallError {
    CallError::Arguments(format!("missing field `{argument}`"))
}

fn call_error(error: crate::McpClientError) -> CallError {
    CallError::External(error.to_string())
}

/// A tool's answer as text: its text blocks as they are, other blocks
/// named, its structured content when it has no blocks; capped.
pub fn call_output(result: &CallToolResult) -> ToolOutput {
    let mut parts: Vec<String> = result.content.iter().map(block_text).collect();
    if parts.is_empty() {
        if let Some(structured) = &result.structured_content {
            parts.push(structured.to_string());
        }
    }
    ToolOutput { text: capped(parts.join("\n")), is_error: result.is_error == Some(true) }
}

fn block_text(block: &ContentBlock) -> String {
    match block {
        ContentBlock::Text(text) => text.text.clone(),
        ContentBlock::Image(image) => format!("[image, {}, {} bytes in base64]", image.mime_type, image.data.len()),
        ContentBlock::Audio(audio) => format!("[audio, {}, {} bytes in base64]", audio.mime_type, audio.data.len()),
        ContentBlock::Resource(embedded) => contents_text(&embedded.resource),
        ContentBlock::ResourceLink(link) => format!("[resource {} ({})]", link.name, link.uri),
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn contents_text(contents: &ResourceContents) -> String {
    match contents {
        ResourceContents::TextResourceContents { text, .. } => text.clone(),
        ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => {
            format!("[{uri}: {}, {} bytes in base64]", mime_type.as_deref().unwrap_or("binary"), blob.len())
        }
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

fn resource_text(result: &ReadResourceResult) -> String {
    result.contents.iter().map(contents_text).collect::<Vec<_>>().join("\n")
}

fn prompt_text(result: &GetPromptResult) -> String {
    let messages = result.messages.iter().map(|m| {
        let role = serde_json::to_value(&m.role).ok().and_then(|v| v.as_str().map(str::to_owned)).unwrap_or_default();
        format!("{role}: {}", block_text(&m.content))
    });
    result.description.iter().cloned().chain(messages).collect::<Vec<_>>().join("\n\n")
}

/// `text` cut to [`MAX_RESULT_BYTES`] at a character boundary, saying so.
fn capped(mut text: String) -> String {
    if text.len() <= MAX_RESULT_BYTES {
        return text;
    }
    let total = text.len();
    let mut end = MAX_RESULT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text.truncate(end);
    text.push_str(&format!("\n[cut: the answer was {total} bytes; the first {end} are kept]"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_become_capped_text() {
        let mut result =
            CallToolResult::success(vec![ContentBlock::text("one"), ContentBlock::image("aGk=", "image/png")]);
        assert_eq!(call_output(&result).text, "one\n[image, image/png, 4 bytes in base64]");
        result.is_error = Some(true);
        assert!(call_output(&result).is_error);
        let big = CallToolResult::success(vec![ContentBlock::text("é".repeat(MAX_RESULT_BYTES))]);
        let text = call_output(&big).text;
        assert!(text.len() < MAX_RESULT_BYTES + 100 && text.ends_with("are kept]"), "{}", &text[text.len() - 80..]);
    }
}
