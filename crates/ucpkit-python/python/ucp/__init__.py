"""UCP: the context engine for LLM agents.

Index documents and code into a store, then ask for the best context for a
question within a token budget, search, or drive an agent session in UCL::

    import ucp

    store = ucp.Store(".ucp")
    store.index("docs")
    context = store.context("How do I read a file?", budget=2000)
    print(context.text)

Every error is a ``ucp.UcpError`` with a stable ``.code``.
"""

from ._ucp import (
    BlockNotFound,
    Conflict,
    Context,
    ContextBlock,
    Document,
    Edited,
    IndexReport,
    InvalidArgument,
    NoDocument,
    NotPermitted,
    NothingFits,
    ParseError,
    Reply,
    SearchHit,
    Session,
    Store,
    Tools,
    UcpError,
    __version__,
)

__all__ = [
    "BlockNotFound",
    "Conflict",
    "Context",
    "ContextBlock",
    "Document",
    "Edited",
    "IndexReport",
    "InvalidArgument",
    "NoDocument",
    "NotPermitted",
    "NothingFits",
    "ParseError",
    "Reply",
    "SearchHit",
    "Session",
    "Store",
    "Tools",
    "UcpError",
    "__version__",
]
