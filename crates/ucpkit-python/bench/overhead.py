"""What the binding adds to a context: wall time of `Store.context` from
Python against the engine's own time for the same call (`Context.millis`,
measured in Rust around the orchestrator), over a question file.

    python bench/overhead.py STORE DOC QUESTIONS.jsonl [--budget 2000]
"""

import argparse
import json
import statistics
import time

import ucp


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("store")
    parser.add_argument("doc")
    parser.add_argument("questions")
    parser.add_argument("--budget", type=int, default=2000)
    args = parser.parse_args()
    store = ucp.Store(args.store, create=False)
    questions = [json.loads(line)["question"] for line in open(args.questions)]
    store.context(questions[0], doc=args.doc, budget=args.budget)  # loads the document
    wall, engine = [], []
    for question in questions:
        started = time.perf_counter()
        context = store.context(question, doc=args.doc, budget=args.budget)
        wall.append((time.perf_counter() - started) * 1000)
        engine.append(context.millis)
    overhead = [w - e for w, e in zip(wall, engine)]
    print(
        f"{len(questions)} questions at {args.budget} tokens: Store.context p50 {statistics.median(wall):.2f} ms, "
        f"engine p50 {statistics.median(engine):.2f} ms, binding overhead p50 {statistics.median(overhead):.2f} ms"
    )


if __name__ == "__main__":
    main()
