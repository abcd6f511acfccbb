"""The HTTP API's documentation pages, offline: Swagger UI from the files the
``swagger-ui-bundle-v2`` package ships (Swagger UI 5, which reads
OpenAPI 3.1) (nothing from a CDN), and the OpenAPI document completed
with the Signature schema (:func:`analogist.signature.signature_json_schema`, the schema the
data model validates against) referenced from every body that carries a signature.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from fastapi import FastAPI, HTTPException
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response
from swagger_ui_bundle import swagger_ui_path

from analogist.signature import signature_json_schema

__all__ = ["SIGNATURE_REF", "install_docs", "signature_components"]

SIGNATURE_REF = "#/components/schemas/Signature"
_ASSETS = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
           "swagger-ui.css": "text/css; charset=utf-8",
           "favicon-32x32.png": "image/png"}


def signature_components() -> dict[str, Any]:
    """The Signature JSON schema as OpenAPI components: ``Signature`` and its definitions
    (``$defs`` moved to components, their references rewritten)."""
    schema = copy.deepcopy(signature_json_schema())
    defs = schema.pop("$defs", {})
    schema.pop("$schema", None)
    text = json.dumps({"Signature": schema, **{f"Signature{k}": v for k, v in defs.items()}})
    for k in defs:
        text = text.replace(f'"#/$defs/{k}"', f'"#/components/schemas/Signature{k}"')
    return json.loads(text)


def install_docs(app: FastAPI, signature_bodies: set[tuple[str, str]]) -> None:
    """Serve ``/docs`` (Swagger UI from the package's files) and complete ``app.openapi()``
    with the Signature components; the routes in ``signature_bodies`` ((path, method) pairs)
    take one Signature as their whole body. Body fields that hold a signature reference
    :data:`SIGNATURE_REF` themselves (``json_schema_extra``)."""

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json",
                                   title=f"{app.title} — API docs",
                                   swagger_js_url="/docs/static/swagger-ui-bundle.js",
                                   swagger_css_url="/docs/static/swagger-ui.css",
                                   swagger_favicon_url="/docs/static/favicon-32x32.png",
                                   swagger_ui_parameters={"persistAuthorization": False})

    @app.get("/docs/static/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        if name not in _ASSETS:
            e = HTTPException(404, f"no docs file {name[:100]!r}; expected one of "
                                   f"{', '.join(sorted(_ASSETS))}")
            e.field = "name"  # type: ignore[attr-defined] # the server's error shape names it
            raise e
        return Response((swagger_ui_path / name).read_bytes(), media_type=_ASSETS[name],
                        headers={"Cache-Control": "public, max-age=86400"})

    base_openapi = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        doc = base_openapi()
        doc.setdefault("components", {}).setdefault("schemas", {}).update(
            signature_components())
        ref = {"$ref": SIGNATURE_REF}
        for path, method in signature_bodies:
            op = doc.get("paths", {}).get(path, {}).get(method)
            if op is not None:
                op.setdefault("requestBody", {"required": True}).setdefault(
                    "content", {}).setdefault("application/json", {})["schema"] = ref
        app.openapi_schema = doc
        return doc

    app.openapi = openapi  # type: ignore[method-assign]
