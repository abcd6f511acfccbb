"""Throwaway PostgreSQL servers for the tests and for CI (one copy of the start/stop logic).

usage:
    python tests/pg_servers.py start N DIR [BIN]  # start N servers under DIR (binaries from
                                                  # BIN), print their URLs (comma-separated)
    python tests/pg_servers.py stop DIR [BIN]     # stop every server under DIR, remove DIR
    python tests/pg_servers.py pgvector-bin  # print a binary folder whose server has pgvector
                                             # (exit 1 when there is none)

Each server is a fresh ``initdb`` cluster in DIR/pgK, owned by the ``postgres`` user when we run
as root (the server refuses to run as root), listening only on 127.0.0.1 on a free port, with the
settings of a test server (fsync, synchronous_commit and full_page_writes off; no Unix socket).
The binaries come from ``ANALOGIST_PG_BIN`` or ``/usr/lib/postgresql/15/bin``. A server with the
pgvector extension: the ``pgserver`` wheel ships PostgreSQL 16 with pgvector in its ``pginstall``
folder; :func:`pgvector_bin` finds it (without importing the package), to pass as ``binaries``.
"""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_BIN = "/usr/lib/postgresql/15/bin"
SETTINGS = {
    "listen_addresses": "127.0.0.1",
    "unix_socket_directories": "",
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "max_connections": "200",
    "shared_buffers": "64MB",
    "max_prepared_transactions": "20",
    "log_min_messages": "warning",
    "logging_collector": "off",
}


class ServersUnavailable(RuntimeError):
    """No PostgreSQL binaries here (or no ``postgres`` user to run them as root)."""


def bin_dir(given: str | Path | None = None) -> Path:
    return Path(given) if given else Path(os.environ.get("ANALOGIST_PG_BIN", DEFAULT_BIN))


def pgvector_bin() -> Path | None:
    """A binary folder whose server has the pgvector extension, or None: ``pgserver``'s
    ``pginstall/bin`` when that wheel is installed."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or not spec.origin:
        return None
    b = Path(spec.origin).parent / "pginstall" / "bin"
    share = b.parent / "share" / "postgresql" / "extension" / "vector.control"
    if os.access(b / "initdb", os.X_OK) and share.is_file():
        return b
    return None


def unavailable_reason(binaries: str | Path | None = None) -> str | None:
    """Why servers cannot be started here (from ``binaries``, default :func:`bin_dir`), or None
    when they can."""
    b = bin_dir(binaries)
    for tool in ("initdb", "pg_ctl"):
        if not os.access(b / tool, os.X_OK):
            return f"no PostgreSQL binaries ({b / tool} not found; set ANALOGIST_PG_BIN)"
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root and there is no 'postgres' user to run the server as"
    return None


def _as_server_user(cmd: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return cmd
    runuser = shutil.which("runuser")
    if runuser:
        return [runuser, "-u", "postgres", "--", *cmd]
    return ["su", "postgres", "-s", "/bin/sh", "-c", " ".join(_quote(c) for c in cmd)]


def _quote(s: str) -> str:
    return "'" + s.replace("'", "'\\''") + "'"


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(cmd: list[str]) -> None:
    p = subprocess.run(_as_server_user(cmd), capture_output=True, text=True, cwd="/")
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:2])} failed: {(p.stderr or p.stdout).strip()[-800:]}")


def start(n: int, root: str | Path | None = None, binaries: str | Path | None = None
          ) -> tuple[Path, list[str]]:
    """Start ``n`` servers under ``root`` (a new temporary folder when None) from the binaries
    in ``binaries`` (default :func:`bin_dir`); return the folder and the servers' URLs
    (``postgresql://postgres@127.0.0.1:PORT/postgres``)."""
    reason = unavailable_reason(binaries)
    if reason:
        raise ServersUnavailable(reason)
    root = Path(root) if root else Path(tempfile.mkdtemp(prefix="analogist-pg-"))
    root.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        pw = pwd.getpwnam("postgres")
        os.chown(root, pw.pw_uid, pw.pw_gid)
    os.chmod(root, 0o755)
    b = bin_dir(binaries)
    urls = []
    try:
        for k in range(n):
            data = root / f"pg{k}"
            _run([str(b / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust",
                  "-E", "UTF8", "--locale=C", "--no-sync"])
            for attempt in range(5):
                port = _free_port()
                opts = " ".join(f"-c {key}={val!r}" if val == "" else f"-c {key}={val}"
                                for key, val in {**SETTINGS, "port": str(port)}.items())
                try:
                    _run([str(b / "pg_ctl"), "-D", str(data), "-l", str(data / "server.log"),
                          "-w", "-t", "60", "-o", opts, "start"])
                    break
                except RuntimeError:
                    if attempt == 4:
                        raise
            (data / "analogist_port").write_text(str(port))
            urls.append(f"postgresql://postgres@127.0.0.1:{port}/postgres")
    except BaseException:
        stop(root, binaries)
        raise
    return root, urls


def stop(root: str | Path, binaries: str | Path | None = None) -> None:
    """Stop every server under ``root`` (fast shutdown; binaries from ``binaries``, default
    :func:`bin_dir`) and remove the folder."""
    root = Path(root)
    b = bin_dir(binaries)
    for data in sorted(root.glob("pg*")):
        if (data / "postmaster.pid").exists():
            subprocess.run(_as_server_user([str(b / "pg_ctl"), "-D", str(data), "-m", "immediate",
                                            "-w", "stop"]), capture_output=True, cwd="/")
    shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str]) -> int:
    if 2 <= len(argv) <= 4 and argv[0] == "start":
        root = argv[2] if len(argv) > 2 else None
        try:
            _, urls = start(int(argv[1]), root, argv[3] if len(argv) > 3 else None)
        except (ServersUnavailable, RuntimeError) as e:
            print(f"error: PostgreSQL servers: {e}", file=sys.stderr)
            return 2
        print(",".join(urls))
        return 0
    if len(argv) == 1 and argv[0] == "pgvector-bin":
        b = pgvector_bin()
        if b is None:
            print("error: no PostgreSQL with pgvector here (pip install 'pgserver==0.1.4')",
                  file=sys.stderr)
            return 1
        print(b)
        return 0
    if len(argv) in (2, 3) and argv[0] == "stop":
        stop(argv[1], argv[2] if len(argv) > 2 else None)
        return 0
    print("usage: pg_servers.py start N [DIR [BIN]] | stop DIR [BIN] | pgvector-bin",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
