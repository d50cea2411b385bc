"""An MCP server (the official Python SDK) whose tool list changes: `grow`
adds the tool `grown` and tells the client so (tools/list_changed)."""

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("changing")


@server.tool()
async def grow(ctx: Context) -> str:
    """Adds the tool `grown`."""

    def grown() -> str:
        """A tool that was not there at first."""
        return "grown"

    server.add_tool(grown)
    await ctx.session.send_tool_list_changed()
    return "added"


server.run()
