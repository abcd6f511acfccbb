"""``analogist mcp``: the analogical memory as an MCP server for agents.

Built on the official Python ``mcp`` SDK (its high-level :class:`mcp.server.mcpserver.MCPServer`),
served over stdio or streamable HTTP. One server process serves **one namespace** of one store,
fixed at start: no tool or resource takes a namespace argument, every read and write names the
server's namespace, and an episode id from another namespace is "not found".

Tools (each a thin call of the application layer, :class:`analogist.app.Analogist`, which the CLI
and the HTTP API call too):

* ``remember_episode`` — store a Signature, a foresight Event (stored as its kind-``event``
  Signature), or text written into a Signature by the offline encoder;
* ``find_analogy`` — retrieval by structure over the namespace, each analogue judged, plus a
  decoy probe (:meth:`Analogist.find`);
* ``map_cases`` — two cases mapped and judged (:meth:`Analogist.map`);
* ``foresight_brief`` — historical analogies for an unfolding event (:meth:`Analogist.brief`);
* ``check_analogy`` — the analogy safeguard on a debate turn or plain text
  (:meth:`Analogist.check`);
* ``list_episodes`` and ``delete_episode`` — the namespace's episodes, a page at a time, and
  deleting one;
* ``record_outcome`` — what an analogy led to (:meth:`Analogist.record_outcome`), the data
  ``analogist triggers fit`` and ``analogist ledger`` read.

Arguments are typed: a Signature argument's JSON Schema is the one ``analogist schema`` prints
(:func:`analogist.app.json_schema`), carried in the tool's ``inputSchema`` under ``$defs``;
likewise Event and debate-turn arguments. Episode ids may be given as the episode id (text) or
the row id (an integer, or its digits as text) everywhere.

Annotations: ``readOnlyHint`` is true on ``map_cases``, ``foresight_brief``, ``check_analogy``
and ``list_episodes``. ``find_analogy`` appends one row to the namespace's analogy log (the
``analogist://reports/log`` resource), so it is read-only only when the server runs with
``log_finds=False``; the hint follows that setting. ``remember_episode`` and ``record_outcome``
write (not idempotent: storing the same episode id twice is refused, each outcome is a new row);
``delete_episode`` is the one destructive tool.

Resources: ``analogist://episodes`` (the list), ``analogist://episodes/{episode_id}`` (one
episode: row id or episode id), ``analogist://reports/log`` (the latest analogy attempts),
``analogist://reports/last-brief`` (the last foresight brief of this server process).

Bad input is a tool error (``isError``) of one line naming the argument and what was expected —
an unknown argument names the valid ones, a wrong type names the argument — and the store is
unchanged (every write is one transaction). Over stdio a line that is not a JSON-RPC message gets
a JSON-RPC error reply (``-32700`` parse error, ``-32600`` invalid request; with the request's id
when one can be read from the line) instead of silence.

Threading: the SDK runs synchronous tools on worker threads; the application layer gives each
thread its own store connection, and one lock serialises the tool bodies (the encoder, the
retriever caches and the last-brief slot are shared).
"""

from analogist.mcp.body import (
    BRIEF_URI,
    EPISODE_URI,
    EPISODES_URI,
    LIST_LIMIT,
    LOG_URI,
    AnalogistMCP,
    MCPParams,
)
from analogist.mcp.serve import bad_line_reply, client_config, run_mcp
from analogist.mcp.tools import build_server, tool_input_schemas

__all__ = ["MCPParams", "AnalogistMCP", "build_server", "run_mcp", "client_config",
           "tool_input_schemas", "bad_line_reply", "BRIEF_URI", "EPISODE_URI", "EPISODES_URI",
           "LIST_LIMIT", "LOG_URI"]
