//! Markdown rendering of single blocks (used by export and token counts).

use std::fmt::Write as _;

use crate::block::Block;
use crate::content::{Align, Content};

/// Renders one block as markdown, without its children.
pub fn block_markdown(block: &Block) -> String {
    match &block.content {
        Content::Text { text, .. } => match block.heading_level() {
            Some(level) => format!("{} {}", "#".repeat(level as usize), text),
            None => text.clone(),
        },
        Content::Code { language, source } => fenced(language.as_deref().unwrap_or(""), source),
        Content::Table { columns, rows, align } => table(columns, rows, align),
        Content::Math { expression, .. } => format!("$$\n{}\n$$", expression.trim()),
        Content::Media { alt, uri, title, .. } => {
            let alt = alt.as_deref().unwrap_or("");
            match title {
                Some(title) => format!("![{alt}]({uri} \"{}\")", title.replace('"', "\\\"")),
                None => format!("![{alt}]({uri})"),
            }
        }
        Content::Json { value } => fenced("json", &serde_json::to_string_pretty(value).unwrap_or_default()),
        Content::Binary { mime, data } => format!("<!-- binary {mime}, {} bytes -->", data.len()),
        Content::Composite => String::new(),
    }
}

/// A fenced code block whose fence is longer than any backtick run inside.
fn fenced(info: &str, source: &str) -> String {
    let longest = source.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    let body = source.strip_suffix('\n').unwrap_or(source);
    format!("{fence}{info}\n{body}\n{fence}")
}

fn table(columns: &[String], rows: &[Vec<String>], align: &[Align]) -> String {
    let width = rows.iter().map(Vec::len).chain([columns.len()]).max().unwrap_or(0);
    let mut out = String::new();
    let mut row = |cells: &[String]| {
        out.push('|');
        for i in 0..width {
            let _ = write!(out, " {} |", cells.get(i).map_or("", String::as_str));
        }
        out.push('\n');
    };
    row(columns);
    let separators: Vec<String> = (0..width)
        .map(|i| match align.get(i).copied().unwrap_or_default() {
            Align::None => "---",
            Align::Left => ":---",
            Align::Center => ":---:",
            Align::Right => "---:",
        })
        .map(str::to_owned)
        .collect();
    row(&separators);
    for cells in rows {
        row(cells);
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::id::BlockId;
    use crate::metadata::{Metadata, Role};

    fn block(content: Content, role: Role) -> Block {
        Block::new(BlockId::ROOT, content, Metadata::with_role(role))
    }

    #[test]
    fn headings_get_hashes() {
        assert_eq!(block(Content::markdown("Intro"), Role::Heading3).to_markdown(), "### Intro");
    }

    #[test]
    fn fences_outgrow_backticks_inside() {
        let code = block(Content::code(Some("md".into()), "```\nx\n```\n"), Role::Code);
        assert_eq!(code.to_markdown(), "````md\n```\nx\n```\n````");
    }

    #[test]
    fn tables_pad_short_rows_and_keep_alignment() {
        let t = Content::Table {
            columns: vec!["a".into(), "b".into()],
            rows: vec![vec!["1".into()]],
            align: vec![Align::Left, Align::Right],
        };
        assert_eq!(block(t, Role::Table).to_markdown(), "| a | b |\n| :--- | ---: |\n| 1 |  |");
    }
}
