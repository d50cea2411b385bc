//! The tools an agent calls: anything that lists tools and runs them by
//! name ([`ToolHost`]), combined ([`Tools`]) and narrowed to an allow-list.

use serde_json::{Map, Value};
use ucpkit_llm::ToolSpec;

/// What a tool call returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutcome {
    /// The result's text, as the model sees it.
    pub text: String,
    /// Whether the call failed (the text says why).
    pub is_error: bool,
}

impl ToolOutcome {
    /// A successful result.
    pub fn ok(text: impl Into<String>) -> Self {
        ToolOutcome { text: text.into(), is_error: false }
    }

    /// A failed call with its reason.
    pub fn error(text: impl Into<String>) -> Self {
        ToolOutcome { text: text.into(), is_error: true }
    }
}

/// A set of tools.
pub trait ToolHost: Send + Sync {
    /// The tools, with their schemas.
    fn tools(&self) -> Vec<ToolSpec>;

    /// Runs tool `name` with `arguments` (a name [`ToolHost::tools`] lists).
    fn call(&self, name: &str, arguments: &Map<String, Value>) -> ToolOutcome;

    /// The agent means to answer `task` now: `Err` says what stands in the
    /// way (a failed check, a rule), for the model to deal with first.
    fn finish(&self, _task: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Several hosts as one, narrowed to an allow-list: a tool is offered and
/// run only when allowed, by the first host that lists it.
pub struct Tools<'a> {
    hosts: Vec<&'a dyn ToolHost>,
    allowed: Option<Vec<String>>,
}

impl<'a> Tools<'a> {
    /// The tools of `hosts`; all of them when `allowed` is `None`.
    pub fn new(hosts: Vec<&'a dyn ToolHost>, allowed: Option<Vec<String>>) -> Self {
        Tools { hosts, allowed }
    }

    fn allows(&self, name: &str) -> bool {
        self.allowed.as_ref().is_none_or(|names| names.iter().any(|n| n == name))
    }

    /// The tools offered, each name once: in the allow-list's order when
    /// there is one (models lean to the first tools they are shown), else
    /// in the hosts' order.
    pub fn specs(&self) -> Vec<ToolSpec> {
        let mut specs: Vec<ToolSpec> = Vec::new();
        for host in &self.hosts {
            for spec in host.tools() {
                if self.allows(&spec.name) && !specs.iter().any(|s| s.name == spec.name) {
                    specs.push(spec);
                }
            }
        }
        if let Some(allowed) = &self.allowed {
            specs.sort_by_key(|spec| allowed.iter().position(|name| *name == spec.name));
        }
        specs
    }

    /// Whether the agent may answer `task` now: every host must agree.
    pub fn finish(&self, task: &str) -> Result<(), String> {
        self.hosts.iter().try_for_each(|host| host.finish(task))
    }

    /// Runs a call; a tool not offered or arguments that are not an object
    /// get an error result the model can read.
    pub fn call(&self, name: &str, arguments: &Value) -> ToolOutcome {
        if !self.allows(name) {
            return ToolOutcome::error(format!("tool {name:?} is not allowed here; use one of the tools offered"));
        }
        let Some(host) = self.hosts.iter().find(|h| h.tools().iter().any(|t| t.name == name)) else {
            return ToolOutcome::error(format!("there is no tool {name:?}; use one of the tools offered"));
        };
        match arguments {
            Value::Object(map) => host.call(name, map),
            Value::Null => host.call(name, &Map::new()),
            other => ToolOutcome::error(format!("the arguments must be a JSON object, not {other}")),
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    /// A host whose one tool echoes its arguments.
    pub(crate) struct Echo(pub &'static str);

    impl ToolHost for Echo {
        fn tools(&self) -> Vec<ToolSpec> {
            vec![ToolSpec { name: self.0.into(), description: "Echo".into(), parameters: json!({"type": "object"}) }]
        }

        fn call(&self, name: &str, arguments: &Map<String, Value>) -> ToolOutcome {
            ToolOutcome::ok(format!("{name} {}", Value::Object(arguments.clone())))
        }
    }

    #[test]
    fn the_allow_list_narrows_what_is_offered_and_run() {
        let (a, b) = (Echo("a"), Echo("b"));
        let ordered = Tools::new(vec![&a, &b], Some(vec!["b".into(), "a".into()]));
        assert_eq!(ordered.specs().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["b", "a"]);
        let tools = Tools::new(vec![&a, &b], Some(vec!["b".into()]));
        assert_eq!(tools.specs().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["b"]);
        assert_eq!(tools.call("b", &json!({"x": 1})), ToolOutcome::ok("b {\"x\":1}"));
        assert!(tools.call("a", &json!({})).is_error);
        assert!(tools.call("zzz", &json!({})).is_error);
        let all = Tools::new(vec![&a, &b], None);
        assert!(all.call("a", &json!("text")).text.contains("JSON object"));
        assert!(!all.call("a", &Value::Null).is_error);
    }
}
