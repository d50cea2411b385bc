//! WHERE conditions evaluated against blocks.
//!
//! A condition is compiled once per command into a [`Matcher`]: regexes
//! built, right-hand values turned into JSON, `@block` references resolved
//! to ids. AND/OR are n-ary, so a chain of a million terms is one loop;
//! recursion follows only parentheses and NOT, and [`Matcher::new`] refuses
//! a tree deeper than [`ucpkit_ucl::MAX_NESTING`] before recursing into it.

use regex::Regex;
use serde_json::Value as Json;
use ucpkit_core::{Block, BlockId};
use ucpkit_ucl::{BlockRef, Check, CompareOp, Condition, Path, Value};

use crate::access::read;
use crate::EngineError;

/// A condition compiled to test many blocks.
pub(crate) struct Matcher<'c> {
    root: Node<'c>,
}

/// One compiled node of a condition.
enum Node<'c> {
    All(Vec<Node<'c>>),
    Any(Vec<Node<'c>>),
    Not(Box<Node<'c>>),
    Truthy(&'c Path),
    Check(&'c Path, Check),
    Compare(&'c Path, CompareOp, Json),
    Matches(&'c Path, Regex),
}

impl<'c> Matcher<'c> {
    /// Compiles the condition, resolving `@block` values with `resolve`;
    /// an invalid pattern, an unknown block or a tree deeper than
    /// [`ucpkit_ucl::MAX_NESTING`] is an error before any block is looked at.
    pub(crate) fn new(
        condition: &'c Condition,
        resolve: &dyn Fn(&BlockRef) -> Result<BlockId, EngineError>,
    ) -> Result<Self, EngineError> {
        if condition.depth() > ucpkit_ucl::MAX_NESTING {
            return Err(EngineError::InvalidValue(format!(
                "the WHERE condition is nested deeper than {} levels",
                ucpkit_ucl::MAX_NESTING
            )));
        }
        Ok(Matcher { root: compile(condition, resolve)? })
    }

    /// Whether `block` satisfies the condition.
    pub(crate) fn matches(&self, block: &Block) -> Result<bool, EngineError> {
        eval(&self.root, block)
    }
}

fn compile<'c>(
    condition: &'c Condition,
    resolve: &dyn Fn(&BlockRef) -> Result<BlockId, EngineError>,
) -> Result<Node<'c>, EngineError> {
    let all = |terms: &'c [Condition]| terms.iter().map(|t| compile(t, resolve)).collect::<Result<Vec<_>, _>>();
    Ok(match condition {
        Condition::And(terms) => Node::All(all(terms)?),
        Condition::Or(terms) => Node::Any(all(terms)?),
        Condition::Not(inner) => Node::Not(Box::new(compile(inner, resolve)?)),
        Condition::Truthy(path) => Node::Truthy(path),
        Condition::Check { path, check } => Node::Check(path, *check),
        Condition::Compare { path, op: CompareOp::Matches, value: Value::String(pattern) } => {
            let regex = Regex::new(pattern)
                .map_err(|e| EngineError::InvalidRegex { pattern: pattern.clone(), reason: e.to_string() })?;
            Node::Matches(path, regex)
        }
        Condition::Compare { op: CompareOp::Matches, value, .. } => {
            return Err(EngineError::InvalidValue(format!("MATCHES needs a pattern string, not {value}")));
        }
        Condition::Compare { path, op, value } => Node::Compare(path, *op, resolved_json(value, resolve)?),
    })
}

/// A value as JSON with every `@block` replaced by the id it names.
pub(crate) fn resolved_json(
    value: &Value,
    resolve: &dyn Fn(&BlockRef) -> Result<BlockId, EngineError>,
) -> Result<Json, EngineError> {
    Ok(match value {
        Value::Ref(reference) => Json::String(resolve(reference)?.to_string()),
        Value::Array(items) => Json::Array(items.iter().map(|v| resolved_json(v, resolve)).collect::<Result<_, _>>()?),
        Value::Object(entries) => Json::Object(
            entries
                .iter()
                .map(|(k, v)| Ok::<_, EngineError>((k.clone(), resolved_json(v, resolve)?)))
                .collect::<Result<_, _>>()?,
        ),
        other => other.to_json(),
    })
}

fn eval(node: &Node<'_>, block: &Block) -> Result<bool, EngineError> {
    Ok(match node {
        Node::All(terms) => {
            for term in terms {
                if !eval(term, block)? {
                    return Ok(false);
                }
            }
            true
        }
        Node::Any(terms) => {
            for term in terms {
                if eval(term, block)? {
                    return Ok(true);
                }
            }
            false
        }
        Node::Not(inner) => !eval(inner, block)?,
        Node::Truthy(path) => read(block, path)?.is_some_and(|v| truthy(&v)),
        Node::Check(path, check) => {
            let value = read(block, path)?;
            match check {
                Check::Exists => value.is_some(),
                Check::IsNull => value.is_none_or(|v| v.is_null()),
                Check::IsNotNull => value.is_some_and(|v| !v.is_null()),
                Check::IsEmpty => value.is_none_or(|v| is_empty(&v)),
            }
        }
        Node::Matches(path, regex) => matches!(read(block, path)?, Some(Json::String(s)) if regex.is_match(&s)),
        Node::Compare(path, op, right) => {
            let Some(left) = read(block, path)? else { return Ok(*op == CompareOp::Ne) };
            compare(&left, *op, right)
        }
    })
}

fn compare(left: &Json, op: CompareOp, right: &Json) -> bool {
    match op {
        CompareOp::Eq => equal(left, right),
        CompareOp::Ne => !equal(left, right),
        CompareOp::Gt => order(left, right).is_some_and(|o| o.is_gt()),
        CompareOp::Ge => order(left, right).is_some_and(|o| o.is_ge()),
        CompareOp::Lt => order(left, right).is_some_and(|o| o.is_lt()),
        CompareOp::Le => order(left, right).is_some_and(|o| o.is_le()),
        CompareOp::Contains => match (left, right) {
            (Json::String(s), Json::String(t)) => s.contains(t.as_str()),
            (Json::Array(items), needle) => items.iter().any(|i| equal(i, needle)),
            (Json::Object(map), Json::String(key)) => map.contains_key(key),
            _ => false,
        },
        CompareOp::StartsWith => {
            matches!((left, right), (Json::String(s), Json::String(t)) if s.starts_with(t.as_str()))
        }
        CompareOp::EndsWith => matches!((left, right), (Json::String(s), Json::String(t)) if s.ends_with(t.as_str())),
        // Compiled to `Node::Matches`.
        CompareOp::Matches => false,
    }
}

fn truthy(value: &Json) -> bool {
    match value {
        Json::Null => false,
        Json::Bool(b) => *b,
        Json::Number(n) => n.as_f64() != Some(0.0),
        _ => !is_empty(value),
    }
}

fn is_empty(value: &Json) -> bool {
    match value {
        Json::Null => true,
        Json::String(s) => s.is_empty(),
        Json::Array(items) => items.is_empty(),
        Json::Object(map) => map.is_empty(),
        _ => false,
    }
}

/// Equality with numbers compared by value (`1 = 1.0`).
fn equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

fn order(a: &Json, b: &Json) -> Option<std::cmp::Ordering> {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => x.as_f64()?.partial_cmp(&y.as_f64()?),
        (Json::String(x), Json::String(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ucpkit_core::{BlockId, Content, Metadata, Role};

    fn condition(text: &str) -> Condition {
        match ucpkit_ucl::parse_commands(&format!("DELETE WHERE {text}")).unwrap().remove(0) {
            ucpkit_ucl::Command::Delete(d) => d.condition.unwrap(),
            _ => unreachable!(),
        }
    }

    fn no_refs(reference: &BlockRef) -> Result<BlockId, EngineError> {
        match reference {
            BlockRef::Id(id) => Ok(*id),
            other => Err(EngineError::InvalidValue(format!("no block {other}"))),
        }
    }

    fn check(text: &str, block: &Block) -> bool {
        Matcher::new(&condition(text), &no_refs).unwrap().matches(block).unwrap()
    }

    #[test]
    fn every_operator() {
        let mut meta = Metadata::with_role(Role::Heading2);
        meta.tags = vec!["api".into()];
        meta.label = Some("chapter-1".into());
        meta.custom.insert("priority".into(), 7.into());
        let block = Block::new(BlockId::ROOT, Content::markdown("Read the TODO list"), meta);
        for yes in [
            "role = heading2",
            "priority > 5 AND priority >= 7 AND priority < 8 AND priority <= 7 AND priority != 3",
            "priority = 7.0",
            "tags CONTAINS \"api\"",
            "text CONTAINS \"TODO\"",
            "label STARTS_WITH \"chap\" AND label ENDS_WITH \"-1\"",
            "text MATCHES \"T[O]DO\"",
            "label EXISTS AND summary IS_NULL AND label IS_NOT_NULL AND summary IS_EMPTY",
            "NOT archived",
            "(archived OR priority) AND NOT (role = paragraph)",
            "missing != 1",
        ] {
            assert!(check(yes, &block), "{yes}");
        }
        for no in
            ["role = paragraph", "priority > 7", "archived", "tags CONTAINS \"x\"", "missing = 1", "label < \"a\""]
        {
            assert!(!check(no, &block), "{no}");
        }
    }

    #[test]
    fn bad_patterns_fail_up_front() {
        assert!(matches!(
            Matcher::new(&condition("text MATCHES \"(\""), &no_refs),
            Err(EngineError::InvalidRegex { .. })
        ));
    }

    #[test]
    fn block_references_compare_as_ids() {
        let mut meta = Metadata::with_role(Role::Paragraph);
        meta.custom.insert("parent".into(), BlockId::ROOT.to_string().into());
        let block = Block::new(BlockId::ROOT, Content::markdown("x"), meta);
        assert!(check(&format!("parent = @{}", BlockId::ROOT), &block));
        assert!(Matcher::new(&condition("parent = @nowhere"), &no_refs).is_err());
    }

    #[test]
    fn flat_chains_of_a_million_terms_evaluate_in_a_loop() {
        let block = Block::new(BlockId::ROOT, Content::markdown("v999999"), Metadata::with_role(Role::Paragraph));
        let terms: Vec<String> = (0..1_000_000).map(|i| format!("text = \"v{i}\"")).collect();
        let text = terms.join(" OR ");
        let small_stack = std::thread::Builder::new().stack_size(256 * 1024);
        let matched = small_stack.spawn(move || check(&text, &block)).unwrap().join().unwrap();
        assert!(matched);
    }

    #[test]
    fn trees_deeper_than_the_cap_are_refused() {
        let mut deep = Condition::Truthy(Path(vec![ucpkit_ucl::PathSegment::Field("x".into())]));
        for _ in 0..100 {
            deep = Condition::Not(Box::new(deep));
        }
        assert!(matches!(Matcher::new(&deep, &no_refs), Err(EngineError::InvalidValue(_))));
    }
}
