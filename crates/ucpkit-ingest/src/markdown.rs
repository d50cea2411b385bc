//! Markdown (CommonMark + GFM) into blocks, with pulldown-cmark.
//!
//! Each top-level element becomes one block whose text is the element's own
//! source, so what an agent later reads is the corpus text as written.
//! Text between elements that the parser reports no event for (link
//! reference definitions) is kept as a `metadata` block so nothing is lost.

use std::ops::Range;

use pulldown_cmark::{
    Alignment, BlockQuoteKind, CodeBlockKind, Event, MetadataBlockKind, Options, Parser, Tag, TagEnd,
};
use ucpkit_core::{Align, Content, MathNotation, MediaKind, Role, TextFormat};

use crate::report::WarningKind;
use crate::section::SectionBuilder;

/// The parser options: CommonMark plus GFM tables, task lists, footnotes,
/// strikethrough, alerts, front matter and math.
fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
        | Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS
        | Options::ENABLE_MATH
        | Options::ENABLE_GFM
}

type Spanned<'a> = (Event<'a>, Range<usize>);

/// Parses markdown `text` into `builder`.
pub(crate) fn parse_markdown(text: &str, builder: &mut SectionBuilder) {
    let lines = LineIndex::new(text);
    let mut events = Parser::new_ext(text, options()).into_offset_iter();
    let mut last_end = 0;
    while let Some((event, range)) = events.next() {
        if range.start > last_end {
            push_gap(text, last_end..range.start, &lines, builder);
        }
        match event {
            Event::Start(tag) => {
                let inner = take_until_end(&mut events);
                let range = element_range(&tag, range, &inner);
                last_end = last_end.max(range.end);
                push_element(text, tag, range, &inner, &lines, builder);
            }
            Event::Rule => {
                last_end = last_end.max(range.end);
                builder.push(raw(text, &range), Role::Metadata, lines.span(&range));
            }
            _ => {
                last_end = last_end.max(range.end);
                builder.push(raw(text, &range), Role::Paragraph, lines.span(&range));
            }
        }
    }
    if last_end < text.len() {
        push_gap(text, last_end..text.len(), &lines, builder);
    }
}

/// The source range of an element. Containers end with their last inner
/// event: pulldown-cmark stretches a list that ends a file over the link
/// reference definitions after it, which belong to no element.
fn element_range(tag: &Tag<'_>, range: Range<usize>, inner: &[Spanned<'_>]) -> Range<usize> {
    match tag {
        Tag::List(_) | Tag::BlockQuote(_) | Tag::FootnoteDefinition(_) => {
            let end = inner.iter().map(|(_, r)| r.end).max().unwrap_or(range.end);
            range.start..end.clamp(range.start, range.end)
        }
        _ => range,
    }
}

/// Collects the events inside an element, up to its matching end.
fn take_until_end<'a>(events: &mut impl Iterator<Item = Spanned<'a>>) -> Vec<Spanned<'a>> {
    let mut depth = 1usize;
    let mut inner = Vec::new();
    for (event, range) in events {
        match &event {
            Event::Start(_) => depth += 1,
            Event::End(_) => {
                depth -= 1;
                if depth == 0 {
                    break;
                }
            }
            _ => {}
        }
        inner.push((event, range));
    }
    inner
}

fn push_gap(text: &str, range: Range<usize>, lines: &LineIndex, builder: &mut SectionBuilder) {
    let gap = &text[range.clone()];
    if !gap.trim().is_empty() {
        let start = range.start + (gap.len() - gap.trim_start().len());
        let end = range.start + gap.trim_end().len();
        builder.push(Content::markdown(gap.trim()), Role::Metadata, lines.span(&(start..end)));
    }
}

fn push_element(
    text: &str,
    tag: Tag<'_>,
    range: Range<usize>,
    inner: &[Spanned<'_>],
    lines: &LineIndex,
    builder: &mut SectionBuilder,
) {
    let trimmed = range.start..range.start + text[range.clone()].trim_end().len();
    let span = lines.span(&trimmed);
    let index = match tag {
        Tag::Heading { level, .. } => {
            let (source, plain) = inline_source(text, inner);
            builder.push_heading(level as u8, Content::markdown(collapse_whitespace(&source)), &plain, span)
        }
        Tag::Paragraph => paragraph(text, &range, inner, span, builder),
        Tag::CodeBlock(kind) => {
            let source: String = inner.iter().filter_map(|(e, _)| as_text(e)).collect();
            let language = match kind {
                CodeBlockKind::Fenced(info) => info.split_whitespace().next().map(str::to_owned),
                CodeBlockKind::Indented => None,
            };
            if language.as_deref() == Some("math") {
                let content = Content::Math { notation: MathNotation::Latex, expression: source.trim().to_owned() };
                builder.push(content, Role::Equation, span)
            } else {
                builder.push(Content::code(language, source), Role::Code, span)
            }
        }
        Tag::List(_) => {
            let index = builder.push(raw(text, &range), Role::List, span);
            let (done, total) = inner.iter().fold((0, 0), |(d, t), (e, _)| match e {
                Event::TaskListMarker(checked) => (d + usize::from(*checked), t + 1),
                _ => (d, t),
            });
            if total > 0 {
                let custom = &mut builder.parsed.blocks[index].block.metadata.custom;
                custom.insert("tasks".into(), serde_json::json!({ "done": done, "total": total }));
            }
            index
        }
        Tag::BlockQuote(kind) => {
            let role = match kind {
                None => Role::Quote,
                Some(BlockQuoteKind::Note) => Role::Note,
                Some(BlockQuoteKind::Tip) => Role::Tip,
                Some(BlockQuoteKind::Important) => Role::Callout,
                Some(BlockQuoteKind::Warning | BlockQuoteKind::Caution) => Role::Warning,
            };
            builder.push(raw(text, &range), role, span)
        }
        Tag::Table(alignments) => builder.push(table(text, inner, &alignments), Role::Table, span),
        Tag::HtmlBlock => {
            let html = text[range.clone()].trim_end().to_owned();
            let role = if html.starts_with("<!--") { Role::Metadata } else { Role::Paragraph };
            builder.push(Content::Text { text: html, format: TextFormat::Html }, role, span)
        }
        Tag::FootnoteDefinition(_) => builder.push(raw(text, &range), Role::Footnote, span),
        Tag::MetadataBlock(kind) if builder.next_index() == 0 && builder.parsed.front_matter.is_none() => {
            let source: String = inner.iter().filter_map(|(e, _)| as_text(e)).collect();
            front_matter(kind, source, builder);
            return;
        }
        _ => builder.push(raw(text, &range), Role::Paragraph, span),
    };
    for (event, _) in inner {
        if let Event::Start(Tag::Link { dest_url, .. }) = event {
            builder.add_link(index, dest_url);
        }
    }
}

fn paragraph(
    text: &str,
    range: &Range<usize>,
    inner: &[Spanned<'_>],
    span: (u32, u32),
    builder: &mut SectionBuilder,
) -> usize {
    if let [(Event::DisplayMath(math), _)] = inner {
        let content = Content::Math { notation: MathNotation::Latex, expression: math.trim().to_owned() };
        return builder.push(content, Role::Equation, span);
    }
    if let (Some((Event::Start(Tag::Image { dest_url, title, .. }), _)), Some((Event::End(TagEnd::Image), _))) =
        (inner.first(), inner.last())
    {
        let nested_images = inner.iter().filter(|(e, _)| matches!(e, Event::Start(Tag::Image { .. }))).count();
        if nested_images == 1 {
            let alt: String = inner.iter().filter_map(|(e, _)| as_text(e)).collect();
            let content = Content::Media {
                kind: MediaKind::Image,
                uri: dest_url.to_string(),
                alt: Some(alt).filter(|a| !a.is_empty()),
                title: Some(title.to_string()).filter(|t| !t.is_empty()),
            };
            return builder.push(content, Role::Image, span);
        }
    }
    builder.push(raw(text, range), Role::Paragraph, span)
}

fn table(text: &str, inner: &[Spanned<'_>], alignments: &[Alignment]) -> Content {
    let mut columns = Vec::new();
    let mut rows: Vec<Vec<String>> = Vec::new();
    let mut in_head = false;
    let mut cell: Option<Range<usize>> = None;
    let mut cell_seen = false;
    for (event, range) in inner {
        match event {
            Event::Start(Tag::TableHead) => in_head = true,
            Event::End(TagEnd::TableHead) => in_head = false,
            Event::Start(Tag::TableRow) => rows.push(Vec::new()),
            Event::Start(Tag::TableCell) => {
                cell = None;
                cell_seen = true;
            }
            Event::End(TagEnd::TableCell) if cell_seen => {
                let value = cell.take().map_or(String::new(), |r| text[r].trim().to_owned());
                match (in_head, rows.last_mut()) {
                    (true, _) | (false, None) => columns.push(value),
                    (false, Some(row)) => row.push(value),
                }
                cell_seen = false;
            }
            _ if cell_seen => {
                cell = Some(match cell.take() {
                    Some(c) => c.start.min(range.start)..c.end.max(range.end),
                    None => range.clone(),
                });
            }
            _ => {}
        }
    }
    let align = alignments
        .iter()
        .map(|a| match a {
            Alignment::None => Align::None,
            Alignment::Left => Align::Left,
            Alignment::Center => Align::Center,
            Alignment::Right => Align::Right,
        })
        .collect::<Vec<_>>();
    let align = if align.iter().all(|a| *a == Align::None) { Vec::new() } else { align };
    Content::Table { columns, rows, align }
}

fn front_matter(kind: MetadataBlockKind, source: String, builder: &mut SectionBuilder) {
    let parsed = match kind {
        MetadataBlockKind::YamlStyle => {
            serde_norway::from_str::<serde_json::Value>(&source).map_err(|e| ("YAML", e.to_string()))
        }
        MetadataBlockKind::PlusesStyle => {
            toml::from_str::<serde_json::Value>(&source).map_err(|e| ("TOML", e.to_string()))
        }
    };
    let value = parsed.unwrap_or_else(|(language, err)| {
        let err = err.lines().next().unwrap_or_default().to_owned();
        builder
            .parsed
            .notes
            .push((WarningKind::FrontMatter, format!("front matter is not valid {language} ({err}); kept as text")));
        serde_json::Value::String(source.clone())
    });
    let delimiter = match kind {
        MetadataBlockKind::YamlStyle => "---",
        MetadataBlockKind::PlusesStyle => "+++",
    };
    if let Some(title) = value.get("title").and_then(|t| t.as_str()) {
        builder.parsed.title = Some(title.to_owned());
    }
    builder.parsed.front_matter = Some((value, format!("{delimiter}\n{}\n{delimiter}", source.trim_end())));
}

/// The source text covering an element's inline events, and its plain text.
fn inline_source(text: &str, inner: &[Spanned<'_>]) -> (String, String) {
    let start = inner.iter().map(|(_, r)| r.start).min();
    let end = inner.iter().map(|(_, r)| r.end).max();
    let source = match (start, end) {
        (Some(s), Some(e)) => text[s..e].to_owned(),
        _ => String::new(),
    };
    let plain = inner
        .iter()
        .filter_map(|(e, _)| match e {
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) => Some(t.as_ref()),
            Event::SoftBreak | Event::HardBreak => Some(" "),
            _ => None,
        })
        .collect();
    (source, plain)
}

fn as_text<'e>(event: &'e Event<'_>) -> Option<&'e str> {
    match event {
        Event::Text(t) | Event::Code(t) => Some(t.as_ref()),
        _ => None,
    }
}

fn raw(text: &str, range: &Range<usize>) -> Content {
    Content::markdown(text[range.clone()].trim_end())
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Byte offset to 1-based line number.
pub(crate) struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes the line starts of `text`.
    pub(crate) fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(memchr_newlines(text.as_bytes()).map(|i| i + 1));
        LineIndex { starts }
    }

    /// The line holding byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> u32 {
        self.starts.partition_point(|s| *s <= offset) as u32
    }

    /// The inclusive line range of a byte range.
    pub(crate) fn span(&self, range: &Range<usize>) -> (u32, u32) {
        let last = range.end.saturating_sub(1).max(range.start);
        (self.line(range.start), self.line(last))
    }
}

fn memchr_newlines(bytes: &[u8]) -> impl Iterator<Item = usize> + '_ {
    bytes.iter().enumerate().filter(|(_, b)| **b == b'\n').map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> crate::section::ParsedFile {
        let mut builder = SectionBuilder::new("".into(), Some("t.md".into()), 0);
        parse_markdown(text, &mut builder);
        builder.finish()
    }

    fn roles(parsed: &crate::section::ParsedFile) -> Vec<String> {
        parsed.blocks.iter().map(|b| b.block.metadata.role.as_ref().unwrap().to_string()).collect()
    }

    #[test]
    fn elements_become_blocks_with_roles() {
        let parsed = parse(
            "# T\n\npara\n\n- [x] a\n- [ ] b\n\n```rust\nfn x() {}\n```\n\n| a | b |\n|:-|-:|\n| 1 | 2 |\n\n> q\n\n![alt](i.png)\n\n$$\nx^2\n$$\n\n---\n\n<!-- c -->\n\n[^1]: note\n\n[ref]: http://x\n",
        );
        assert_eq!(
            roles(&parsed),
            [
                "heading1",
                "paragraph",
                "list",
                "code",
                "table",
                "quote",
                "image",
                "equation",
                "metadata",
                "metadata",
                "footnote",
                "metadata"
            ]
        );
        let b = |i: usize| &parsed.blocks[i].block;
        assert_eq!(b(3).content, Content::code(Some("rust".into()), "fn x() {}\n"));
        assert_eq!(
            b(4).content,
            Content::Table {
                columns: vec!["a".into(), "b".into()],
                rows: vec![vec!["1".into(), "2".into()]],
                align: vec![Align::Left, Align::Right]
            }
        );
        assert_eq!(b(2).metadata.custom["tasks"], serde_json::json!({"done": 1, "total": 2}));
        assert_eq!(b(11).content, Content::markdown("[ref]: http://x"));
        assert!(parsed.blocks[1..].iter().all(|l| l.parent == Some(0)));
        let src = b(3).metadata.source.as_ref().unwrap();
        assert_eq!((src.start_line, src.end_line), (8, 10));
    }

    #[test]
    fn front_matter_is_metadata_not_a_block() {
        let parsed = parse("---\ntitle: Hello\ntags: [a, b]\n---\n\n# Other\n");
        let (value, source) = parsed.front_matter.unwrap();
        assert_eq!(value["tags"], serde_json::json!(["a", "b"]));
        assert_eq!(source, "---\ntitle: Hello\ntags: [a, b]\n---");
        assert_eq!(parsed.title.as_deref(), Some("Hello"));
        assert_eq!(parsed.blocks.len(), 1);
    }

    #[test]
    fn toml_front_matter_is_parsed_and_bad_front_matter_is_kept() {
        let parsed = parse("+++\ntitle = \"Hugo page\"\nweight = 3\n+++\n\nText.\n");
        assert_eq!(parsed.front_matter.unwrap().0, serde_json::json!({"title": "Hugo page", "weight": 3}));
        assert_eq!(parsed.title.as_deref(), Some("Hugo page"));
        let bad = parse("---\nkey: [unclosed\n---\n\nText.\n");
        assert_eq!(bad.front_matter.unwrap().0, serde_json::json!("key: [unclosed\n"));
        assert!(bad.notes[0].1.contains("not valid YAML"), "{:?}", bad.notes);
    }

    #[test]
    fn headings_keep_inline_source_and_links_are_collected() {
        let parsed = parse("## `fs.open(path)` *now*\n\nSee [x](other.md#top) and [y].\n\n[y]: #fs-open\n");
        assert_eq!(parsed.blocks[0].block.content, Content::markdown("`fs.open(path)` *now*"));
        assert_eq!(parsed.anchors[0].0, "fsopenpath-now");
        let dests: Vec<&str> = parsed.links.iter().map(|l| l.dest.as_str()).collect();
        assert_eq!(dests, ["other.md#top", "#fs-open"]);
    }
}
