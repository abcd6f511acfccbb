"""A synchronous MCP client for tests: the official SDK's :class:`mcp.ClientSession` run in a
background event loop, over stdio (a real ``analogist mcp`` subprocess) or streamable HTTP."""

from __future__ import annotations

import concurrent.futures
import json
import queue
import sys
import threading
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp import ClientSession, StdioServerParameters, stdio_client

SERVER_FLAGS = ["--no-text-embedding", "--no-llm"]


# -- a synchronous facade over one client session (the session lives in its own thread) ----

class SyncClient:
    """Runs one :class:`ClientSession` in a background event loop; ``run(fn)`` awaits
    ``fn(session)`` there and returns its result."""

    def __init__(self, transport: Callable[[], AbstractAsyncContextManager[Any]]) -> None:
        self._transport = transport
        self._calls: queue.Queue[Any] = queue.Queue()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=anyio.run, args=(self._main,), daemon=True)
        self._thread.start()
        self._ready.wait(300)
        if self._error is not None:
            raise self._error
        assert self._ready.is_set(), "the MCP session did not start"

    async def _main(self) -> None:
        try:
            async with self._transport() as (r, w), ClientSession(r, w) as s:
                self.init = await s.initialize()
                self._ready.set()
                while True:
                    item = await anyio.to_thread.run_sync(self._calls.get)
                    if item is None:
                        break
                    fn, fut = item
                    try:
                        fut.set_result(await fn(s))
                    except Exception as e:  # noqa: BLE001 — handed to the caller
                        fut.set_exception(e)
        except BaseException as e:  # noqa: BLE001
            self._error = e
            self._ready.set()

    def run(self, fn: Callable[[ClientSession], Any]) -> Any:
        fut: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._calls.put((fn, fut))
        return fut.result(timeout=600)

    def call(self, name: str, args: dict[str, Any]) -> Any:
        return self.run(lambda s: s.call_tool(name, args))

    def ok(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        res = self.call(name, args)
        assert not res.is_error, res.content[0].text
        data = json.loads(res.content[0].text)
        assert res.structured_content == data
        return data

    def err(self, name: str, args: dict[str, Any]) -> str:
        res = self.call(name, args)
        assert res.is_error, f"{name} should have failed"
        return res.content[0].text

    def read(self, uri: str) -> dict[str, Any]:
        res = self.run(lambda s: s.read_resource(uri))
        assert res.contents[0].mime_type == "application/json"
        return json.loads(res.contents[0].text)

    def close(self) -> None:
        self._calls.put(None)
        self._thread.join(120)


def stdio_transport(store: Path, namespace: str, log: Path) -> Callable[[], Any]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "analogist", "mcp", "--store", str(store), "--namespace", namespace,
              *SERVER_FLAGS])

    def open_() -> Any:
        return stdio_client(params, errlog=log.open("a"))
    return open_
