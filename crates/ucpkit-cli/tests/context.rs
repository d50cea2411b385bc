//! `ucp context` and `ucp eval` end to end through the binary.

mod common;

use std::path::Path;

use common::{assert_user_error, excerpt, indexed, stderr, stdout_json as json, ucp};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn context_over_a_corpus_in_a_fresh_directory() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = dir.path().join("docs");
    copy_dir(&excerpt(), &corpus);
    let store = dir.path().join(".ucp");
    let question = "In the node inspect debugger, how do I step out of the current function?";
    let args = ["context", "--corpus", corpus.to_str().unwrap(), question, "--budget", "800"];

    let first = ucp(&store, &args);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(stderr(&first).contains("ucp: indexed"), "{}", stderr(&first));
    let text = String::from_utf8(first.stdout).unwrap();
    assert!(text.contains("§ debugger.md > Debugger"), "{text}");
    assert!(text.contains("`out`, `o`: Step out"), "{text}");

    // Unchanged: the stored document and its index are reused.
    let again = ucp(&store, &args);
    assert!(again.status.success());
    assert!(!stderr(&again).contains("indexed") && !stderr(&again).contains("rebuilt"), "{}", stderr(&again));
    assert_eq!(String::from_utf8(again.stdout).unwrap(), text, "same question, same context");

    // Changed: indexed again, and the change is searchable.
    let extra = "# Tuning\n\nSet the frobnication level with `--frobnicate=7` for faster startup.\n";
    std::fs::write(corpus.join("tuning.md"), extra).unwrap();
    let changed =
        ucp(&store, &["context", "--corpus", corpus.to_str().unwrap(), "frobnication level", "--budget", "300"]);
    assert!(stderr(&changed).contains("ucp: indexed"), "{}", stderr(&changed));
    assert!(String::from_utf8(changed.stdout).unwrap().contains("`--frobnicate=7`"));
}

#[test]
fn json_lists_every_block_with_its_source_and_the_total_within_budget() {
    let (_dir, store) = indexed();
    for (budget, format) in [(200, "markdown"), (700, "default"), (1500, "short_ids")] {
        let out = json(&ucp(
            &store,
            &["context", "querystring parse maxKeys", "--budget", &budget.to_string(), "--format", format, "--json"],
        ));
        let context = &out["context"];
        let tokens = context["tokens"].as_u64().unwrap() as usize;
        assert!(tokens <= budget && tokens > 0, "{format}: {tokens} of {budget}");
        assert_eq!(context["budget"], budget);
        let blocks = context["blocks"].as_array().unwrap();
        assert!(!blocks.is_empty());
        for block in blocks {
            assert!(block["id"].as_str().unwrap().starts_with("blk_"));
            assert!(block["file"].as_str().unwrap().ends_with(".md"), "{block}");
            let lines = block["lines"].as_array().unwrap();
            assert!(lines[0].as_u64().unwrap() <= lines[1].as_u64().unwrap());
            let relevance = block["relevance"].as_f64().unwrap();
            assert!((0.0..=1.0).contains(&relevance));
            assert!(["full", "structure_only"].contains(&block["representation"].as_str().unwrap()), "{block}");
            assert!(block["tokens"].as_u64().unwrap() > 0);
        }
        assert!(blocks.iter().any(|b| b["file"] == "querystring.md"));
        let text = context["text"].as_str().unwrap();
        assert_eq!(text.contains("[blk_"), format == "default", "{format}");
    }
}

#[test]
fn context_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join(".ucp");
    assert_user_error(&ucp(&store, &["context", "anything"]), "store");
    let missing = dir.path().join("nowhere");
    assert_user_error(&ucp(&store, &["context", "--corpus", missing.to_str().unwrap(), "anything"]), "nowhere");
    let (_dir, store) = indexed();
    let out = ucp(&store, &["context", "anything", "--format", "yaml"]);
    assert!(!out.status.success());
}

const QUESTIONS: &str = r#"{"id": "q1", "question": "How do I step out of the current function in the debugger?", "answers": ["`out`, `o`: Step out"], "gold": [{"file": "debugger.md", "heading": "Stepping"}], "kind": "fact"}
{"id": "q2", "question": "Which punycode function converts a Unicode domain to ASCII?", "answers": ["punycode.toASCII(domain)"], "gold": [{"file": "punycode.md", "heading": "`punycode.toASCII(domain)`"}], "kind": "fact"}
{"id": "q3", "question": "How do I make corepack work without network access?", "answers": ["[`corepack prepare`][] command", "The `prepare` command has [various flags][]"], "gold": [{"file": "corepack.md", "heading": "Offline workflow"}], "kind": "multi"}
"#;

#[test]
fn eval_reports_recall_for_the_engine_and_the_baselines() {
    let (dir, store) = indexed();
    let questions = dir.path().join("questions.jsonl");
    std::fs::write(&questions, QUESTIONS).unwrap();
    let report = json(&ucp(&store, &["eval", questions.to_str().unwrap(), "--budget", "400,1500", "--json"]));
    assert_eq!(report["questions"], 3);
    assert_eq!(report["tokenizer"], "o200k_base");
    let rows = report["rows"].as_array().unwrap();
    let systems: Vec<&str> = rows.iter().map(|r| r["system"].as_str().unwrap()).collect();
    assert_eq!(systems.len(), 6, "three systems at two budgets: {systems:?}");
    assert!(systems.contains(&"ucp context") && systems.contains(&"flat bm25 chunks"));
    for row in rows {
        let budget = row["budget"].as_u64().unwrap();
        assert!(row["max_tokens"].as_u64().unwrap() <= budget);
        for key in ["all", "any", "gold_file"] {
            assert!((0.0..=1.0).contains(&row[key].as_f64().unwrap()), "{key}: {row}");
        }
        assert!(row["all"].as_f64() <= row["any"].as_f64());
        assert_eq!(row["kinds"]["fact"]["questions"], 2);
    }
    let ours = rows.iter().find(|r| r["system"] == "ucp context" && r["budget"] == 1500).unwrap();
    assert!(ours["all"].as_f64().unwrap() >= 2.0 / 3.0, "{ours}");
    assert_eq!(report["outcomes"].as_array().unwrap().len(), 3 * 2 * 3);

    let table = ucp(&store, &["eval", questions.to_str().unwrap(), "--budget", "1000"]);
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.contains("ucp context") && table.contains("flat bm25 chunks") && table.contains("ALL"), "{table}");
    assert!(table.contains("3 questions; tokens counted with o200k_base"), "{table}");
}

#[test]
fn eval_rejects_bad_input_clearly() {
    let (dir, store) = indexed();
    let bad = dir.path().join("bad.jsonl");
    std::fs::write(
        &bad,
        format!("{}{{\"id\": \"x\", \"question\": \"q\"}}\n", QUESTIONS.lines().next().unwrap().to_owned() + "\n"),
    )
    .unwrap();
    assert_user_error(&ucp(&store, &["eval", bad.to_str().unwrap()]), "line 2");
    let questions = dir.path().join("questions.jsonl");
    std::fs::write(&questions, QUESTIONS).unwrap();
    common::assert_usage_error(&ucp(&store, &["eval", questions.to_str().unwrap(), "--budget", "0"]), "--budget");
    let missing = dir.path().join("missing.jsonl");
    assert_user_error(&ucp(&store, &["eval", missing.to_str().unwrap()]), "missing.jsonl");
}

#[test]
fn one_context_over_several_documents_and_a_conversation() {
    let (dir, store) = indexed();
    let notes = dir.path().join("notes.md");
    std::fs::write(&notes, "# Garden\n\nTomatoes need staking once they reach knee height.\n").unwrap();
    assert!(ucp(&store, &["index", notes.to_str().unwrap(), "--name", "notes"]).status.success());
    let chat = dir.path().join("chat.md");
    std::fs::write(&chat, "# Chat\n\n## Session 1 (9 May, 2023)\n\nAna: I staked the tomatoes on Sunday.\n").unwrap();
    let imported = ucp(&store, &["memory", "import", chat.to_str().unwrap()]);
    assert!(stderr(&imported).is_empty(), "{}", stderr(&imported));
    assert_eq!(String::from_utf8_lossy(&imported.stdout), "stored 1 memories, skipped 0 already there\n");

    let question = "When were the tomatoes staked?";
    let out = json(&ucp(&store, &["--json", "context", question, "--all", "--memory", "--budget", "300"]));
    assert_eq!(out["document"], serde_json::json!(["node", "notes", "memory"]));
    let context = &out["context"];
    let text = context["text"].as_str().unwrap();
    assert!(text.contains("§ memory > Session 1 (9 May, 2023)\n\nAna: I staked the tomatoes on Sunday.\n"), "{text}");
    assert!(text.contains("§ notes > Garden\n\nTomatoes need staking"), "{text}");
    assert!(context["tokens"].as_u64().unwrap() <= 300);
    let documents: Vec<&str> =
        context["blocks"].as_array().unwrap().iter().map(|b| b["document"].as_str().unwrap()).collect();
    assert!(documents.contains(&"memory") && documents.contains(&"notes"), "{documents:?}");

    // Named documents only: the memories stay out.
    let out =
        json(&ucp(&store, &["--json", "--doc", "notes", "--doc", "node", "context", question, "--budget", "300"]));
    assert!(!out["context"]["text"].as_str().unwrap().contains("Ana:"));

    // Only `ucp context` takes several documents; bad names are refused.
    assert_user_error(&ucp(&store, &["--doc", "notes", "--doc", "node", "search", "tomatoes"]), "only `ucp context`");
    assert_user_error(&ucp(&store, &["--doc", "nowhere", "--doc", "node", "context", question]), "nowhere");
    assert_user_error(&ucp(&store, &["context", question, "--memory=a/b"]), "namespace");
    // A bare --memory never takes the question as its namespace.
    let out = json(&ucp(&store, &["--json", "context", "--memory", question, "--budget", "200"]));
    assert_eq!(out["document"], "memory");
}
