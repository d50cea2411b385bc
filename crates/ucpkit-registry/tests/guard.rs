//! The one gate: every call through the registry — an agent's, a
//! sub-agent's (its `ask_user` too), another server's tool — passes the
//! guard's rules; asks go to the supervisor; `finish` waits for the
//! checks after a change; a rollback puts the tools' changes back.

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use ucpkit_registry::agents::{AgentSetup, ConnectionSubagents, ConnectionTools};
use ucpkit_registry::parts::agent::{Asker, Question, SubagentFactory as _, ToolHost as _, UserAnswer};
use ucpkit_registry::parts::guard::{ChecksConfig, GuardConfig, Outcome};
use ucpkit_registry::parts::llm::{Config, Overrides};
use ucpkit_registry::{
    guarded, tools, Action, Approval, CallError, Connection, GuardSetup, JsonObject, Library, LibraryConfig,
    Supervisor, Tool, ToolOffer, ToolOutput,
};

fn rules(text: &str) -> Vec<ucpkit_registry::parts::guard::Rule> {
    GuardConfig::parse(text).unwrap().compile(None).unwrap()
}

fn args(value: Value) -> JsonObject {
    value.as_object().unwrap().clone()
}

/// A library in `root/.ucp` and an offer over `root` guarded by `rules_text` and `checks`.
fn offer(root: &Path, rules_text: &str, checks: ChecksConfig) -> (Arc<Library>, ToolOffer) {
    let library = Arc::new(Library::open(LibraryConfig::new(root.join(".ucp"))).unwrap());
    let setup = AgentSetup {
        config: Config::default(),
        overrides: Overrides {
            base_url: Some("http://127.0.0.1:9/v1".into()),
            model: Some("m".into()),
            ..Overrides::default()
        },
    };
    let offer = ToolOffer {
        root: Some(root.to_owned()),
        agents: Some(Arc::new(setup)),
        guard: Some(GuardSetup::new(&rules(rules_text), checks).journaled(true).shared()),
        ..ToolOffer::documents(4000)
    };
    (library, offer)
}

struct Recorder {
    allow: bool,
    asked: Mutex<Vec<String>>,
}

impl Supervisor for Recorder {
    fn approve(&self, action: &Action) -> Approval {
        self.asked.lock().unwrap().push(action.title.clone());
        if self.allow {
            Approval::Allow
        } else {
            Approval::Deny("the user said no".into())
        }
    }
}

struct Yes;

impl Asker for Yes {
    fn ask(&self, _: &Question) -> Result<UserAnswer, String> {
        Ok(UserAnswer::Choice("yes".into()))
    }
}

const RULES: &str = r#"
[[guard.rules]]
decision = "deny"
tool = "write"
path = "secrets/**"
reason = "secrets are not written by agents"

[[guard.rules]]
decision = "deny"
tool = "ask_user"
agent = "default-*"
reason = "sub-agents do not ask the user"

[[guard.rules]]
decision = "deny"
tool = "mcp__other__*"
args = { target = "prod*" }
reason = "nothing touches production"

[[guard.rules]]
decision = "ask"
tool = "bash"
command = ["git", "push"]
reason = "pushing needs a person"

[[guard.rules]]
decision = "allow"
tool = "write"
path = "notes/**"
reason = "notes are free to write"
"#;

#[test]
fn no_call_gets_around_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (library, mut offer) = offer(&root, RULES, ChecksConfig::default());
    // Another server's tool, offered under the same rules.
    let ran = Arc::new(Mutex::new(0));
    let counter = ran.clone();
    let other = Tool::untyped(
        "mcp__other__deploy",
        "Deploys",
        args(json!({"type": "object"})),
        Arc::new(move |_, _| {
            *counter.lock().unwrap() += 1;
            Ok(ToolOutput { text: "deployed".into(), is_error: false })
        }),
    );
    offer.others = vec![other];
    let connection = Connection::new(library.clone(), Arc::new(offer.clone()));

    // The agent's own call.
    let blocked =
        tools::call(&connection, "write", &args(json!({"path": "secrets/k.txt", "content": "x"}))).unwrap_err();
    assert!(matches!(&blocked, CallError::Blocked(r) if r == "secrets are not written by agents"), "{blocked}");
    assert_eq!(blocked.code(), "blocked");
    assert!(!root.join("secrets/k.txt").exists(), "a blocked call changes nothing");
    // The path the tool would open, however it is written.
    for sneaky in ["src/../secrets/k.txt", "./secrets/k.txt"] {
        let absolute = root.join(sneaky).display().to_string();
        for path in [sneaky.to_owned(), absolute] {
            let call = tools::call(&connection, "write", &args(json!({"path": path, "content": "x"})));
            assert!(matches!(call, Err(CallError::Blocked(_))), "{path}: {call:?}");
        }
    }
    tools::call(&connection, "write", &args(json!({"path": "src/ok.txt", "content": "x"}))).unwrap();

    // Another server's tool.
    let deploy = tools::call(&connection, "mcp__other__deploy", &args(json!({"target": "production"}))).unwrap_err();
    assert!(matches!(deploy, CallError::Blocked(_)));
    assert_eq!(*ran.lock().unwrap(), 0);
    tools::call(&connection, "mcp__other__deploy", &args(json!({"target": "staging"}))).unwrap();
    assert_eq!(*ran.lock().unwrap(), 1);

    // A sub-agent's calls, `ask_user` included (which its host runs itself).
    let factory = ConnectionSubagents::new(library, &offer, Some(Arc::new(Yes))).unwrap();
    let sub = factory.build("default").unwrap();
    let write = sub.host.call("write", &args(json!({"path": "secrets/k.txt", "content": "x"})));
    assert!(write.is_error && write.text.contains("secrets are not written"), "{}", write.text);
    let ask =
        sub.host.call("ask_user", &args(json!({"question": "ok?", "options": [{"label": "yes"}, {"label": "no"}]})));
    assert!(ask.is_error && ask.text.contains("sub-agents do not ask"), "{}", ask.text);
    assert!(!root.join("secrets").exists());

    // Every decision is in the trail.
    let trail = connection.guard().guard().trace();
    let refused = trail.iter().filter(|e| matches!(e.outcome, Outcome::Refused { .. })).count();
    assert_eq!(refused, 8, "{trail:#?}");
    assert!(trail.iter().any(|e| e.events.iter().any(|s| s.starts_with("default-1: write"))));
}

#[test]
fn asks_go_to_the_supervisor_and_allows_skip_it() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let (library, offer) = offer(&root, RULES, ChecksConfig::default());
    let offer = Arc::new(offer);
    let refusing = Connection::new(library.clone(), offer.clone());
    let recorder = Arc::new(Recorder { allow: false, asked: Mutex::new(Vec::new()) });
    refusing.set_supervisor(recorder.clone());
    let push = args(json!({"command": "git push origin main"}));
    let declined = tools::call(&refusing, "bash", &push).unwrap_err();
    assert!(matches!(&declined, CallError::Declined(r) if r == "the user said no"), "{declined}");
    // An allow rule lets a write through without asking; another write is asked.
    tools::call(&refusing, "write", &args(json!({"path": "notes/a.md", "content": "x"}))).unwrap();
    assert!(root.join("notes/a.md").exists());
    assert!(tools::call(&refusing, "write", &args(json!({"path": "b.md", "content": "x"}))).is_err());
    let asked = recorder.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert!(asked[0].starts_with("Run `git push origin main`"));
    // Nobody to ask: an ask is refused with its reason.
    let unattended = Connection::new(library, offer);
    let refused = tools::call(&unattended, "bash", &push).unwrap_err();
    assert!(refused.to_string().contains("pushing needs a person"), "{refused}");
    assert!(refused.to_string().contains("no one can be asked"), "{refused}");
}

#[test]
fn finish_waits_for_the_checks_and_a_rollback_restores_the_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("value.txt"), "1\n").unwrap();
    let checks = ChecksConfig {
        static_checks: vec!["test -s value.txt".into()],
        tests: vec!["grep -qx 2 value.txt || { echo \"value.txt holds $(cat value.txt), not 2\"; exit 1; }".into()],
        ..ChecksConfig::default()
    };
    let (library, offer) = offer(&root, "", checks);
    let connection = Connection::new(library, Arc::new(offer));
    let host = ConnectionTools(connection);
    assert_eq!(host.finish("nothing changed"), Ok(()), "no change, nothing to check");

    let edit = |old: &str, new: &str| {
        tools::call(&host.0, "edit", &args(json!({"path": "value.txt", "old_string": old, "new_string": new}))).unwrap()
    };
    edit("1", "3");
    tools::call(&host.0, "write", &args(json!({"path": "made.txt", "content": "new\n"}))).unwrap();
    let failed = host.finish("set the value to 2").unwrap_err();
    assert!(failed.contains("the test check") && failed.contains("value.txt holds 3, not 2"), "{failed}");
    assert_eq!(host.finish("again").unwrap_err(), failed, "a failing check keeps failing");

    // Rolled back: the edited file as it was, the made one gone.
    assert_eq!(guarded::rollback(&host.0).unwrap(), ["made.txt", "value.txt"]);
    assert_eq!(std::fs::read_to_string(root.join("value.txt")).unwrap(), "1\n");
    assert!(!root.join("made.txt").exists());

    edit("1", "2");
    assert_eq!(host.finish("set the value to 2"), Ok(()));
    assert_eq!(guarded::rollback(&host.0).unwrap(), Vec::<String>::new(), "accepted: nothing to roll back");
    assert_eq!(std::fs::read_to_string(root.join("value.txt")).unwrap(), "2\n");
    let trail = host.0.guard().guard().trace();
    let summaries: Vec<String> = trail.iter().flat_map(|e| e.events.clone()).collect();
    assert!(
        summaries.contains(&"main: checks failed".to_owned()) && summaries.contains(&"main: accept_change".to_owned())
    );
}

#[test]
fn sub_agents_take_turns_on_a_file_under_a_mutex() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let mutex = "[[guard.rules]]\nkind = \"mutex\"\nreason = \"one writer at a time\"\n";
    let (library, offer) = offer(&root, mutex, ChecksConfig::default());
    let factory = ConnectionSubagents::new(library, &offer, None).unwrap();
    let (first, second) = (factory.build("default").unwrap(), factory.build("default").unwrap());
    let write = |content: &str| args(json!({"path": "shared.txt", "content": content}));
    assert!(!first.host.call("write", &write("one")).is_error);
    let refused = second.host.call("write", &write("two"));
    assert!(refused.is_error && refused.text.contains("shared.txt is held by default-1"), "{}", refused.text);
    first.host.finish("done").unwrap();
    assert!(!second.host.call("write", &write("two")).is_error, "free once the holder finished");
    assert_eq!(std::fs::read_to_string(root.join("shared.txt")).unwrap(), "two");
}
