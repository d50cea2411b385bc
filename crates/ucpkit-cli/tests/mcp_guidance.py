"""Memory, rules, skills and tool discovery end to end, through `ucp mcp`
driven by the official Python MCP SDK over stdio.

Run by `cargo test -p ucpkit-cli --test mcp` when UCP_MCP_PYTHON names a
Python with the SDK (scripts/test sets one up), with UCP_MODEL naming an
embedding model when one was fetched (memories are then found by meaning);
or by hand:

    UCP_BIN=target/debug/ucp UCP_MODEL=~/.cache/ucp-models/minilm-l6-int8 \
        python3 crates/ucpkit-cli/tests/mcp_guidance.py
"""

import asyncio
import os
import tempfile
import unittest

from mcp import ClientSession, StdioServerParameters, stdio_client

UCP = os.environ["UCP_BIN"]
MODEL = os.environ.get("UCP_MODEL") or None

FINDING = "The payment webhook retries forever because the backoff cap is missing."
DISTRACTORS = [
    "Release builds strip debug symbols to keep the binary small.",
    "The team decided to keep SQLite as the embedded store.",
    "Documentation pages are generated from the markdown sources.",
    "Integration tests start a real language server.",
    "Logging uses structured fields instead of formatted strings.",
]


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


def write(root, path, text):
    path = os.path.join(root, path)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


class Workspace:
    """A store and a project folder with rules and a skill."""

    def __init__(self, test):
        # Both folders are removed when the test ends, passed or not.
        store = tempfile.TemporaryDirectory(prefix="ucpkit-guidance-store-")
        root = tempfile.TemporaryDirectory(prefix="ucpkit-guidance-root-")
        test.addCleanup(store.cleanup)
        test.addCleanup(root.cleanup)
        self.store, self.root = store.name, root.name
        write(self.root, "AGENTS.md", "Run the tests before every commit.\n")
        write(self.root, "README.md", "A project.\n")
        write(self.root, "billing/AGENTS.md", "Billing code never logs card numbers.\n")
        write(self.root, "billing/webhook.py", "def handle(event):\n    return event\n")
        write(self.root, "skills/refunds/SKILL.md",
              "---\nname: refunds\ndescription: Issue and audit customer refunds.\n---\n"
              "# Refunds\n\nPartial refunds: see [partial refund rules](references/partial.md).\n")
        write(self.root, "skills/refunds/references/partial.md", "A partial refund never exceeds the charge.\n")

    def server(self, *extra):
        args = ["--store", self.store, "--root", self.root]
        if MODEL:
            args += ["--model", MODEL]
        return StdioServerParameters(command=UCP, args=[*args, "mcp", "--create", *extra])


async def call(session, tool, **arguments):
    result = await session.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    return text_of(result)


class Guidance(unittest.TestCase):
    def test_memory_lasts_across_processes_and_is_found_by_meaning(self):
        workspace = Workspace(self)

        async def first_session():
            async with stdio_client(workspace.server()) as (read, write_):
                async with ClientSession(read, write_) as session:
                    await session.initialize()
                    stored = await call(session, "memory_store", content=FINDING, kind="finding", tags=["billing"])
                    self.assertIn("remembered as blk_", stored)
                    for note in DISTRACTORS:
                        await call(session, "memory_store", content=note, kind="finding")
                    await call(session, "memory_store", kind="handoff",
                               content="Handoff: the webhook fix needs a test for the retry cap.")
                    again = await call(session, "memory_store", content=FINDING.lower(), kind="finding")
                    self.assertIn("already remembered", again)

        async def second_session():
            async with stdio_client(workspace.server()) as (read, write_):
                async with ClientSession(read, write_) as session:
                    await session.initialize()
                    handoffs = await call(session, "memory_recent", kind="handoff")
                    self.assertIn("the webhook fix needs a test", handoffs)
                    if MODEL:
                        # No word in common with the finding: found by meaning.
                        found = await call(session, "memory_search", query="why do charge notifications loop endlessly",
                                           kind="finding", limit=3)
                    else:
                        found = await call(session, "memory_search", query="webhook retries", kind="finding", limit=3)
                    first = found.split("\n  ")[1] if "\n  " in found else found
                    self.assertTrue(first.startswith(FINDING), found)
                    tagged = await call(session, "memory_recent", tags=["billing"])
                    self.assertIn(FINDING, tagged)
                    self.assertNotIn(DISTRACTORS[0], tagged)

        asyncio.run(first_session())
        asyncio.run(second_session())

    def test_rules_and_skills_load_when_they_become_relevant(self):
        workspace = Workspace(self)

        async def run():
            async with stdio_client(workspace.server()) as (read, write_):
                async with ClientSession(read, write_) as session:
                    await session.initialize()
                    rules = await call(session, "rules_for")
                    self.assertIn("Run the tests before every commit.", rules)
                    self.assertNotIn("card numbers", rules)

                    # Nested rules arrive with the first file operation under their folder, once.
                    outside = await call(session, "read", path="README.md")
                    self.assertNotIn("card numbers", outside)
                    inside = await call(session, "read", path="billing/webhook.py")
                    self.assertIn("Billing code never logs card numbers.", inside)
                    again = await call(session, "read", path="billing/webhook.py")
                    self.assertNotIn("card numbers", again)

                    listed = await call(session, "skills_list")
                    self.assertIn("refunds: Issue and audit customer refunds.", listed)
                    plain = await call(session, "skill_load", name="refunds")
                    self.assertNotIn("never exceeds the charge", plain)
                    matched = await call(session, "skill_load", name="refunds", task="issue a partial refund")
                    self.assertIn("A partial refund never exceeds the charge.", matched)

        asyncio.run(run())

    def test_discovery_lists_a_few_tools_and_finds_the_rest(self):
        workspace = Workspace(self)

        async def run():
            async with stdio_client(workspace.server("--discover-tools")) as (read, write_):
                async with ClientSession(read, write_) as session:
                    await session.initialize()
                    tools = await session.list_tools()
                    self.assertEqual([t.name for t in tools.tools], ["ucl", "context", "search", "find_tools"])
                    found = await call(session, "find_tools", intent="remember a decision for later sessions")
                    self.assertIn('"memory_store"', found)
                    stored = await call(session, "memory_store", content="Use UTC everywhere.", kind="decision")
                    self.assertIn("remembered as", stored)

        asyncio.run(run())


if __name__ == "__main__":
    unittest.main(verbosity=2)
