"""The ``analogist`` command line: a thin shell over the library (no algorithm here).

Every :class:`~analogist.errors.AnalogistError` is printed on stderr as one message naming the file
(and line or field) and the command exits with status 2, without a traceback.

One module per topic registers its commands on :data:`app` (:mod:`analogist.cli.base`). The
modules import the library inside the commands that use it, so that ``analogist --help`` loads
only typer and rich.
"""

from analogist.cli import (  # noqa: F401 - imported to register their commands, in help order
    bench,
    check,
    consolidate,
    demo,
    encode,
    eval,
    find,
    foresight,
    mapping,
    schema,
    service,
    store,
)
from analogist.cli.base import app, load_description

__all__ = ["app", "load_description"]

if __name__ == "__main__":  # pragma: no cover
    app()
