"""The MCP agent tools end to end through `ucp mcp --agents`, driven by
the official Python MCP SDK over stdio: `task` runs a sub-agent on a real
local model (in the foreground and in the background), and `ask_user`
reaches the user through elicitation, or fails clearly for a client
without it.

Run by `cargo test -p ucpkit-cli --test agent` (scripts/test sets up the SDK
and the model); UCP_BIN, UCP_STORE (an indexed store) and UCP_LLM_URL (the
model server's /v1 URL) must be set.
"""

import asyncio
import json
import os
import unittest

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp import types

UCP = os.environ["UCP_BIN"]
STORE = os.environ["UCP_STORE"]
URL = os.environ["UCP_LLM_URL"]


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


def server():
    args = ["--store", STORE, "mcp", "--agents", "--base-url", URL, "--llm", "qwen"]
    return StdioServerParameters(command=UCP, args=args)


async def pick_second(context, params):
    assert len(params.requested_schema["properties"]["choice"]["enum"]) == 2
    return types.ElicitResult(action="accept", content={"choice": "Writable"})


async def decline(context, params):
    return types.ElicitResult(action="decline")


class AgentTools(unittest.TestCase):
    def run_client(self, body, elicitation=None):
        async def main():
            async with stdio_client(server()) as (read, write):
                async with ClientSession(read, write, elicitation_callback=elicitation) as session:
                    await session.initialize()
                    return await body(session)

        return asyncio.run(main())

    def test_a_sub_agent_runs_and_returns(self):
        async def body(session):
            names = [t.name for t in (await session.list_tools()).tools]
            self.assertIn("task", names)
            done = await session.call_tool(
                "task", {"type": "explore", "prompt": "How does a readable stream handle backpressure?"}
            )
            result = json.loads(text_of(done))
            self.assertEqual(result["status"], "done", result)
            self.assertGreaterEqual(result["steps"], 1)
            self.assertGreater(result["input_tokens"], 0)
            self.assertGreater(result["duration_ms"], 0)
            started = json.loads(text_of(await session.call_tool(
                "task", {"type": "explore", "prompt": "What does pipe() do?", "background": True})))
            self.assertEqual(started["status"], "running")
            polled = json.loads(text_of(await session.call_tool("task", {"id": started["id"], "wait_s": 300})))
            self.assertEqual(polled["status"], "done", polled)

        self.run_client(body)

    def test_ask_user_by_elicitation(self):
        question = {
            "question": "Which side of the stream?",
            "options": [{"label": "Readable", "description": "the source"}, {"label": "Writable"}],
        }

        async def chosen(session):
            result = await session.call_tool("ask_user", question)
            self.assertFalse(result.is_error, text_of(result))
            self.assertEqual(json.loads(text_of(result)), {"answer": {"choice": "Writable"}})

        self.run_client(chosen, elicitation=pick_second)

        async def declined(session):
            result = await session.call_tool("ask_user", question)
            self.assertTrue(result.is_error)
            self.assertIn("declined", text_of(result))

        self.run_client(declined, elicitation=decline)


if __name__ == "__main__":
    unittest.main()
