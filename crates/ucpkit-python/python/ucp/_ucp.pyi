"""Type stubs of the compiled module (re-exported by ``ucp``)."""

import os
from typing import Any, Dict, List, Literal, Optional, Sequence, Union

__version__: str

Format = Literal["markdown", "default", "short_ids"]
StrPath = Union[str, "os.PathLike[str]"]

class UcpError(Exception):
    """Any UCP error; ``code`` is its stable, machine-readable code."""

    code: str

class BlockNotFound(UcpError):
    """A block id or label that the document does not hold."""

class ParseError(UcpError):
    """UCL that does not parse; ``line`` and ``column`` (1-based) place it."""

    line: int
    column: int

class NoDocument(UcpError):
    """No store, or no document of that name, or none chosen among several."""

class NothingFits(UcpError):
    """Blocks match the question, but none fits in the budget."""

class Conflict(UcpError):
    """Another writer changed the document or session first; nothing was written."""

class InvalidArgument(UcpError):
    """An argument out of its range or of the wrong form."""

class NotPermitted(UcpError):
    """A change refused (read-only, outside the allowed folders, a tool's jail)."""

class Edited(UcpError):
    """Indexing would replace edits made since the last index (pass ``force=True``)."""

class Document:
    """A stored document."""

    name: str
    title: Optional[str]
    blocks: int
    tokens: int
    edges: int

class IndexReport:
    """What ``Store.index`` did."""

    name: str
    files: int
    blocks: int
    tokens: int
    links: int
    changed: bool
    seconds: float
    warnings: list[str]

class ContextBlock:
    """One block of a context."""

    id: str
    document: Optional[str]
    role: Optional[str]
    file: Optional[str]
    lines: Optional[tuple[int, int]]
    heading_path: list[str]
    occasion: Optional[str]
    symbol: Optional[str]
    relevance: float
    representation: str
    tokens: int

class Context:
    """A context built for a question (``str(context)`` is its text)."""

    text: str
    tokens: int
    budget: int
    blocks: list[ContextBlock]
    sections: int
    millis: float

class SearchHit:
    """One search hit."""

    id: str
    score: float
    match_score: float
    role: Optional[str]
    file: Optional[str]
    lines: Optional[tuple[int, int]]
    heading_path: list[str]
    occasion: Optional[str]
    symbol: Optional[str]
    preview: str
    tokens: int

class Reply:
    """What one UCL command answered (``str(reply)`` is its text)."""

    line: int
    command: str
    text: str
    data: Any
    warnings: list[str]

class Session:
    """An agent session: a cursor, a context window under a token budget,
    and the UCL commands to move, look, search, curate and edit.

    A failed command raises its error (with ``line``, ``column`` and the
    ``replies`` of the commands before it); the script's edits are undone
    back to its last COMMIT, or to before it."""

    @property
    def name(self) -> Optional[str]: ...
    def run(self, ucl: str) -> list[Reply]: ...
    def render(self, format: Format = "markdown") -> str: ...
    def stats(self) -> dict[str, Any]: ...
    def close(self) -> None: ...
    def __enter__(self) -> "Session": ...
    def __exit__(self, kind: Any, value: Any, traceback: Any) -> bool: ...

class Store:
    """A UCP store (a ``.ucp`` directory: SQLite database and search indexes)."""

    def __init__(self, path: StrPath = ".ucp", *, create: bool = True, model: Optional[StrPath] = None) -> None: ...
    @property
    def path(self) -> "os.PathLike[str]": ...
    def documents(self) -> list[Document]: ...
    def index(
        self, path: Union[StrPath, Sequence[StrPath]], *, name: Optional[str] = None, force: bool = False
    ) -> IndexReport: ...
    def context(
        self,
        question: str,
        *,
        doc: Optional[str] = None,
        budget: int = 4000,
        format: Format = "markdown",
        code: bool = False,
        docs: Optional[Sequence[str]] = None,
        all: bool = False,
        memory: bool = False,
        namespace: Optional[str] = None,
    ) -> Context: ...
    def search(
        self, query: str, *, doc: Optional[str] = None, limit: int = 10, roles: Optional[Sequence[str]] = None
    ) -> list[SearchHit]: ...
    def map(
        self,
        question: Optional[str] = None,
        *,
        doc: Optional[str] = None,
        files: Optional[Sequence[str]] = None,
        budget: int = 1024,
    ) -> str: ...
    def session(
        self,
        name: Optional[str] = None,
        *,
        doc: Optional[str] = None,
        budget: Optional[int] = None,
        task: Optional[str] = None,
    ) -> Session: ...
    def remove(self, name: str) -> bool: ...
    def rename(self, old: str, new: str) -> None: ...

class Tools:
    """UCP's tools for agents, jailed to ``root``, through the tool registry.

    Without ``store``, the coding tools; with it, every tool an MCP client
    of that store is offered (documents, memory, rules, skills, files).
    """

    def __init__(
        self,
        root: StrPath,
        *,
        read_only: bool = False,
        sandbox: bool = False,
        pass_env: Sequence[str] = (),
        store: Optional["Store"] = None,
    ) -> None: ...
    def definitions(self) -> List[Dict[str, Any]]: ...
    def call(self, name: str, arguments: Optional[Dict[str, Any]] = None) -> str: ...
    def grep(
        self,
        pattern: str,
        path: Optional[str] = None,
        *,
        glob: Optional[Sequence[str]] = None,
        case_insensitive: bool = False,
        output_mode: Literal["files_with_matches", "content", "count"] = "files_with_matches",
        context: int = 0,
        multiline: bool = False,
        head_limit: int = 100,
        offset: int = 0,
    ) -> str: ...
    def glob(self, pattern: str, path: Optional[str] = None, *, head_limit: int = 100, offset: int = 0) -> str: ...
    def read(self, path: str, offset: Optional[int] = None, limit: Optional[int] = None) -> str: ...
    def write(self, path: str, content: str) -> str: ...
    def edit(self, path: str, old_string: str, new_string: str, *, replace_all: bool = False) -> str: ...
    def bash(
        self, command: str, *, cwd: Optional[str] = None, timeout: Optional[float] = None, background: bool = False
    ) -> str: ...
    def bash_job(self, job: int, *, kill: bool = False) -> str: ...
    def ast_search(
        self, pattern: str, path: Optional[str] = None, *, lang: Optional[str] = None, head_limit: int = 100, offset: int = 0
    ) -> str: ...
