//! The patch-validation set (`tests/data/patch-repos`): each change is
//! made through the registry's gate and the agent asks to finish; the
//! project's checks must accept each gold change and reject each corrupted
//! one, which is then rolled back to the repository as it was.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;
use ucpkit_registry::parts::guard::GuardConfig;
use ucpkit_registry::{guarded, tools, Connection, GuardSetup, Library, LibraryConfig, ToolOffer};

#[derive(Deserialize)]
struct Change {
    description: String,
    edit: Vec<Edit>,
}

#[derive(Deserialize)]
struct Edit {
    path: String,
    old: String,
    new: String,
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn files_of(dir: &Path) -> Vec<(PathBuf, String)> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_of(&path));
        } else {
            files.push((path.clone(), std::fs::read_to_string(&path).unwrap_or_default()));
        }
    }
    files.sort();
    files
}

/// Whether `change` to the repository `fixture` is accepted; a rejected
/// one must leave the repository as it was once rolled back.
fn accepted(fixture: &Path, change: &Change) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    copy_tree(&fixture.join("repo"), &root);
    let before = files_of(&root);
    let checks = GuardConfig::parse(&std::fs::read_to_string(fixture.join("checks.toml")).unwrap()).unwrap();
    let rules = checks.compile(None).unwrap();
    let store = tempfile::tempdir().unwrap();
    let library = Arc::new(Library::open(LibraryConfig::new(store.path().join(".ucp"))).unwrap());
    let offer = ToolOffer {
        root: Some(root.clone()),
        guard: Some(GuardSetup::new(&rules, checks.checks.unwrap()).journaled(true).shared()),
        ..ToolOffer::documents(4000)
    };
    let connection = Connection::new(library, Arc::new(offer));
    for edit in &change.edit {
        let args = json!({"path": edit.path, "old_string": edit.old, "new_string": edit.new});
        tools::call(&connection, "edit", args.as_object().unwrap())
            .unwrap_or_else(|e| panic!("{}: the edit of {} does not apply: {e}", change.description, edit.path));
    }
    let verdict = guarded::finish(&connection, &change.description);
    if verdict.is_err() {
        guarded::rollback(&connection).unwrap();
        let after: Vec<(PathBuf, String)> =
            files_of(&root).into_iter().filter(|(p, _)| before.iter().any(|(b, _)| b == p)).collect();
        assert_eq!(after, before, "{}: rolled back to the repository as it was", change.description);
    }
    verdict
}

#[test]
fn gold_changes_pass_their_checks_and_corrupted_ones_do_not() {
    let set = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/patch-repos");
    let mut repositories: Vec<PathBuf> =
        std::fs::read_dir(&set).unwrap().flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    repositories.sort();
    assert!(repositories.len() >= 3, "at least three repositories");
    let (mut good, mut good_accepted, mut bad, mut bad_rejected, mut wrong) = (0, 0, 0, 0, Vec::new());
    for fixture in &repositories {
        let mut changes: Vec<PathBuf> =
            std::fs::read_dir(fixture.join("changes")).unwrap().flatten().map(|e| e.path()).collect();
        changes.sort();
        for file in changes {
            let change: Change = toml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
            let gold = file.file_stem().is_some_and(|s| s == "gold");
            let verdict = accepted(fixture, &change);
            let name = format!(
                "{}/{}",
                fixture.file_name().unwrap().to_string_lossy(),
                file.file_name().unwrap().to_string_lossy()
            );
            match (gold, &verdict) {
                (true, Ok(())) => good_accepted += 1,
                (false, Err(_)) => bad_rejected += 1,
                (true, Err(why)) => wrong.push(format!("{name}: the gold change was rejected: {why}")),
                (false, Ok(())) => wrong.push(format!("{name}: a corrupted change was accepted")),
            }
            if gold {
                good += 1;
            } else {
                bad += 1;
            }
        }
    }
    println!("patches: good accepted {good_accepted}/{good}, bad rejected {bad_rejected}/{bad}");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(good >= 3 && bad >= 9);
}
