"""The mapping viewer: a web page showing two descriptions side by side, the SME
correspondences drawn as lines, the judge's likeness / difference / unknown table, candidate
inferences and a foresight brief's coverage chart. Mount :func:`viewer_router` in a FastAPI app."""

from analogist.viewer.routes import viewer_router

__all__ = ["viewer_router"]
