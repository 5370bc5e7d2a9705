"""What the simulator's routes share: a JSON answer, and the request key for a status already on the wire."""

from __future__ import annotations

from typing import Any

import orjson
from aiohttp import web

SENT_STATUS = "sim_sent_status"  # request key: the status of a response whose headers are on the wire


def json_response(obj: Any, status: int = 200) -> web.Response:
    """orjson's bytes, as SGLang's ORJSONResponse sends them."""
    return web.Response(body=orjson.dumps(obj), status=status, content_type="application/json")
