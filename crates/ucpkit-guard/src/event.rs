//! The events b-threads see ([`Event`]: who acts, and what: a tool call,
//! a file write, a command line, `finish` ...) and the patterns rules
//! match them with ([`Pattern`]).

use std::collections::BTreeMap;

use globset::{GlobBuilder, GlobMatcher};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::GuardError;

/// The agent an event comes from when none is named: the main one.
pub const MAIN_AGENT: &str = "main";

fn main_agent() -> String {
    MAIN_AGENT.to_owned()
}

/// One event: an agent's act.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    /// The agent acting (`main`, or a sub-agent's name).
    #[serde(default = "main_agent")]
    pub agent: String,
    /// What it does.
    #[serde(flatten)]
    pub act: Act,
    /// Its command line split into simple commands, once, for every rule.
    #[serde(skip)]
    split: Split,
}

/// A command line's simple commands, worked out on first use (equal
/// whatever it holds: it only caches what the line says).
#[derive(Debug, Clone, Default)]
struct Split(std::sync::OnceLock<Vec<Vec<String>>>);

impl PartialEq for Split {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// What an event does.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case", deny_unknown_fields)]
pub enum Act {
    /// A tool call, with what it touches: the command line it runs and
    /// the paths it names (relative to the workspace root when inside).
    Tool {
        /// The tool.
        tool: String,
        /// Its arguments.
        #[serde(default)]
        args: Map<String, Value>,
        /// The command line it runs.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// The paths it reads or writes.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        paths: Vec<String>,
    },
    /// A file written (made, changed or removed) by a tool.
    Write {
        /// The path.
        path: String,
    },
    /// A command line run.
    Command {
        /// The command line.
        line: String,
    },
    /// The agent's answer: it holds its work done.
    Finish,
    /// The project's checks ran on the changes.
    Checks {
        /// They all passed.
        passed: bool,
    },
    /// The changes so far are accepted (the state to roll back to).
    AcceptChange,
    /// A message to the user.
    Message {
        /// Its text.
        text: String,
    },
}

impl Act {
    /// The kind's name, as rules write it.
    pub fn name(&self) -> &'static str {
        match self {
            Act::Tool { .. } => "tool",
            Act::Write { .. } => "write",
            Act::Command { .. } => "command",
            Act::Finish => "finish",
            Act::Checks { .. } => "checks",
            Act::AcceptChange => "accept_change",
            Act::Message { .. } => "message",
        }
    }
}

impl Event {
    /// An event of `agent`.
    pub fn new(agent: impl Into<String>, act: Act) -> Self {
        Event { agent: agent.into(), act, split: Split::default() }
    }

    /// The simple commands of its command line (none without one).
    pub fn commands(&self) -> &[Vec<String>] {
        let line = match &self.act {
            Act::Tool { command: Some(line), .. } | Act::Command { line } => line.as_str(),
            _ => "",
        };
        self.split.0.get_or_init(|| if line.is_empty() { Vec::new() } else { commands(line) })
    }

    /// One line naming it, for traces and reports.
    pub fn summary(&self) -> String {
        let what = match &self.act {
            Act::Tool { tool, command: Some(line), .. } => format!("{tool} `{line}`"),
            Act::Tool { tool, paths, .. } if !paths.is_empty() => format!("{tool} {}", paths.join(", ")),
            Act::Tool { tool, .. } => tool.clone(),
            Act::Write { path } => format!("write {path}"),
            Act::Command { line } => format!("command `{line}`"),
            Act::Checks { passed } => format!("checks {}", if *passed { "passed" } else { "failed" }),
            Act::Message { text } => format!("message {:?}", text.chars().take(60).collect::<String>()),
            Act::Finish | Act::AcceptChange => self.act.name().to_owned(),
        };
        format!("{}: {what}", self.agent)
    }
}

/// A pattern as rules write it: every field given must match.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PatternSpec {
    /// The event's kind (`tool` when absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
    /// A glob on the agent's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// A glob on the tool's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Leading words of a command line (any of its commands, the program
    /// by its file name: `rm` matches `/bin/rm -rf x` and `make && rm -rf x`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// A glob on a path (`~/` is the home folder; relative globs match
    /// paths inside the workspace).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Globs on arguments (a string argument's text, any other's JSON).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, String>,
    /// For `checks`: whether they passed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub passed: Option<bool>,
}

/// The event kinds patterns name.
const KINDS: [&str; 7] = ["tool", "write", "command", "finish", "checks", "accept_change", "message"];

/// A compiled [`PatternSpec`] (cheap to clone: threads share it).
#[derive(Debug, Clone)]
pub struct Pattern(std::sync::Arc<Compiled>);

#[derive(Debug)]
struct Compiled {
    kind: String,
    agent: Option<GlobMatcher>,
    tool: Option<GlobMatcher>,
    command: Option<Vec<String>>,
    path: Option<GlobMatcher>,
    args: Vec<(String, GlobMatcher)>,
    passed: Option<bool>,
}

impl Pattern {
    /// Compiles `spec`; `home` expands a leading `~/` in its path glob.
    pub fn new(spec: &PatternSpec, home: Option<&str>) -> Result<Self, GuardError> {
        let kind = spec.event.clone().unwrap_or_else(|| "tool".to_owned());
        if !KINDS.contains(&kind.as_str()) {
            return Err(GuardError::Rule(format!("unknown event {kind:?} (known: {})", KINDS.join(", "))));
        }
        let fits = match kind.as_str() {
            "tool" => spec.passed.is_none(),
            "write" => spec.tool.is_none() && spec.command.is_none() && spec.passed.is_none() && spec.args.is_empty(),
            "command" => spec.tool.is_none() && spec.path.is_none() && spec.passed.is_none() && spec.args.is_empty(),
            "checks" => spec.tool.is_none() && spec.path.is_none() && spec.command.is_none() && spec.args.is_empty(),
            _ => spec.tool.is_none() && spec.path.is_none() && spec.command.is_none() && spec.args.is_empty(),
        };
        if !fits {
            return Err(GuardError::Rule(format!("a pattern on {kind} events takes fields that {kind} events have")));
        }
        if spec.command.as_ref().is_some_and(Vec::is_empty) {
            return Err(GuardError::Rule("`command` needs at least one word".into()));
        }
        let path = match &spec.path {
            Some(glob) => match (glob.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => Some(format!("{}/{rest}", home.trim_end_matches('/'))),
                (Some(_), None) => {
                    return Err(GuardError::Rule(format!("{glob:?} names the home folder, unknown here")))
                }
                (None, _) => Some(glob.clone()),
            },
            None => None,
        };
        Ok(Pattern(std::sync::Arc::new(Compiled {
            kind,
            agent: spec.agent.as_deref().map(glob).transpose()?,
            tool: spec.tool.as_deref().map(glob).transpose()?,
            command: spec.command.clone(),
            path: path.as_deref().map(path_glob).transpose()?,
            args: spec.args.iter().map(|(k, v)| Ok((k.clone(), glob(v)?))).collect::<Result<_, GuardError>>()?,
            passed: spec.passed,
        })))
    }

    /// The event kind it matches.
    pub fn kind(&self) -> &str {
        &self.0.kind
    }

    /// Whether `event` matches.
    pub fn matches(&self, event: &Event) -> bool {
        if event.act.name() != self.0.kind || self.0.agent.as_ref().is_some_and(|g| !g.is_match(&event.agent)) {
            return false;
        }
        match &event.act {
            Act::Tool { tool, args, command, paths } => {
                self.0.tool.as_ref().is_none_or(|g| g.is_match(tool))
                    && self.0.command.as_ref().is_none_or(|words| command.is_some() && begins(event.commands(), words))
                    && self.0.path.as_ref().is_none_or(|g| paths.iter().any(|p| g.is_match(p)))
                    && self.0.args.iter().all(|(key, g)| args.get(key).is_some_and(|v| g.is_match(text_of(v).as_ref())))
            }
            Act::Write { path } => self.0.path.as_ref().is_none_or(|g| g.is_match(path)),
            Act::Command { .. } => self.0.command.as_ref().is_none_or(|words| begins(event.commands(), words)),
            Act::Checks { passed } => self.0.passed.is_none_or(|p| p == *passed),
            Act::Finish | Act::AcceptChange | Act::Message { .. } => true,
        }
    }

    /// An event `example` stands for, for checking a rule's examples: a
    /// command line where the pattern has `command`, a path where it has
    /// `path`, else a tool's name (or, for other kinds, the message text).
    pub fn example_event(&self, spec: &PatternSpec, example: &str) -> Event {
        // A tool the rule names: itself, or one its glob matches.
        let tool = spec.tool.as_ref().map(|named| {
            let candidates = ["bash", "read", "write", "edit", "grep", "glob", "ast_search", "task", "ucl"];
            match (named.contains(['*', '?', '[', '{']), &self.0.tool) {
                (true, Some(glob)) => {
                    candidates.iter().find(|c| glob.is_match(c)).map_or(named.clone(), |c| (*c).to_owned())
                }
                _ => named.clone(),
            }
        });
        let act = match self.0.kind.as_str() {
            "write" => Act::Write { path: example.to_owned() },
            "command" => Act::Command { line: example.to_owned() },
            "message" => Act::Message { text: example.to_owned() },
            "tool" if self.0.command.is_some() => Act::Tool {
                tool: tool.unwrap_or_else(|| "bash".into()),
                args: Map::new(),
                command: Some(example.to_owned()),
                paths: Vec::new(),
            },
            "tool" if self.0.path.is_some() => Act::Tool {
                tool: tool.unwrap_or_else(|| "read".into()),
                args: Map::new(),
                command: None,
                paths: vec![example.to_owned()],
            },
            "tool" => Act::Tool { tool: example.to_owned(), args: Map::new(), command: None, paths: Vec::new() },
            _ => return Event::new(example, self.example_act()),
        };
        Event::new(MAIN_AGENT, act)
    }

    fn example_act(&self) -> Act {
        match self.0.kind.as_str() {
            "finish" => Act::Finish,
            "checks" => Act::Checks { passed: self.0.passed.unwrap_or(true) },
            _ => Act::AcceptChange,
        }
    }
}

fn glob(text: &str) -> Result<GlobMatcher, GuardError> {
    GlobBuilder::new(text)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| GuardError::Rule(format!("bad glob {text:?}: {e}")))
}

/// A path glob: `*` stays within one folder, `**` crosses them.
fn path_glob(text: &str) -> Result<GlobMatcher, GuardError> {
    GlobBuilder::new(text)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
        .map_err(|e| GuardError::Rule(format!("bad glob {text:?}: {e}")))
}

fn text_of(value: &Value) -> std::borrow::Cow<'_, str> {
    match value {
        Value::String(s) => s.into(),
        other => other.to_string().into(),
    }
}

/// Whether any simple command of `line` starts with `words`.
pub fn starts(line: &str, words: &[String]) -> bool {
    begins(&commands(line), words)
}

/// Whether any of `commands` starts with `words` (the program by its file name).
fn begins(commands: &[Vec<String>], words: &[String]) -> bool {
    commands.iter().any(|command| {
        command.len() >= words.len()
            && command.iter().zip(words).enumerate().all(|(i, (have, want))| {
                let have = if i == 0 { have.rsplit('/').next().unwrap_or(have) } else { have.as_str() };
                have == want
            })
    })
}

/// The simple commands of a command line, each as its words: split at
/// `;`, `&&`, `||`, `|`, `&` and new lines, leading `VAR=value`
/// assignments and wrappers (`sudo`, `env`, `command`, `exec`, `nohup`,
/// `time`) dropped, and the script of `sh -c`/`bash -c` split the same way.
pub fn commands(line: &str) -> Vec<Vec<String>> {
    let mut spaced = String::with_capacity(line.len() + 8);
    let mut chars = line.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => {
                quote = None;
                spaced.push(c);
            }
            (Some(_), '\\') => {
                spaced.push(c);
                spaced.extend(chars.next());
            }
            (Some(_), c) => spaced.push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                spaced.push(c);
            }
            (None, '\\') => {
                spaced.push(c);
                spaced.extend(chars.next());
            }
            (None, ';' | '&' | '|' | '\n' | '(' | ')' | '`') => spaced.push_str(" \u{0} "),
            (None, '$') if chars.peek() == Some(&'(') => {
                chars.next();
                spaced.push_str(" \u{0} ");
            }
            (None, c) => spaced.push(c),
        }
    }
    let mut found = Vec::new();
    for part in spaced.split('\u{0}') {
        let words = shlex::split(part).unwrap_or_else(|| part.split_whitespace().map(str::to_owned).collect());
        let words = strip_wrappers(&words);
        let Some(program) = words.first() else { continue };
        let name = program.rsplit('/').next().unwrap_or(program);
        if matches!(name, "sh" | "bash" | "dash" | "zsh") {
            if let Some(at) = words.iter().position(|w| w == "-c" || (w.starts_with('-') && w.ends_with('c'))) {
                if let Some(script) = words.get(at + 1) {
                    found.extend(commands(script));
                }
            }
        }
        found.push(words.to_vec());
    }
    found
}

/// Options of the wrappers below that take the next word as their value.
const VALUED_OPTIONS: &[&str] = &[
    "-u",
    "-g",
    "-C",
    "-D",
    "-p",
    "-r",
    "-t",
    "-U",
    "-h",
    "-n",
    "-s",
    "-k",
    "-I",
    "-P",
    "-L",
    "-d",
    "-a",
    "-E",
    "-S",
    "--user",
    "--group",
    "--signal",
    "--kill-after",
    "--chdir",
    "--unset",
];

/// `words` past what runs the command rather than being it: `VAR=value`
/// assignments, shell keywords (`if`, `then`, `do`, `!`, `{` ...) and
/// wrappers (`sudo -u x`, `env -i`, `timeout 5`, `nice -n 5`, `xargs`,
/// `nohup`, `time`, `exec` ...) with their options.
fn strip_wrappers(mut words: &[String]) -> &[String] {
    loop {
        let Some(first) = words.first().map(String::as_str) else { return words };
        match first {
            w if is_assignment(w) => words = &words[1..],
            "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" | "{" | "}" | "time" | "nohup"
            | "command" | "builtin" | "exec" => words = &words[1..],
            "sudo" | "doas" | "env" | "nice" | "timeout" | "xargs" | "stdbuf" | "ionice" | "setsid" | "chrt" => {
                words = &words[1..];
                while let Some(option) =
                    words.first().filter(|w| w.starts_with('-') || (first == "env" && is_assignment(w)))
                {
                    let takes_value = VALUED_OPTIONS.contains(&option.as_str());
                    words = &words[if takes_value { 2.min(words.len()) } else { 1 }..];
                }
                if first == "timeout" && words.first().is_some_and(|w| w.starts_with(|c: char| c.is_ascii_digit())) {
                    words = &words[1..];
                }
            }
            _ => return words,
        }
    }
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty()
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            && !name.starts_with(|c: char| c.is_ascii_digit())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| (*w).to_owned()).collect()
    }

    #[test]
    fn command_prefixes_match_any_simple_command_of_a_line() {
        let rm = words(&["rm", "-rf"]);
        for line in [
            "rm -rf build",
            "/bin/rm -rf /",
            "make && rm -rf out",
            "cd x; rm -rf y",
            "sudo rm -rf y",
            "FOO=1 rm -rf y",
            "bash -c 'rm -rf y'",
            "echo $(rm -rf y)",
            "true | env rm -rf y",
            "if true; then rm -rf x; fi",
            "for f in a; do rm -rf $f; done",
            "{ rm -rf x; }",
            "! rm -rf x",
            "env -i PATH=/bin rm -rf x",
            "sudo -u root rm -rf x",
            "timeout 5 rm -rf x",
            "timeout -s KILL 5 rm -rf x",
            "nice -n 10 rm -rf x",
            "find . | xargs rm -rf",
        ] {
            assert!(starts(line, &rm), "{line}");
        }
        for line in ["rmdir build", "rm -r build", "echo 'rm -rf x'", "grep rm -rf", "git rm -rf x"] {
            assert!(!starts(line, &rm), "{line}");
        }
        assert!(starts("git push --force origin", &words(&["git", "push", "--force"])));
    }

    #[test]
    fn patterns_match_by_kind_tool_path_and_arguments() {
        let spec = PatternSpec {
            tool: Some("{write,edit}".into()),
            path: Some("src/**".into()),
            args: [("mode".to_owned(), "fast*".to_owned())].into(),
            ..PatternSpec::default()
        };
        let pattern = Pattern::new(&spec, None).unwrap();
        let call = |tool: &str, path: &str, mode: &str| {
            let args: Map<String, Value> = [("mode".to_owned(), Value::from(mode))].into_iter().collect();
            Event::new("main", Act::Tool { tool: tool.into(), args, command: None, paths: vec![path.into()] })
        };
        assert!(pattern.matches(&call("edit", "src/a/b.rs", "faster")));
        assert!(!pattern.matches(&call("read", "src/a/b.rs", "faster")));
        assert!(!pattern.matches(&call("edit", "tests/b.rs", "faster")));
        assert!(!pattern.matches(&call("edit", "src/b.rs", "slow")));
        let home =
            Pattern::new(&PatternSpec { path: Some("~/.ssh/**".into()), ..PatternSpec::default() }, Some("/home/u"))
                .unwrap();
        assert!(home.matches(&call("read", "/home/u/.ssh/id_ed25519", "")));
        let star = Pattern::new(&PatternSpec { path: Some("*.env".into()), ..PatternSpec::default() }, None).unwrap();
        assert!(!star.matches(&call("read", "a/b.env", "")), "`*` stays in one folder");
        let bad = PatternSpec { event: Some("finish".into()), tool: Some("x".into()), ..PatternSpec::default() };
        assert!(Pattern::new(&bad, None).is_err());
        assert!(Pattern::new(&PatternSpec { event: Some("nope".into()), ..PatternSpec::default() }, None).is_err());
    }

    #[test]
    fn events_read_from_toml_and_json() {
        let event: Event = serde_json::from_value(serde_json::json!({"event": "write", "path": "a.rs"})).unwrap();
        assert_eq!(event, Event::new("main", Act::Write { path: "a.rs".into() }));
        let event: Event = toml::from_str("agent = \"b\"\nevent = \"finish\"").unwrap();
        assert_eq!(event, Event::new("b", Act::Finish));
        assert_eq!(event.summary(), "b: finish");
    }

    proptest::proptest! {
        #[test]
        fn splitting_any_line_never_panics(line in "\\PC{0,80}") {
            let _ = commands(&line);
        }
    }
}
