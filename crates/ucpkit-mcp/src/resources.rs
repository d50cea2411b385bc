//! Documents and blocks as resources: `ucp://<document>` (an outline) and
//! `ucp://<document>/<block id>` (the block and what is below it), listed
//! page by page and read within the token cap.

use rmcp::model::{Resource, ResourceTemplate};
use ucpkit_registry::vocabulary::outline;
use ucpkit_registry::vocabulary::{BlockId, Document, Tokenizer};

use ucpkit_registry::bound::fitting;
use ucpkit_registry::{CallError, Library};

/// The URI scheme.
pub const SCHEME: &str = "ucp://";
/// Resources per page of `resources/list`.
const PAGE: usize = 200;
/// Tokens kept for the note at the end of a cut read.
const NOTE_RESERVE: usize = 60;
/// Levels of sections an outline shows.
const OUTLINE_DEPTH: usize = 3;

/// `name` with every byte outside `A-Z a-z 0-9 - _ . ~` percent-encoded.
fn encode(name: &str) -> String {
    name.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

fn decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The URI of a document, or of one of its blocks.
pub fn uri(document: &str, block: Option<BlockId>) -> String {
    match block {
        Some(id) => format!("{SCHEME}{}/{id}", encode(document)),
        None => format!("{SCHEME}{}", encode(document)),
    }
}

/// The template clients fill in to read any block.
pub fn templates() -> Vec<ResourceTemplate> {
    vec![ResourceTemplate::new("ucp://{document}/{block}", "block")
        .with_description("A block of a document and the blocks below it, as markdown")
        .with_mime_type("text/markdown")]
}

/// Sections worth listing: blocks with children (folders, files, headings).
fn sections(doc: &Document) -> impl Iterator<Item = BlockId> + '_ {
    doc.document_order().filter(move |id| !id.is_root() && !doc.children(*id).is_empty())
}

/// One page of resources: every document, then every document's sections.
/// `cursor` is the offset the previous page returned.
pub fn list(library: &Library, cursor: Option<&str>) -> Result<(Vec<Resource>, Option<String>), CallError> {
    let start: usize = match cursor {
        None => 0,
        Some(c) => c.parse().map_err(|_| CallError::Arguments(format!("bad cursor {c:?}")))?,
    };
    let documents = library.documents()?;
    let mut out = Vec::new();
    let mut at = 0;
    for summary in &documents {
        if at >= start && out.len() < PAGE {
            out.push(
                Resource::new(uri(&summary.name, None), summary.name.clone())
                    .with_description(format!("{} blocks, {} tokens", summary.blocks, summary.tokens))
                    .with_mime_type("text/markdown"),
            );
        }
        at += 1;
    }
    for summary in &documents {
        if out.len() >= PAGE {
            break;
        }
        let workspace = library.workspace(&summary.name)?;
        let engine = workspace.traversal().engine();
        let doc = engine.document();
        for id in sections(doc) {
            if at >= start {
                if out.len() >= PAGE {
                    return Ok((out, Some(at.to_string())));
                }
                let block = doc.get(id).expect("listed blocks exist");
                let mut path = outline::path_titles(doc, id);
                path.extend(outline::title(block));
                let name = if path.is_empty() { id.to_string() } else { path.join(" > ") };
                out.push(Resource::new(uri(&summary.name, Some(id)), name).with_mime_type("text/markdown"));
            }
            at += 1;
        }
    }
    Ok((out, None))
}

/// The text of a resource, at most `cap` tokens.
pub fn read(library: &Library, uri_text: &str, cap: usize) -> Result<String, CallError> {
    let bad = || CallError::Arguments(format!("{uri_text:?} is not a ucp://<document>[/<block id>] URI"));
    let rest = uri_text.strip_prefix(SCHEME).ok_or_else(bad)?;
    let (document, block) = match rest.rsplit_once('/') {
        Some((document, block)) if block.starts_with("blk_") => (document, Some(block)),
        _ => (rest, None),
    };
    let document = decode(document).filter(|d| !d.is_empty()).ok_or_else(bad)?;
    let workspace = library.workspace(&document)?;
    let engine = workspace.traversal().engine();
    let doc = engine.document();
    let tokenizer = library.tokenizer();
    match block {
        None => Ok(outline(doc, &document, cap, tokenizer)),
        Some(block) => {
            let id: BlockId = block.parse().map_err(|_| bad())?;
            if doc.get(id).is_none() {
                return Err(CallError::Arguments(format!("no block {id} in {document}")));
            }
            Ok(subtree(doc, &document, id, cap, tokenizer))
        }
    }
}

/// Keeps `pieces` while they fit `cap` (less the note's reserve); returns
/// the text and how many pieces it holds.
fn fit(pieces: &[String], cap: usize, tokenizer: &dyn Tokenizer) -> (String, usize) {
    let room = cap.saturating_sub(NOTE_RESERVE);
    let (mut text, kept) = fitting(pieces, room, tokenizer);
    if kept == 0 {
        if let Some(first) = pieces.first() {
            text = outline::bounded_head(first, room, tokenizer);
        }
    }
    (text, kept)
}

/// The sections of a document to a few levels, each with its URI and size.
fn outline(doc: &Document, name: &str, cap: usize, tokenizer: &dyn Tokenizer) -> String {
    let mut pieces = vec![format!("# {name}: {} blocks\n\n", doc.len())];
    for id in sections(doc) {
        let depth = doc.depth(id);
        if depth > OUTLINE_DEPTH {
            continue;
        }
        let block = doc.get(id).expect("listed blocks exist");
        let title = outline::title(block).unwrap_or_else(|| block.role().map_or("block", |r| r.as_str()).to_owned());
        let (below, tokens) = outline::subtree(doc, id, tokenizer);
        pieces.push(format!(
            "{}- {title} ({}; {below} blocks, {tokens} tokens)\n",
            "  ".repeat(depth - 1),
            uri(name, Some(id))
        ));
    }
    let (mut text, kept) = fit(&pieces, cap, tokenizer);
    if kept < pieces.len() {
        text.push_str(&format!(
            "\n[outline cut at {} of {} sections; read a section's URI for what is below it]\n",
            kept.saturating_sub(1),
            pieces.len() - 1
        ));
    }
    text
}

/// A block and its descendants in document order, as markdown under the
/// block's heading path.
fn subtree(doc: &Document, name: &str, id: BlockId, cap: usize, tokenizer: &dyn Tokenizer) -> String {
    let path = outline::path_titles(doc, id);
    let mut pieces = vec![format!("§ {}\n\n", if path.is_empty() { "/".to_owned() } else { path.join(" > ") })];
    let mut ids = vec![id];
    ids.extend(doc.descendants(id));
    for block in ids.iter().filter_map(|b| doc.get(*b)) {
        pieces.push(format!("{}\n\n", outline::full_body(block)));
    }
    let (mut text, mut kept) = fit(&pieces, cap, tokenizer);
    if kept == 1 {
        // The block alone is longer than the cap: its head, then go on below it.
        let room = cap.saturating_sub(NOTE_RESERVE + tokenizer.count(&text));
        text.push_str(&outline::bounded_head(&pieces[1], room, tokenizer));
        text.push_str("\n\n[the block is longer than the cap and was cut]\n");
        kept = 2;
    }
    if kept < pieces.len() {
        text.push_str(&format!(
            "[cut at a block boundary: {} of {} blocks shown; go on from {}]\n",
            kept - 1,
            ids.len(),
            uri(name, Some(ids[kept - 1]))
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_through_uris() {
        for name in ["node", "my docs/v2", "ünïcode", "a%b"] {
            let encoded = encode(name);
            assert!(!encoded.contains('/'));
            assert_eq!(decode(&encoded).as_deref(), Some(name));
        }
        assert_eq!(decode("%zz"), None);
        assert_eq!(uri("a b", None), "ucp://a%20b");
    }

    proptest::proptest! {
        #[test]
        fn any_name_round_trips_and_any_text_decodes_without_panic(name in ".*", text in ".*") {
            proptest::prop_assert_eq!(decode(&encode(&name)), Some(name));
            let _ = decode(&text);
        }
    }
}
