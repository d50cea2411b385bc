//! Parsing HTML with source line numbers and bounded nesting.
//!
//! scraper's tree keeps no source positions, but html5ever tells its tree
//! sink the current line before each token. [`LineSink`] wraps scraper's
//! sink and records, for every element it creates, the line it started on.
//!
//! html5ever scans its stack of open elements for most start tags, so a page
//! of 100,000 nested `<div>`s costs quadratic time, and every walk over the
//! tree recurses once per level. [`NestingCap`] sits between the tokenizer
//! and the tree builder and drops the start tags (and their end tags) of
//! elements that would open deeper than [`MAX_NESTING`]: their text stays,
//! in the deepest element allowed.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::collections::HashMap;

use ego_tree::NodeId;
use html5ever::buffer_queue::BufferQueue;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::{TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeBuilder, TreeBuilderOpts, TreeSink};
use html5ever::{local_name, Attribute, LocalName, QualName, TokenizerResult};
use scraper::html::HtmlTreeSink;
use scraper::Html;

/// The deepest an element may open; deeper elements are flattened into
/// their ancestor at this depth.
pub(crate) const MAX_NESTING: u32 = 256;

pub(crate) type ElementLines = HashMap<NodeId, u32>;

pub(crate) fn parse_document(text: &str) -> (Html, ElementLines) {
    let inner = HtmlTreeSink::new(Html::new_document());
    let document = inner.get_document();
    let sink = LineSink {
        inner,
        line: Cell::new(1),
        lines: RefCell::new(HashMap::new()),
        depths: RefCell::new(HashMap::from([(document, 0)])),
        current_depth: Cell::new(0),
    };
    let builder = TreeBuilder::new(sink, TreeBuilderOpts::default());
    let tokenizer = Tokenizer::new(NestingCap { builder, dropped: RefCell::default() }, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from(text));
    while let TokenizerResult::Script(_) = tokenizer.feed(&input) {}
    tokenizer.end();
    let Tokenizer { sink, .. } = tokenizer;
    sink.builder.sink.finish()
}

/// Passes tokens to the tree builder, dropping the start tags that would
/// open an element deeper than [`MAX_NESTING`] and as many end tags of
/// the same names.
struct NestingCap {
    builder: TreeBuilder<NodeId, LineSink>,
    /// Start tags dropped and not yet matched by an end tag, by name.
    dropped: RefCell<HashMap<LocalName, u32>>,
}

impl TokenSink for NestingCap {
    type Handle = NodeId;

    fn process_token(&self, token: Token, line_number: u64) -> TokenSinkResult<NodeId> {
        if let Token::TagToken(tag) = &token {
            let mut dropped = self.dropped.borrow_mut();
            match tag.kind {
                TagKind::StartTag if self.builder.sink.current_depth.get() >= MAX_NESTING && nests(&tag.name) => {
                    *dropped.entry(tag.name.clone()).or_default() += 1;
                    return TokenSinkResult::Continue;
                }
                TagKind::EndTag => {
                    if let Some(open) = dropped.get_mut(&tag.name).filter(|open| **open > 0) {
                        *open -= 1;
                        return TokenSinkResult::Continue;
                    }
                }
                TagKind::StartTag => {}
            }
        }
        self.builder.process_token(token, line_number)
    }

    fn end(&self) {
        self.builder.end();
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.builder.adjusted_current_node_present_but_not_in_html_namespace()
    }
}

/// Whether an element's start tag opens a level that may be dropped: not
/// void elements (they hold nothing) and not raw-text ones (their end tag
/// switches the tokenizer back, so they must reach the tree builder).
fn nests(name: &LocalName) -> bool {
    !matches!(
        *name,
        local_name!("area")
            | local_name!("base")
            | local_name!("br")
            | local_name!("col")
            | local_name!("embed")
            | local_name!("hr")
            | local_name!("img")
            | local_name!("input")
            | local_name!("link")
            | local_name!("meta")
            | local_name!("param")
            | local_name!("source")
            | local_name!("track")
            | local_name!("wbr")
            | local_name!("script")
            | local_name!("style")
            | local_name!("textarea")
            | local_name!("title")
            | local_name!("xmp")
            | local_name!("iframe")
            | local_name!("noembed")
            | local_name!("noframes")
            | local_name!("noscript")
            | local_name!("plaintext")
    )
}

/// scraper's sink, recording element lines and tree depths.
struct LineSink {
    inner: HtmlTreeSink,
    line: Cell<u64>,
    lines: RefCell<ElementLines>,
    /// Depth of every node in the tree (the document is 0).
    depths: RefCell<HashMap<NodeId, u32>>,
    /// Depth of the element the next node goes into, as far as the sink
    /// can tell (appends and pops; a void element counts one level too
    /// many until the next append).
    current_depth: Cell<u32>,
}

impl LineSink {
    fn depth(&self, node: &NodeId) -> u32 {
        self.depths.borrow().get(node).copied().unwrap_or_else(|| self.current_depth.get())
    }

    /// Records that `child` went in at `depth`.
    fn placed(&self, child: &NodeOrText<NodeId>, depth: u32) {
        match child {
            NodeOrText::AppendNode(node) => {
                self.depths.borrow_mut().insert(*node, depth);
                let element = self.inner.0.borrow().tree.get(*node).is_some_and(|n| n.value().is_element());
                self.current_depth.set(if element { depth } else { depth.saturating_sub(1) });
            }
            NodeOrText::AppendText(_) => self.current_depth.set(depth.saturating_sub(1)),
        }
    }
}

impl TreeSink for LineSink {
    type Output = (Html, ElementLines);
    type Handle = NodeId;
    type ElemName<'a> = Ref<'a, QualName>;

    fn finish(self) -> Self::Output {
        (self.inner.finish(), self.lines.into_inner())
    }

    fn set_current_line(&self, line: u64) {
        self.line.set(line);
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> NodeId {
        let id = self.inner.create_element(name, attrs, flags);
        let line = u32::try_from(self.line.get()).unwrap_or(u32::MAX);
        self.lines.borrow_mut().insert(id, line);
        id
    }

    fn parse_error(&self, msg: Cow<'static, str>) {
        self.inner.parse_error(msg);
    }

    fn get_document(&self) -> NodeId {
        self.inner.get_document()
    }

    fn elem_name<'a>(&'a self, target: &'a NodeId) -> Ref<'a, QualName> {
        self.inner.elem_name(target)
    }

    fn create_comment(&self, text: StrTendril) -> NodeId {
        self.inner.create_comment(text)
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> NodeId {
        self.inner.create_pi(target, data)
    }

    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        self.placed(&child, self.depth(parent) + 1);
        self.inner.append(parent, child);
    }

    fn append_based_on_parent_node(&self, element: &NodeId, prev_element: &NodeId, child: NodeOrText<NodeId>) {
        self.placed(&child, self.depth(element));
        self.inner.append_based_on_parent_node(element, prev_element, child);
    }

    fn pop(&self, node: &NodeId) {
        self.current_depth.set(self.depth(node).saturating_sub(1));
        self.inner.pop(node);
    }

    fn append_doctype_to_document(&self, name: StrTendril, public_id: StrTendril, system_id: StrTendril) {
        self.inner.append_doctype_to_document(name, public_id, system_id);
    }

    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        self.inner.get_template_contents(target)
    }

    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        self.inner.same_node(x, y)
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.inner.set_quirks_mode(mode);
    }

    fn append_before_sibling(&self, sibling: &NodeId, new_node: NodeOrText<NodeId>) {
        self.placed(&new_node, self.depth(sibling));
        self.inner.append_before_sibling(sibling, new_node);
    }

    fn add_attrs_if_missing(&self, target: &NodeId, attrs: Vec<Attribute>) {
        self.inner.add_attrs_if_missing(target, attrs);
    }

    fn remove_from_parent(&self, target: &NodeId) {
        self.inner.remove_from_parent(target);
    }

    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        self.inner.reparent_children(node, new_parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scraper::Selector;

    #[test]
    fn elements_know_their_start_lines() {
        let (html, lines) = parse_document("<html>\n<body>\n<h1>Title</h1>\n\n<p>one\ntwo</p>\n</body></html>");
        let line_of = |css: &str| {
            let element = html.select(&Selector::parse(css).unwrap()).next().unwrap();
            lines[&element.id()]
        };
        assert_eq!(line_of("h1"), 3);
        assert_eq!(line_of("p"), 5);
    }
}
