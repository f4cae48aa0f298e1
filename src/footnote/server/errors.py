"""One JSON error shape for every error: `{"error": {"code", "message", "detail"}}`."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from footnote.errors import (
    BudgetExceeded,
    ConfigError,
    FootnoteError,
    IngestError,
    ModelError,
    NotFound,
    UsageError,
)

log = logging.getLogger(__name__)

_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    410: "gone",
    411: "length_required",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "invalid_request",
    429: "too_many_requests",
    500: "internal",
    503: "unavailable",
}


class ApiError(Exception):
    """Raised by handlers: becomes the error shape with this status."""

    def __init__(self, status: int, message: str, *, code: str | None = None, detail: Any = None):
        super().__init__(message)
        self.status = status
        self.code = code or _CODES.get(status, "error")
        self.message = message
        self.detail = detail


def not_found(what: str) -> ApiError:
    """The 404 for anything missing *or owned by somebody else* (never a 403)."""
    return ApiError(404, f"{what} not found")


def error_body(code: str, message: str, detail: Any = None) -> dict[str, Any]:
    """The error shape."""
    return {"error": {"code": code, "message": message, "detail": detail}}


def error_response(status: int, code: str, message: str, detail: Any = None) -> JSONResponse:
    """A JSONResponse in the error shape."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if status == 429 and isinstance(detail, dict) and detail.get("retry_after_s"):
        headers = {"Retry-After": str(detail["retry_after_s"])}
    return JSONResponse(error_body(code, message, detail), status_code=status, headers=headers)


def _footnote_status(exc: FootnoteError) -> int:
    if isinstance(exc, NotFound):
        return 404
    if isinstance(exc, ConfigError):
        return 500
    if isinstance(exc, UsageError | IngestError):
        return 422
    if isinstance(exc, BudgetExceeded):
        return 429
    if isinstance(exc, ModelError):
        return 503
    return 500


def install_error_handlers(app: FastAPI) -> None:
    """Route every exception, framework ones included, to the one error shape."""

    @app.exception_handler(ApiError)
    async def _api(_: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.detail)

    @app.exception_handler(StarletteHTTPException)
    async def _http(_: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _CODES.get(exc.status_code, "error")
        message = str(exc.detail) if exc.detail else code.replace("_", " ")
        return error_response(exc.status_code, code, message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(_: Request, exc: RequestValidationError) -> JSONResponse:
        detail = [
            {"loc": list(e.get("loc", ())), "msg": e.get("msg", ""), "type": e.get("type", "")}
            for e in exc.errors()
        ]
        return error_response(422, "invalid_request", "the request is not valid", detail)

    @app.exception_handler(FootnoteError)
    async def _footnote(_: Request, exc: FootnoteError) -> JSONResponse:
        status = _footnote_status(exc)
        if status >= 500 and status != 503:  # a store or configuration fault: no internals out
            log.error("request failed: %s", exc, exc_info=exc)
            return error_response(status, "internal", "internal server error")
        return error_response(status, _CODES.get(status, "error"), str(exc), type(exc).__name__)

    @app.exception_handler(Exception)
    async def _unhandled(_: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error", exc_info=exc)
        return error_response(500, "internal", "internal server error")
