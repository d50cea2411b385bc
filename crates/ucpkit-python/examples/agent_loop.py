"""UCP as the retrieval step of a Python agent loop.

The loop asks UCP for the best context within a token budget, builds the
prompt it would send to a model, and reads the model's next request for
more context. There is no network here: the "model" is a stand-in that asks
one follow-up question, and the prompts are printed instead of sent.

    python examples/agent_loop.py --store /tmp/guide/.ucp --corpus docs
"""

import argparse

import ucp

PROMPT = """You answer questions about the documents below. Quote them.

{context}

Question: {question}
"""


def fake_model(prompt: str, turn: int) -> str:
    """Stands in for an LLM call: asks for one more thing, then answers."""
    if turn == 0:
        return "NEED: how are blocks counted in tokens?"
    return "ANSWER: (the model's answer would be here)"


def agent(store: ucp.Store, question: str, budget: int) -> str:
    asked = question
    for turn in range(3):
        context = store.context(asked, budget=budget)
        sources = sorted({block.file for block in context.blocks if block.file})
        print(f"--- turn {turn}: {context.tokens} of {budget} tokens from {', '.join(sources)}")
        prompt = PROMPT.format(context=context.text, question=question)
        print(prompt)
        reply = fake_model(prompt, turn)
        if reply.startswith("ANSWER:"):
            return reply.removeprefix("ANSWER:").strip()
        asked = reply.removeprefix("NEED:").strip()
    return "(no answer within three turns)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", default=".ucp")
    parser.add_argument("--corpus", help="index this folder first")
    parser.add_argument("--budget", type=int, default=1500)
    parser.add_argument("question", nargs="?", default="How does the context window stay within its token budget?")
    args = parser.parse_args()
    store = ucp.Store(args.store)
    if args.corpus:
        store.index(args.corpus)
    try:
        print(agent(store, args.question, args.budget))
    except ucp.UcpError as error:
        raise SystemExit(f"ucp: {error} [{error.code}]")


if __name__ == "__main__":
    main()
