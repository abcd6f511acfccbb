"""Pieces of the HTTP service (issue 9): API keys bound to namespaces, request limits, metrics
and background jobs. :mod:`analogist.server` assembles them into the FastAPI app."""
