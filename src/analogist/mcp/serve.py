"""Serving: stdio with parse-error replies, streamable HTTP, and the client configuration."""

from __future__ import annotations

import io
import json
import re
import sys
from pathlib import Path
from typing import Any

import anyio
from pydantic import ValidationError

from analogist.errors import AnalogistError
from analogist.mcp.body import MCPParams
from analogist.mcp.tools import build_server

# -- stdio with parse-error replies ------------------------------------------------------------

_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?')


def _request_id(line: str) -> int | str | None:
    """The top-level ``"id"`` of a JSON-RPC line that may not parse (None when none is seen);
    a scan over tokens, no recursion."""
    depth = 0
    prev: list[str] = []
    for m in _TOKEN.finditer(line):
        t = m.group()
        if t in "[{":
            depth += 1
        elif t in "]}":
            depth -= 1
        elif depth == 1 and len(prev) >= 2 and prev[-1] == ":" and prev[-2] == '"id"' \
                and t not in ":,":
            if t.startswith('"'):
                return str(json.loads(t))[:200]
            return int(t) if re.fullmatch(r"-?\d{1,18}", t) else None
        prev = (prev + [t])[-2:]
    return None


def bad_line_reply(line: str) -> dict[str, Any] | None:
    """The JSON-RPC error reply to a stdio line that is not a JSON-RPC message (None when it is
    one): ``-32700`` when it is not JSON this server can read, ``-32600`` when it is JSON but
    not a request, notification or response."""
    import mcp_types as types  # the MCP SDK, on use

    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return None
    except ValidationError as e:
        errs = e.errors()
        invalid_json = any(x.get("type") == "json_invalid" for x in errs)
        detail = " ".join(str(errs[0].get("msg", "")).split())[:200] if errs else ""
    if invalid_json:
        code, msg = -32700, "Parse error: the line is not valid JSON"
        if "recursion" in detail.lower():
            msg = "Parse error: the line's JSON is nested too deeply"
    else:
        code, msg = -32600, "Invalid Request: not a JSON-RPC 2.0 request, notification or response"
    return {"jsonrpc": "2.0", "id": _request_id(line),
            "error": {"code": code, "message": msg + (f" ({detail})" if detail else "")}}


class _CheckedLines:
    """stdin's lines for the SDK's stdio reader; a line that is not a JSON-RPC message is
    answered here with an error reply (the SDK would drop it silently) and not passed on."""

    def __init__(self, inner: Any) -> None:
        self._lines = inner.__aiter__()
        self.write: Any = None
        self.ready = anyio.Event()

    def __aiter__(self) -> _CheckedLines:
        return self

    async def __anext__(self) -> str:
        import mcp_types as types  # the MCP SDK, on use
        from mcp.shared.message import SessionMessage

        while True:
            line = await self._lines.__anext__()
            if not line.strip():
                continue
            reply = bad_line_reply(line)
            if reply is None:
                return str(line)
            await self.ready.wait()
            msg = types.jsonrpc_message_adapter.validate_python(reply)
            await self.write.send(SessionMessage(msg))


async def _serve_stdio(server: Any) -> None:
    from mcp.server.stdio import stdio_server  # the MCP SDK, on use

    text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    lines = _CheckedLines(anyio.wrap_file(text))
    async with stdio_server(stdin=lines) as (read_stream, write_stream):  # type: ignore[arg-type]
        lines.write = write_stream
        lines.ready.set()
        # the SDK's own run_stdio_async does exactly this, over its unchecked reader
        low = server._lowlevel_server
        await low.run(read_stream, write_stream, low.create_initialization_options())


def run_mcp(store: str | Path, namespace: str, *, transport: str = "stdio",
            host: str = "127.0.0.1", port: int = 8765, params: MCPParams | None = None) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (http)."""
    if transport not in ("stdio", "http"):
        raise AnalogistError(f"transport must be stdio or http, got {transport!r}",
                             field="transport")
    if not 0 < port < 65536:
        raise AnalogistError(f"port must be 1-65535, got {port}", field="port")
    server, body = build_server(store, namespace, params)
    try:
        if transport == "stdio":
            anyio.run(_serve_stdio, server)
        else:
            server.run("streamable-http", host=host, port=port)
    finally:
        body.close()


def client_config(store: str | Path, namespace: str) -> dict[str, Any]:
    """The ``mcpServers`` entry that adds this server to an MCP client (Claude Desktop's
    ``claude_desktop_config.json``, an editor's ``mcp.json``)."""
    return {"mcpServers": {f"analogist-{namespace}": {
        "command": "analogist",
        "args": ["mcp", "--store", str(store), "--namespace", namespace]}}}
