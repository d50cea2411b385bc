//! WHERE conditions evaluated against blocks.

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value as Json;
use ucl_parser::{Check, CompareOp, Condition};
use ucm_core::Block;

use crate::access::read;
use crate::EngineError;

/// A condition with its regular expressions compiled, ready to test many
/// blocks.
pub(crate) struct Matcher<'c> {
    condition: &'c Condition,
    regexes: HashMap<&'c str, Regex>,
}

impl<'c> Matcher<'c> {
    /// Compiles the condition's patterns; an invalid pattern is an error
    /// before any block is looked at.
    pub(crate) fn new(condition: &'c Condition) -> Result<Self, EngineError> {
        let mut regexes = HashMap::new();
        compile(condition, &mut regexes)?;
        Ok(Matcher { condition, regexes })
    }

    /// Whether `block` satisfies the condition.
    pub(crate) fn matches(&self, block: &Block) -> Result<bool, EngineError> {
        self.eval(self.condition, block)
    }

    fn eval(&self, condition: &Condition, block: &Block) -> Result<bool, EngineError> {
        Ok(match condition {
            Condition::And(a, b) => self.eval(a, block)? && self.eval(b, block)?,
            Condition::Or(a, b) => self.eval(a, block)? || self.eval(b, block)?,
            Condition::Not(inner) => !self.eval(inner, block)?,
            Condition::Truthy(path) => read(block, path)?.is_some_and(|v| truthy(&v)),
            Condition::Check { path, check } => {
                let value = read(block, path)?;
                match check {
                    Check::Exists => value.is_some(),
                    Check::IsNull => value.is_none_or(|v| v.is_null()),
                    Check::IsNotNull => value.is_some_and(|v| !v.is_null()),
                    Check::IsEmpty => value.is_none_or(|v| is_empty(&v)),
                }
            }
            Condition::Compare { path, op, value } => {
                let Some(left) = read(block, path)? else { return Ok(*op == CompareOp::Ne) };
                let right = value.to_json();
                match op {
                    CompareOp::Eq => equal(&left, &right),
                    CompareOp::Ne => !equal(&left, &right),
                    CompareOp::Gt => order(&left, &right).is_some_and(|o| o.is_gt()),
                    CompareOp::Ge => order(&left, &right).is_some_and(|o| o.is_ge()),
                    CompareOp::Lt => order(&left, &right).is_some_and(|o| o.is_lt()),
                    CompareOp::Le => order(&left, &right).is_some_and(|o| o.is_le()),
                    CompareOp::Contains => match (&left, &right) {
                        (Json::String(s), Json::String(t)) => s.contains(t.as_str()),
                        (Json::Array(items), needle) => items.iter().any(|i| equal(i, needle)),
                        (Json::Object(map), Json::String(key)) => map.contains_key(key),
                        _ => false,
                    },
                    CompareOp::StartsWith => {
                        matches!((&left, &right), (Json::String(s), Json::String(t)) if s.starts_with(t.as_str()))
                    }
                    CompareOp::EndsWith => {
                        matches!((&left, &right), (Json::String(s), Json::String(t)) if s.ends_with(t.as_str()))
                    }
                    CompareOp::Matches => match (&left, &right) {
                        (Json::String(s), Json::String(pattern)) => self.regexes[pattern.as_str()].is_match(s),
                        _ => false,
                    },
                }
            }
        })
    }
}

fn compile<'c>(condition: &'c Condition, regexes: &mut HashMap<&'c str, Regex>) -> Result<(), EngineError> {
    match condition {
        Condition::And(a, b) | Condition::Or(a, b) => {
            compile(a, regexes)?;
            compile(b, regexes)
        }
        Condition::Not(inner) => compile(inner, regexes),
        Condition::Compare { op: CompareOp::Matches, value: ucl_parser::Value::String(pattern), .. } => {
            let regex = Regex::new(pattern)
                .map_err(|e| EngineError::InvalidRegex { pattern: pattern.clone(), reason: e.to_string() })?;
            regexes.insert(pattern, regex);
            Ok(())
        }
        Condition::Compare { op: CompareOp::Matches, value, .. } => {
            Err(EngineError::InvalidValue(format!("MATCHES needs a pattern string, not {value}")))
        }
        _ => Ok(()),
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
    use ucm_core::{BlockId, Content, Metadata, Role};

    fn condition(text: &str) -> Condition {
        match ucl_parser::parse_commands(&format!("DELETE WHERE {text}")).unwrap().remove(0) {
            ucl_parser::Command::Delete(d) => d.condition.unwrap(),
            _ => unreachable!(),
        }
    }

    fn check(text: &str, block: &Block) -> bool {
        Matcher::new(&condition(text)).unwrap().matches(block).unwrap()
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
        assert!(matches!(Matcher::new(&condition("text MATCHES \"(\"")), Err(EngineError::InvalidRegex { .. })));
    }
}
