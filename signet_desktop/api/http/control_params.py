"""Every route's path and query parameters: a control character is a 422 naming the parameter.

Installed once as an application-wide dependency, so no route can forget it. Bodies are
checked by their models (`schemas.Body`), which the MCP tools share.
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError

from signet_desktop.api.http.schemas import CONTROL_ERROR
from signet_desktop.domain.control_text import control_message, first_control


def _problem(where: str, name: str, char: str) -> dict[str, Any]:
    message = control_message(char, identifier=where == "path")
    return {"loc": (where, name), "msg": message, "type": CONTROL_ERROR}


async def refuse_control_parameters(request: Request) -> None:
    """Raise a 422 for each path parameter (no tab or newline either) or query parameter
    (names and values) that holds a control character."""
    problems = []
    for name, value in request.path_params.items():
        char = first_control(str(value), identifier=True)
        if char is not None:
            problems.append(_problem("path", name, char))
    for name, value in request.query_params.multi_items():
        char = first_control(name) or first_control(value)
        if char is not None:
            problems.append(_problem("query", name, char))
    if problems:
        raise RequestValidationError(problems)
