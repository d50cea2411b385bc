//! HTML into blocks, with scraper (html5ever).
//!
//! The same structure as markdown: h1..h6 open sections; p, pre, ul/ol,
//! table, blockquote and img become blocks; navigation, scripts, styles and
//! other page furniture are dropped. A block's text is the page's visible
//! text: inline elements add no characters and lose none, `<br>` is a line
//! break, and lists are their items' text, one item per line.

use ego_tree::NodeRef;
use scraper::{ElementRef, Node, Selector};
use ucpkit_core::{Content, MediaKind, Role};

use crate::html_lines::{self, ElementLines};
use crate::section::SectionBuilder;

/// Element names that never carry content.
const DROPPED_ELEMENTS: &[&str] = &[
    "script", "style", "nav", "noscript", "template", "svg", "iframe", "form", "button", "select", "input", "header",
    "footer", "head", "link", "meta",
];

/// `class`/`id` tokens of navigation and page furniture.
const BOILERPLATE_MARKERS: &[&str] = &[
    "nav",
    "navbar",
    "navheader",
    "navfooter",
    "navigation",
    "sphinxsidebar",
    "menu",
    "breadcrumb",
    "breadcrumbs",
    "footer",
    "related",
    "headerlink",
    "toc",
    "skip-link",
    "cookie-banner",
];

/// Elements that browsers lay out as blocks by default.
const BLOCK_ELEMENTS: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "caption",
    "center",
    "colgroup",
    "dd",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hgroup",
    "hr",
    "html",
    "legend",
    "li",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "optgroup",
    "option",
    "p",
    "plaintext",
    "pre",
    "search",
    "section",
    "summary",
    "table",
    "tbody",
    "td",
    "tfoot",
    "th",
    "thead",
    "tr",
    "ul",
    "xmp",
];

/// Element names and `class`/`id` tokens that are page furniture only when
/// most of their text is link text (a sidebar of links, not a prose aside).
const LINK_LIST_MARKERS: &[&str] = &["aside", "sidebar"];

/// `role` attribute values of page furniture.
const BOILERPLATE_ROLES: &[&str] = &["navigation", "banner", "contentinfo", "search", "menu"];

/// Parses HTML `text` into `builder`.
pub(crate) fn parse_html(text: &str, builder: &mut SectionBuilder) {
    let (html, lines) = html_lines::parse_document(text);
    let root = ["main", "article", "[role=main]", "body"]
        .iter()
        .filter_map(|s| Selector::parse(s).ok())
        .find_map(|s| html.select(&s).next())
        .unwrap_or_else(|| html.root_element());
    let mut page = Page { builder, lines: &lines, loose: Loose::default(), pending_anchors: Vec::new() };
    page.walk(root);
    page.flush();
    if builder.parsed.title.is_none() {
        let title = Selector::parse("title").ok().and_then(|s| html.select(&s).next());
        builder.parsed.title = title.map(|t| collapse(&t.text().collect::<String>())).filter(|t| !t.is_empty());
    }
}

/// Inline text and links met directly inside container elements.
#[derive(Default)]
struct Loose {
    text: String,
    links: Vec<String>,
    /// Line of the element the text was found in.
    line: u32,
}

impl Loose {
    fn push_text(&mut self, text: &str, line: u32) {
        if self.text.trim().is_empty() {
            self.line = line;
        }
        self.text.push_str(text);
    }

    /// Turns the gathered text into a paragraph, if there is any.
    fn flush(&mut self, builder: &mut SectionBuilder) -> Option<usize> {
        let text = collapse(&self.text);
        let index = (!text.is_empty()).then(|| {
            let end = self.line + self.text.trim().matches('\n').count() as u32;
            let index = builder.push(Content::plain(text), Role::Paragraph, (self.line, end));
            for link in &self.links {
                builder.add_link(index, link);
            }
            index
        });
        self.text.clear();
        self.links.clear();
        index
    }
}

/// The walk over one page: blocks go to `builder`, element start lines come
/// from `lines`.
struct Page<'a, 'b> {
    builder: &'b mut SectionBuilder,
    lines: &'a ElementLines,
    loose: Loose,
    /// Ids met on inline elements (Sphinx's `<span id>` before a heading),
    /// given to the next block made.
    pending_anchors: Vec<String>,
}

impl Page<'_, '_> {
    fn walk(&mut self, element: ElementRef<'_>) {
        let line = self.line(element);
        for child in element.children() {
            match child.value() {
                Node::Text(text) => self.loose.push_text(text, line),
                Node::Element(_) => {
                    let Some(child) = ElementRef::wrap(child) else { continue };
                    if !is_boilerplate(child) {
                        self.element_block(child);
                    }
                }
                _ => {}
            }
        }
    }

    /// Flushes loose text into a paragraph, which takes the pending anchors.
    fn flush(&mut self) {
        if let Some(index) = self.loose.flush(self.builder) {
            self.anchor_pending(index);
        }
    }

    fn anchor_pending(&mut self, block: usize) {
        for anchor in self.pending_anchors.drain(..) {
            self.builder.add_anchor(&anchor, block);
        }
    }

    /// The line an element starts on (0 when unknown).
    fn line(&self, element: ElementRef<'_>) -> u32 {
        self.lines.get(&element.id()).copied().unwrap_or(0)
    }

    /// The inclusive line range of an element: from its start to its last
    /// descendant element or its last newline, whichever is later.
    fn span(&self, element: ElementRef<'_>) -> (u32, u32) {
        let start = self.line(element);
        let last_child = element.descendants().filter_map(|n| self.lines.get(&n.id())).copied().max().unwrap_or(start);
        let text: String = element.text().collect();
        let by_text = start + text.trim_end().matches('\n').count() as u32;
        (start, last_child.max(by_text))
    }

    fn element_block(&mut self, element: ElementRef<'_>) {
        let name = element.value().name();
        let first_block = self.builder.next_index();
        let block = match name {
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.flush();
                let level = name.as_bytes()[1] - b'0';
                let text = inline_text(element);
                let index = self.builder.push_heading(level, Content::plain(text.clone()), &text, self.span(element));
                if let Some(anchor) = opened_section_id(element) {
                    self.builder.add_anchor(&anchor, index);
                }
                index
            }
            "p" => {
                self.flush();
                let text = inline_text(element);
                if text.is_empty() {
                    return;
                }
                self.builder.push(Content::plain(text), Role::Paragraph, self.span(element))
            }
            "pre" => {
                self.flush();
                let source: String = element.text().collect();
                self.builder.push(Content::code(code_language(element), source), Role::Code, self.span(element))
            }
            "ul" | "ol" => {
                self.flush();
                let mut text = String::new();
                render_list(element, 0, &mut text);
                self.builder.push(Content::plain(text), Role::List, self.span(element))
            }
            "table" => {
                self.flush();
                self.builder.push(table(element), Role::Table, self.span(element))
            }
            "blockquote" if !holds_blocks(element) => {
                self.flush();
                self.builder.push(Content::plain(inline_text(element)), Role::Quote, self.span(element))
            }
            "img" => {
                self.flush();
                let attr = |k: &str| element.value().attr(k).map(str::to_owned);
                let content = Content::Media {
                    kind: MediaKind::Image,
                    uri: attr("src").unwrap_or_default(),
                    alt: attr("alt").filter(|a| !a.is_empty()),
                    title: attr("title"),
                };
                self.builder.push(content, Role::Image, self.span(element))
            }
            "br" => {
                self.loose.text.push('\n');
                return;
            }
            _ if is_inline(name) => {
                let mut text = String::new();
                push_inline(*element, &mut text);
                self.loose.push_text(&text, self.line(element));
                self.loose.links.extend(links(element));
                self.pending_anchors.extend(element_ids(element));
                return;
            }
            _ => {
                self.flush();
                self.walk(element);
                self.flush();
                // A container's id (a `<div id>`, a `<dt id>`) leads to the
                // first block made inside it.
                if self.builder.next_index() > first_block {
                    if let Some(id) = element.value().attr("id") {
                        self.builder.add_anchor(id, first_block);
                    }
                }
                return;
            }
        };
        self.anchor_pending(block);
        for anchor in element_ids(element) {
            self.builder.add_anchor(&anchor, block);
        }
        for link in links(element) {
            self.builder.add_link(block, &link);
        }
    }
}

/// Whether an element holds structure that is blocks of its own (a code
/// block, a list, a definition list, a table, a heading, a section): such
/// a blockquote is walked like any container, not flattened to one quote.
fn holds_blocks(element: ElementRef<'_>) -> bool {
    element.descendants().skip(1).filter_map(|node| node.value().as_element()).any(|el| {
        matches!(
            el.name(),
            "pre" | "ul" | "ol" | "dl" | "table" | "h1" | "h2" | "h3" | "h4" | "h5" | "h6" | "section" | "blockquote"
        )
    })
}

/// Ids (and `<a name>`s) of an element and everything inside it.
fn element_ids(element: ElementRef<'_>) -> Vec<String> {
    element
        .descendants()
        .filter_map(|node| node.value().as_element())
        .filter_map(|el| el.attr("id").or(el.attr("name")))
        .map(str::to_owned)
        .collect()
}

/// Whether an element flows inside text. Browsers lay out every element
/// that HTML does not define as a block (`acronym`, `span`, custom
/// elements ...) inline, so this is the complement of the block set.
fn is_inline(name: &str) -> bool {
    !BLOCK_ELEMENTS.contains(&name)
}

fn is_boilerplate(element: ElementRef<'_>) -> bool {
    let el = element.value();
    if DROPPED_ELEMENTS.contains(&el.name()) {
        return true;
    }
    if el.attr("role").is_some_and(|r| BOILERPLATE_ROLES.contains(&r)) || el.attr("hidden").is_some() {
        return true;
    }
    let marked = |markers: &[&str]| {
        [el.attr("class"), el.attr("id")]
            .into_iter()
            .flatten()
            .flat_map(str::split_whitespace)
            .any(|token| markers.contains(&token.to_ascii_lowercase().as_str()))
    };
    if marked(BOILERPLATE_MARKERS) {
        return true;
    }
    (LINK_LIST_MARKERS.contains(&el.name()) || marked(LINK_LIST_MARKERS)) && mostly_links(element)
}

/// Whether at least half of an element's visible text sits inside links.
fn mostly_links(element: ElementRef<'_>) -> bool {
    let length = |e: ElementRef<'_>| e.text().map(|t| t.trim().chars().count()).sum::<usize>();
    let total = length(element);
    let linked: usize =
        element.descendants().filter_map(ElementRef::wrap).filter(|e| e.value().name() == "a").map(length).sum();
    linked * 2 >= total
}

/// The visible text of an element, whitespace collapsed.
fn inline_text(element: ElementRef<'_>) -> String {
    let mut out = String::new();
    push_inline(*element, &mut out);
    collapse(&out)
}

/// Appends the visible text under `node` as it is: inline elements add
/// nothing, `<br>` and block elements inside are line breaks.
fn push_inline(node: NodeRef<'_, Node>, out: &mut String) {
    for child in node.children() {
        push_node(child, out);
    }
}

/// Appends the visible text of one node (see [`push_inline`]).
fn push_node(node: NodeRef<'_, Node>, out: &mut String) {
    match node.value() {
        Node::Text(text) => out.push_str(text),
        Node::Element(el) => {
            let Some(element) = ElementRef::wrap(node) else { return };
            if is_boilerplate(element) {
                return;
            }
            match el.name() {
                "br" => out.push('\n'),
                "img" => {}
                name if is_inline(name) => push_inline(node, out),
                _ => {
                    out.push('\n');
                    push_inline(node, out);
                    out.push('\n');
                }
            }
        }
        _ => {}
    }
}

/// A list as its items' text, one line per item (and per run of an item's
/// text around a nested list), nested items indented, in document order.
fn render_list(list: ElementRef<'_>, indent: usize, out: &mut String) {
    let line = |text: &mut String, out: &mut String| {
        let text = collapse(&std::mem::take(text));
        if !text.is_empty() {
            if !out.is_empty() {
                out.push('\n');
            }
            out.push_str(&" ".repeat(indent));
            out.push_str(&text);
        }
    };
    let items = list.children().filter_map(ElementRef::wrap).filter(|e| e.value().name() == "li");
    for item in items {
        let mut text = String::new();
        for child in item.children() {
            match ElementRef::wrap(child) {
                Some(e) if matches!(e.value().name(), "ul" | "ol") => {
                    line(&mut text, out);
                    render_list(e, indent + 2, out);
                }
                _ => push_node(child, &mut text),
            }
        }
        line(&mut text, out);
    }
}

fn table(element: ElementRef<'_>) -> Content {
    let row_selector = Selector::parse("tr").expect("valid selector");
    let mut columns = Vec::new();
    let mut rows = Vec::new();
    for row in element.select(&row_selector) {
        let cells: Vec<ElementRef<'_>> =
            row.children().filter_map(ElementRef::wrap).filter(|c| matches!(c.value().name(), "td" | "th")).collect();
        let header = cells.iter().all(|c| c.value().name() == "th");
        let values: Vec<String> = cells.into_iter().map(inline_text).collect();
        if columns.is_empty() && rows.is_empty() && header {
            columns = values;
        } else {
            rows.push(values);
        }
    }
    if columns.is_empty() && !rows.is_empty() {
        columns = rows.remove(0);
    }
    Content::Table { columns, rows, align: Vec::new() }
}

/// `language-x`, `lang-x` or `highlight-x` on the pre, its code child or
/// the wrapping element.
fn code_language(pre: ElementRef<'_>) -> Option<String> {
    let mut candidates = vec![pre.value().attr("class")];
    let code = pre.children().filter_map(ElementRef::wrap).find(|c| c.value().name() == "code");
    candidates.push(code.and_then(|c| c.value().attr("class")));
    let parent = pre.parent().and_then(ElementRef::wrap);
    candidates.push(parent.and_then(|p| p.value().attr("class")));
    candidates.into_iter().flatten().flat_map(str::split_whitespace).find_map(|token| {
        ["language-", "lang-", "highlight-"]
            .iter()
            .find_map(|prefix| token.strip_prefix(prefix))
            .filter(|lang| !lang.is_empty() && *lang != "default")
            .map(str::to_owned)
    })
}

/// The id of the section a heading opens (its parent, when the heading is
/// the parent's first element).
fn opened_section_id(heading: ElementRef<'_>) -> Option<String> {
    let parent = heading.parent().and_then(ElementRef::wrap)?;
    let first = parent.children().filter_map(ElementRef::wrap).next()?;
    (first == heading).then(|| parent.value().attr("id").map(str::to_owned)).flatten()
}

fn links(element: ElementRef<'_>) -> Vec<String> {
    let selector = Selector::parse("a[href]").expect("valid selector");
    let own = element.value().attr("href").filter(|_| element.value().name() == "a");
    let nested = element.select(&selector).filter(|a| !is_boilerplate(*a)).filter_map(|a| a.value().attr("href"));
    own.into_iter().chain(nested).map(str::to_owned).collect()
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_structure_and_drops_furniture() {
        let page = r##"<html><head><title>T</title><style>x{}</style></head><body>
            <div class="navheader"><a href="prev.html">Prev</a></div>
            <nav>menu</nav>
            <section id="intro"><h1>Intro <a class="headerlink" href="#intro">¶</a></h1>
            <p>Use <code>fs.open</code> <a href="b.html#x">here</a>.</p>
            <div class="highlight-python"><pre>print(1)</pre></div>
            <ul><li>one<ul><li>two</li></ul></li><li>three</li></ul>
            <table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>
            <span id="old-more"></span><h2 id="more">More</h2><blockquote>quoted</blockquote><img src="a.png" alt="A">
            loose text</section><script>evil()</script></body></html>"##;
        let mut builder = SectionBuilder::new("".into(), None, 0);
        parse_html(page, &mut builder);
        let parsed = builder.finish();
        let summary: Vec<(String, String)> = parsed
            .blocks
            .iter()
            .map(|b| (b.block.metadata.role.as_ref().unwrap().to_string(), b.block.to_markdown()))
            .collect();
        let expected = [
            ("heading1", "# Intro"),
            ("paragraph", "Use fs.open here."),
            ("code", "```python\nprint(1)\n```"),
            ("list", "one\n  two\nthree"),
            ("table", "| k | v |\n| --- | --- |\n| a | 1 |"),
            ("heading2", "## More"),
            ("quote", "quoted"),
            ("image", "![A](a.png)"),
            ("paragraph", "loose text"),
        ];
        let expected: Vec<(String, String)> = expected.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(summary, expected);
        assert_eq!(parsed.links.iter().map(|l| l.dest.as_str()).collect::<Vec<_>>(), ["b.html#x"]);
        assert!(parsed.anchors.iter().any(|(a, i)| a == "intro" && *i == 0));
        assert!(parsed.anchors.iter().any(|(a, i)| a == "more" && *i == 5));
        assert!(parsed.anchors.iter().any(|(a, i)| a == "old-more" && *i == 5), "{:?}", parsed.anchors);
        assert_eq!(parsed.blocks[5].parent, Some(0));
        assert_eq!(parsed.title.as_deref(), Some("Intro"));
    }
}
