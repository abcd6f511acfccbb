"""The service commands: ``serve`` (HTTP API), ``keys`` and ``mcp``."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from analogist.cli.base import (
    STORE_HELP,
    _fail,
    app,
    default_store_path,
)
from analogist.errors import AnalogistError

# -- issue 9 (A): the HTTP API and its keys (appended block) -------------------------------

@app.command("serve")
def serve_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    host: str = typer.Option("127.0.0.1", "--host", help="Interface to listen on."),
    port: int = typer.Option(8765, "--port", min=1, max=65535, help="TCP port."),
    max_body: int = typer.Option(1_000_000, "--max-body", min=1,
                                 help="Largest request body in bytes (413 above)."),
    rate: float = typer.Option(600.0, "--rate", help="Requests per minute per API key (429 "
                                                     "above); 0 turns the limit off."),
    workers: str = typer.Option("1", "--workers", help="Worker processes serving the store "
                                "on the one port (1 to 64), or 'auto' for one per core; each "
                                "keeps its own metrics, rate limits and heavy-request lane."),
) -> None:
    """Serve the HTTP API (OpenAPI at /docs) over the store; keys from 'analogist keys add'."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.server import serve
    from analogist.service.workers import parse_workers

    try:
        count = parse_workers(workers)
        path = store or default_store_path()
        typer.echo(f"analogist API on http://{host}:{port} (store {path}; docs at /docs"
                   f"{f'; {count} workers' if count > 1 else ''})", err=True)
        status = serve(path, host=host, port=port, max_body_bytes=max_body,
                       rate_per_minute=rate, workers=count)
    except AnalogistError as e:
        _fail(str(e))
    if status:
        raise typer.Exit(status)


keys_app = typer.Typer(help="API keys of the HTTP API (hashed at rest, bound to namespaces).",
                       no_args_is_help=True)
app.add_typer(keys_app, name="keys")


@keys_app.command("add")
def keys_add_command(
    name: str = typer.Argument(..., help="A name for the key (to list and revoke it)."),
    namespace: list[str] = typer.Option([], "--namespace",
                                        help="A namespace the key may read and write "
                                             "(repeat for several; at least one unless "
                                             "--admin)."),
    admin: bool = typer.Option(False, "--admin", help="Also let the key read the service's "
                                                      "metrics of every namespace."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """Make an API key; the key is printed once and stored only as a salted hash."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.service.keys import keys_add

    try:
        path = store or default_store_path()
        path.parent.mkdir(parents=True, exist_ok=True)
        token = keys_add(path, name, namespace, admin=admin)
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps({"name": name, "namespaces": sorted(set(namespace)),
                               "admin": admin, "key": token}))
    else:
        typer.echo(token)
        scope = f"namespace(s) {', '.join(sorted(set(namespace)))}" if namespace else \
            "no namespace"
        typer.echo(f"key {name!r} for {scope}{' with the admin scope' if admin else ''}; it is "
                   "shown only now — keep it safe", err=True)


@keys_app.command("list")
def keys_list_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print JSON only."),
) -> None:
    """List API keys (names, namespaces, status; never the keys)."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.service.keys import keys_list

    try:
        rows = keys_list(store or default_store_path())
    except AnalogistError as e:
        _fail(str(e))
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    for r in rows:
        admin = " +admin" if r["admin"] else ""
        typer.echo(f"{r['name']}\t{','.join(r['namespaces'])}{admin}\t"
                   f"{'revoked ' + r['revoked_at'] if r['revoked'] else 'active'}\t"
                   f"{r['created_at']}")


@keys_app.command("revoke")
def keys_revoke_command(
    name: str = typer.Argument(..., help="The key's name."),
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
) -> None:
    """Revoke an API key (requests with it get 401 from then on)."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.service.keys import keys_revoke

    try:
        keys_revoke(store or default_store_path(), name)
    except AnalogistError as e:
        _fail(str(e))
    typer.echo(f"revoked {name!r}")


# -- issue 9 (B): the MCP server (appended block) -------------------------------------------

@app.command("mcp")
def mcp_command(
    store: Path | None = typer.Option(None, "--store", help=STORE_HELP),
    namespace: str = typer.Option("default", "--namespace",
                                  help="The one namespace this server reads and writes."),
    transport: str = typer.Option("stdio", "--transport", help="stdio or http (streamable "
                                                               "HTTP at /mcp)."),
    host: str = typer.Option("127.0.0.1", "--host", help="With --transport http."),
    port: int = typer.Option(8765, "--port", help="With --transport http."),
    text_embedding: bool = typer.Option(True, "--text-embedding/--no-text-embedding",
                                        help="Use the offline text embedder as a retrieval channel."),
    log_finds: bool = typer.Option(True, "--log-finds/--no-log-finds",
                                   help="Record find_analogy attempts in the analogy log "
                                        "(off: find_analogy is read-only)."),
    llm: bool = typer.Option(True, "--llm/--no-llm", help="Use the configured LLM, if any."),
    print_config: bool = typer.Option(False, "--print-config",
                                      help="Print the mcpServers entry for an MCP client and "
                                           "exit."),
) -> None:
    """Serve the memory to agents over MCP (stdio or streamable HTTP), scoped to one
    namespace: tools remember_episode, find_analogy, map_cases, foresight_brief,
    check_analogy, list_episodes, delete_episode, record_outcome; resources analogist://episodes, analogist://episodes/ID and
    analogist://reports/log, analogist://reports/last-brief."""
    # the library loads inside the command, so that `analogist --help` starts at once
    from analogist.mcp import MCPParams, client_config, run_mcp

    path = store or default_store_path()
    if print_config:
        typer.echo(json.dumps(client_config(path.resolve(), namespace)))
        return
    try:
        run_mcp(path, namespace, transport=transport, host=host, port=port,
                params=MCPParams(text_embedding=text_embedding, log_finds=log_finds, llm=llm))
    except AnalogistError as e:
        _fail(str(e))
