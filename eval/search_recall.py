#!/usr/bin/env python3
"""Recall@k of `ucp search` against the gold places of a question set.

For every question, runs `ucp search --json` in each mode and checks the
top k results against its gold entries (file + nearest heading):

  file recall     a gold entry counts as found when a result comes from its file
  section recall  ... when a result lies under its heading (heading path)

Both are averaged over gold entries of a question, then over questions.

  python3 eval/search_recall.py --ucp target/release/ucp --store DIR --doc NAME \
      ../shared/eval/questions.jsonl [--k 10] [--modes bm25,vector,hybrid] [--model DIR]
"""
import argparse
import json
import subprocess
import sys


def search(args, query, mode):
    cmd = [args.ucp, "--store", args.store, "--doc", args.doc, "--json", "search", query,
           "--limit", str(args.k), "--mode", mode]
    if args.model:
        cmd[1:1] = ["--model", args.model]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["results"]


def found(gold, results):
    in_file = [r for r in results if r.get("file") == gold["file"]]
    in_section = [r for r in in_file if gold["heading"] in r["heading_path"]]
    return bool(in_file), bool(in_section)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("questions")
    p.add_argument("--ucp", default="ucp")
    p.add_argument("--store", required=True)
    p.add_argument("--doc", required=True)
    p.add_argument("--model")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--modes", default="bm25,vector,hybrid")
    args = p.parse_args()
    questions = [json.loads(line) for line in open(args.questions) if line.strip()]
    print(f"recall@{args.k} on {len(questions)} questions")
    print(f"{'mode':8} {'file':>7} {'section':>8}   by kind (section)")
    for mode in args.modes.split(","):
        files, sections, kinds = [], [], {}
        for q in questions:
            results = search(args, q["question"], mode)
            hits = [found(g, results) for g in q["gold"]]
            f = sum(h[0] for h in hits) / len(hits)
            s = sum(h[1] for h in hits) / len(hits)
            files.append(f)
            sections.append(s)
            kinds.setdefault(q["kind"], []).append(s)
        by_kind = "  ".join(f"{k} {sum(v) / len(v):.3f}" for k, v in sorted(kinds.items()))
        print(f"{mode:8} {sum(files) / len(files):7.3f} {sum(sections) / len(sections):8.3f}   {by_kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
