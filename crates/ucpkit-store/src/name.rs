//! Document names as the store checks them: [`ucpkit_core::document_name_rule`]
//! once before anything is written under a name, by every front end (`ucp
//! index --name`, `ucp context --doc`, MCP `open`) and again by the store's
//! writes; and the names of agent-state documents.

pub use ucpkit_core::MAX_DOCUMENT_NAME_CHARS;

use crate::StoreError;

/// The documents UCP keeps for agents rather than for a corpus: their
/// memories and their plans (`memory`, `relations`, each also per
/// namespace as `<name>@<namespace>`). A store's default document is
/// chosen among the others, so storing a memory never makes a one-corpus
/// store ask which document to use.
pub const AGENT_STATE_DOCUMENTS: [&str; 2] = ["memory", "relations"];

/// Whether document `name` holds agent state ([`AGENT_STATE_DOCUMENTS`]).
///
/// ```
/// assert!(ucpkit_store::is_agent_state("memory"));
/// assert!(ucpkit_store::is_agent_state("relations@agent-7"));
/// assert!(!ucpkit_store::is_agent_state("memory-notes"));
/// ```
pub fn is_agent_state(name: &str) -> bool {
    let base = name.split_once('@').map_or(name, |(base, _)| base);
    AGENT_STATE_DOCUMENTS.contains(&base)
}

/// Agent-state document `base` ([`AGENT_STATE_DOCUMENTS`]) of
/// `namespace`: `base` itself, or `base@namespace`; a namespace has 1 to
/// 64 letters, digits, `-`, `_` or `.`.
///
/// ```
/// assert_eq!(ucpkit_store::namespaced_document("memory", Some("agent-7")).unwrap(), "memory@agent-7");
/// assert!(ucpkit_store::namespaced_document("memory", Some("a/b")).is_err());
/// ```
pub fn namespaced_document(base: &str, namespace: Option<&str>) -> Result<String, StoreError> {
    let Some(namespace) = namespace else { return Ok(base.to_owned()) };
    let ok = !namespace.is_empty()
        && namespace.len() <= 64
        && namespace.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(StoreError::InvalidName {
            name: shown(namespace),
            rule: "a namespace has 1 to 64 letters, digits, '-', '_' or '.'".into(),
        });
    }
    Ok(format!("{base}@{namespace}"))
}

/// Checks `name` against the rules for document names; the error names
/// the rule that failed.
///
/// ```
/// assert!(ucpkit_store::check_document_name("node-docs").is_ok());
/// assert!(ucpkit_store::check_document_name(&"x".repeat(300)).is_err());
/// assert!(ucpkit_store::check_document_name("a/b").is_err());
/// ```
pub fn check_document_name(name: &str) -> Result<(), StoreError> {
    match ucpkit_core::document_name_rule(name) {
        Some(rule) => Err(StoreError::InvalidName { name: shown(name), rule }),
        None => Ok(()),
    }
}

/// The name as an error shows it: a long one is cut, control characters
/// are escaped by `{:?}` where it is printed.
fn shown(name: &str) -> String {
    const SHOWN: usize = 40;
    if name.chars().count() <= SHOWN {
        return name.to_owned();
    }
    let head: String = name.chars().take(SHOWN).collect();
    format!("{head}…")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(name: &str) -> String {
        check_document_name(name).unwrap_err().to_string()
    }

    #[test]
    fn names_follow_the_rules() {
        for good in ["node", "Node API docs", "guide.v2", "café", "n".repeat(MAX_DOCUMENT_NAME_CHARS).as_str()] {
            assert!(check_document_name(good).is_ok(), "{good}");
        }
        assert!(rule("").contains("cannot be empty"));
        assert!(rule("  ").contains("cannot be empty"));
        let long = rule(&"n".repeat(300));
        assert!(long.contains("at most 128 characters; this one has 300"), "{long}");
        assert!(long.len() < 200, "the name is cut in the message: {long}");
        assert!(rule("a\nb").contains("control characters"));
        assert!(rule("../etc").contains("`/`"));
        assert!(rule("a\\b").contains("`/`"));
        assert!(rule(" padded").contains("whitespace"));
    }
}
