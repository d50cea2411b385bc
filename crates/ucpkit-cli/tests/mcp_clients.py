"""Drives `ucp mcp` with the official Python MCP SDK (`pip install mcp`),
over stdio and over streamable HTTP.

Run by `cargo test -p ucpkit-cli --test mcp` when UCP_MCP_PYTHON names a
Python with the SDK (scripts/test sets one up); or by hand:

    UCP_BIN=target/debug/ucp UCP_CORPUS=docs python3 crates/ucpkit-cli/tests/mcp_clients.py
"""

import asyncio
import atexit
import contextlib
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
import unittest

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

UCP = os.environ["UCP_BIN"]
CORPUS = os.environ["UCP_CORPUS"]
TOKEN = "test-token-5f1c"
BLOCK_ID = re.compile(r"blk_[0-9a-f]{24}")


def text_of(result):
    return "".join(c.text for c in result.content if c.type == "text")


def scratch(prefix):
    """A new temporary folder, removed when the tests end."""
    path = tempfile.mkdtemp(prefix=prefix)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Store:
    """A store holding the corpus, indexed once for all tests."""

    dir = None

    @classmethod
    def path(cls):
        if cls.dir is None:
            cls.dir = scratch("ucpkit-mcp-py-")
            subprocess.run([UCP, "--store", cls.dir, "index", CORPUS, "--name", "corpus"], check=True,
                           capture_output=True)
        return cls.dir


class HttpServer:
    def __init__(self, *extra):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.process = subprocess.Popen(
            [UCP, "--store", Store.path(), "--root", scratch("ucpkit-mcp-http-root-"), "mcp", "--http",
             f"127.0.0.1:{self.port}", "--token", TOKEN, *extra],
            stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        assert "serving" in line, line

    def client(self, token=TOKEN):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx2.AsyncClient(headers=headers, timeout=60)

    @contextlib.asynccontextmanager
    async def session(self):
        """An initialized SDK session over a connection of its own."""
        async with self.client() as http:
            async with streamable_http_client(self.url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    yield session

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=20)


async def exercise(test, session):
    """The main flow every transport must serve."""
    init = await session.initialize()
    test.assertEqual(init.server_info.name, "ucp")
    tools = await session.list_tools()
    test.assertEqual(sorted(t.name for t in tools.tools),
                     ["ast_search", "bash", "context", "edit", "glob", "grep", "lsp_definition", "lsp_hover",
                      "lsp_references", "lsp_symbols", "memory_forget", "memory_recent", "memory_search",
                      "memory_store", "open", "plan", "read", "repo_map", "rules_for", "search", "skill_load",
                      "skills_list", "ucl", "write"])

    found = await session.call_tool("ucl", {"commands": 'SEARCH "context window budget" LIMIT=5'})
    test.assertFalse(found.is_error, text_of(found))
    first = BLOCK_ID.search(text_of(found)).group(0)

    script = f"GOTO {first}\nEXPAND {first} UP DEPTH=2\nCTX ADD {first}\nCTX RENDER FORMAT=MARKDOWN"
    ran = await session.call_tool("ucl", {"commands": script})
    out = text_of(ran)
    test.assertFalse(ran.is_error, out)
    test.assertIn("1: ", out)
    test.assertIn("3: CTX ADD", out)
    test.assertIn("§", out)  # the render, under a heading path

    failed = await session.call_tool("ucl", {"commands": "CTX STATS\nGOTO blk_000000000000000000000001"})
    test.assertTrue(failed.is_error)
    test.assertIn("line 2, column 1: GOTO", text_of(failed))
    bad = await session.call_tool("ucl", {"commands": "EXPAND"})
    test.assertTrue(bad.is_error)
    test.assertIn("line 1", text_of(bad).lower())

    resources = await session.list_resources()
    uris = [str(r.uri) for r in resources.resources]
    test.assertIn("ucp://corpus", uris)
    block_uri = next(u for u in uris if "/blk_" in u)
    read = await session.read_resource(block_uri)
    test.assertTrue(read.contents[0].text.startswith("§"), read.contents[0].text[:80])
    outline = await session.read_resource("ucp://corpus")
    test.assertIn(block_uri, outline.contents[0].text)

    context = await session.call_tool("context", {"question": "How does the context window stay within its budget?",
                                                  "budget": 600})
    test.assertFalse(context.is_error, text_of(context))
    test.assertIn("of 600 tokens", text_of(context))

    prompt = await session.get_prompt("ucl")
    test.assertIn("CTX RENDER", prompt.messages[0].content.text)


class StdioTest(unittest.IsolatedAsyncioTestCase):
    async def test_stdio_session(self):
        params = StdioServerParameters(command=UCP, args=["--store", Store.path(), "mcp"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await exercise(self, session)

    async def test_long_results_come_in_pages(self):
        params = StdioServerParameters(command=UCP, args=["--store", Store.path(), "mcp", "--max-result-tokens", "300"])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                first = await session.call_tool("ucl", {"commands": "FIND ROLE=paragraph"})
                self.assertIn("page 1 of", text_of(first))
                second = await session.call_tool("ucl", {"page": 2})
                self.assertIn("page 2 of", text_of(second))
                missing = await session.call_tool("ucl", {"page": 999})
                self.assertTrue(missing.is_error)


class CodingToolsTest(unittest.IsolatedAsyncioTestCase):
    """The coding tools over a workspace root, through the official client."""

    @contextlib.asynccontextmanager
    async def session(self, *extra):
        root = scratch("ucpkit-mcp-root-")
        os.makedirs(os.path.join(root, "src"))
        with open(os.path.join(root, "src", "lib.rs"), "w") as f:
            f.write("pub fn helper() -> u32 {\n    42\n}\n// helper again\n")
        with open(os.path.join(root, "win.txt"), "wb") as f:
            f.write(b"one\r\ntwo\r\n")
        with open(os.path.join(root, "blob.bin"), "wb") as f:
            f.write(b"helper\0\1")
        params = StdioServerParameters(command=UCP, args=["--store", Store.path(), "--root", root, "mcp", *extra])
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                yield session, root

    async def call(self, session, tool, args, error=False):
        result = await session.call_tool(tool, args)
        self.assertEqual(result.is_error, error, text_of(result))
        return text_of(result)

    async def test_the_tools_work_and_refuse_what_they_must(self):
        async with self.session() as (session, root):
            self.assertEqual(await self.call(session, "grep", {"pattern": "helper"}), "src/lib.rs\n")
            content = await self.call(session, "grep", {"pattern": "helper", "output_mode": "content", "-C": 0})
            self.assertEqual(content, "src/lib.rs\n1:pub fn helper() -> u32 {\n4:// helper again\n")
            self.assertEqual(await self.call(session, "glob", {"pattern": "**/*.rs"}), "src/lib.rs\n")
            found = await self.call(session, "ast_search", {"pattern": "pub fn $NAME() -> u32 { $$$ }", "lang": "rust"})
            self.assertTrue(found.startswith("src/lib.rs\n1-3: pub fn helper() -> u32 {\n"), found)
            self.assertIn("$NAME = helper", found)
            read = await self.call(session, "read", {"path": "src/lib.rs", "offset": 2, "limit": 1})
            self.assertTrue(read.startswith("     2\t    42\n"), read)
            self.assertIn("binary", await self.call(session, "read", {"path": "blob.bin"}, error=True))
            self.assertIn("outside the workspace", await self.call(session, "read", {"path": "../x"}, error=True))
            ambiguous = await self.call(session, "edit", {"path": "src/lib.rs", "old_string": "helper",
                                                          "new_string": "aid"}, error=True)
            self.assertIn("occurs 2 times (lines 1, 4)", ambiguous)
            await self.call(session, "edit", {"path": "win.txt", "old_string": "one\ntwo", "new_string": "1\n2"})
            with open(os.path.join(root, "win.txt"), "rb") as f:
                self.assertEqual(f.read(), b"1\r\n2\r\n")
            self.assertIn("created notes/a.md", await self.call(session, "write", {"path": "notes/a.md", "content": "hi\n"}))
            ran = await self.call(session, "bash", {"command": "cat notes/a.md; exit 4"})
            self.assertTrue(ran.startswith("hi\n[exit code 4,"), ran)
            slow = await self.call(session, "bash", {"command": "sleep 30 & echo $! > child.pid; sleep 30",
                                                     "timeout": 1})
            self.assertIn("timed out", slow)
            with open(os.path.join(root, "child.pid")) as f:
                child = int(f.read())
            time.sleep(0.2)
            self.assertFalse(alive(child), "the command's child survived its timeout")
            started = await self.call(session, "bash", {"command": "echo up; sleep 30", "background": True})
            job = int(re.search(r"job (\d+)", started).group(1))
            time.sleep(0.3)
            self.assertIn("up\n", await self.call(session, "bash", {"job": job}))
            self.assertIn("killed by signal 9", await self.call(session, "bash", {"job": job, "kill": True}))

    async def test_read_only_servers_offer_no_writing_tools(self):
        async with self.session("--read-only") as (session, root):
            names = sorted(t.name for t in (await session.list_tools()).tools)
            self.assertEqual(names, ["ast_search", "context", "glob", "grep", "memory_recent", "memory_search", "open",
                                     "plan", "read", "repo_map", "rules_for", "search", "skill_load", "skills_list",
                                     "ucl"])
            with self.assertRaises(Exception):
                await session.call_tool("write", {"path": "x.txt", "content": "x"})
            self.assertFalse(os.path.exists(os.path.join(root, "x.txt")))


def alive(pid):
    """Whether a process exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class HttpTest(unittest.IsolatedAsyncioTestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = HttpServer()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()

    async def test_http_session(self):
        async with self.server.client() as http:
            async with streamable_http_client(self.server.url, http_client=http) as (read, write):
                async with ClientSession(read, write) as session:
                    await exercise(self, session)

    async def test_requests_without_the_token_are_refused(self):
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        for token in [None, "wrong"]:
            async with self.server.client(token) as http:
                response = await http.post(self.server.url, json=body,
                                           headers={"Accept": "application/json, text/event-stream"})
                self.assertEqual(response.status_code, 401)
                self.assertEqual(response.json()["error"]["code"], -32001)

    async def test_each_client_has_its_own_session(self):
        async def window(commands):
            async with self.server.session() as session:
                found = await session.call_tool("ucl", {"commands": 'FIND ROLE=heading1'})
                ids = BLOCK_ID.findall(text_of(found))
                await session.call_tool("ucl", {"commands": commands(ids)})
                return text_of(await session.call_tool("ucl", {"commands": "CTX STATS"}))

        one, two = await asyncio.gather(window(lambda ids: f"CTX ADD {ids[0]}"),
                                        window(lambda ids: f"CTX ADD {ids[0]}\nCTX ADD {ids[1]}"))
        self.assertIn("1: 1 blocks", one)
        self.assertIn("1: 2 blocks", two)

    async def test_named_sessions_outlive_the_connection(self):
        async def run(commands):
            async with self.server.session() as session:
                return text_of(await session.call_tool("ucl", {"commands": commands, "session": "kept"}))

        found = await run("FIND ROLE=heading1")
        first = BLOCK_ID.search(found).group(0)
        await run(f"CTX CLEAR\nCTX ADD {first}")
        # The first connection has gone; the session comes back as it was.
        for _ in range(50):
            stats = await run("CTX STATS")
            if "in use" not in stats:
                break
            time.sleep(0.1)
        self.assertIn("1: 1 blocks", stats)


if __name__ == "__main__":
    unittest.main(verbosity=2)
