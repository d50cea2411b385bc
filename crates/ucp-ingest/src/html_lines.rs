//! Parsing HTML with source line numbers.
//!
//! scraper's tree keeps no source positions, but html5ever tells its tree
//! sink the current line before each token. [`LineSink`] wraps scraper's
//! sink and records, for every element it creates, the line it started on.

use std::borrow::Cow;
use std::cell::{Cell, Ref, RefCell};
use std::collections::HashMap;

use ego_tree::NodeId;
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{Attribute, QualName};
use scraper::html::HtmlTreeSink;
use scraper::Html;

/// The first source line (1-based) of each element.
pub(crate) type ElementLines = HashMap<NodeId, u32>;

/// Parses a whole HTML document, recording element start lines.
pub(crate) fn parse_document(text: &str) -> (Html, ElementLines) {
    let sink = LineSink {
        inner: HtmlTreeSink::new(Html::new_document()),
        line: Cell::new(1),
        lines: RefCell::new(HashMap::new()),
    };
    html5ever::driver::parse_document(sink, Default::default()).one(text)
}

struct LineSink {
    inner: HtmlTreeSink,
    line: Cell<u64>,
    lines: RefCell<ElementLines>,
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
        self.inner.append(parent, child);
    }

    fn append_based_on_parent_node(&self, element: &NodeId, prev_element: &NodeId, child: NodeOrText<NodeId>) {
        self.inner.append_based_on_parent_node(element, prev_element, child);
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
