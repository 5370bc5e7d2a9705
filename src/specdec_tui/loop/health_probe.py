"""One HTTP probe of an SGLang server: /health, then /v1/models and /server_info when it is up, read into an
`HttpProbe` and the server's facts. Never raises; `loop.health` turns probes and systemd's view into states.
(upstream: python/sglang/srt/entrypoints/http_server.py health_generate, _dead_subprocess_response)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from specdec_tui.core.results import ServerFacts
from specdec_tui.loop.bounded_get import AnswerTooLarge, AnswerTooSlow, bounded_get

if TYPE_CHECKING:  # httpx (with httpcore, its TLS setup and more) is loaded by the first probe, not the first frame
    import httpx


@dataclass(frozen=True, slots=True)
class HttpProbe:
    """What the HTTP endpoints said in one probe."""

    reachable: bool  # something accepted the TCP connection
    health_status: int | None = None
    models: tuple[str, ...] = ()
    max_model_len: int | None = None
    server_info: dict[str, Any] | None = None
    error: str = ""
    dead_subprocess: str = ""  # from a 503 body: "scheduler_0 (pid 4242) exited with code 1"



def facts_from(server_info: dict[str, Any] | None, models: tuple[str, ...], max_model_len: int | None) -> ServerFacts | None:
    """ServerFacts from /server_info (SGLang puts server args at the top level) and /v1/models."""
    if server_info is None and not models:
        return None
    info = server_info or {}
    states = info.get("internal_states") or [{}]
    state0 = states[0] if isinstance(states, list) and states and isinstance(states[0], dict) else {}
    mrr = state0.get("effective_max_running_requests_per_dp") or info.get("max_running_requests")
    spec = {key.removeprefix("speculative_"): value for key in SPECULATIVE_KEYS
            if (value := _scalar(info.get(key))) is not None}
    return ServerFacts(
        model=(models[0] if models else "") or _text(info.get("served_model_name")) or _text(info.get("model_path")),
        max_running_requests=_int_or_none(mrr),
        max_total_num_tokens=_int_or_none(info.get("max_total_num_tokens")),
        context_len=max_model_len or _int_or_none(info.get("context_length")),
        speculative=spec,
        version=_text(info.get("version")),
        setup={key: text for key in SETUP_KEYS if (text := _text(info.get(key)))},
    )


SPECULATIVE_KEYS = ("speculative_algorithm", "speculative_num_steps", "speculative_eagle_topk",
                    "speculative_num_draft_tokens")
# the /server_info fields that say what hardware setup and model numerics a figure was measured on (provenance)
SETUP_KEYS = ("model_path", "tp_size", "dp_size", "pp_size", "dtype", "kv_cache_dtype", "quantization",
              "attention_backend", "mem_fraction_static", "chunked_prefill_size", "cuda_graph_max_bs",
              "speculative_draft_model_path", "speculative_attention_mode", "device")


def _int_or_none(value: object) -> int | None:
    number = _scalar(value)
    return int(number) if isinstance(number, (int, float)) and math.isfinite(number) else None


def _text(value: object) -> str:
    scalar = _scalar(value)
    return "" if scalar is None else str(scalar)


def _scalar(value: object) -> str | int | float | None:
    """A field of /server_info as one value to show, or None: SGLang writes these as text or numbers, so a list, a
    table, true/false or null from a server (or whatever answers on its port) is not shown as Python's repr of it
    ("steps={'x': [1]}")."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None
    return value


def auth_headers(api_key: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {api_key}"} if api_key else {}


def json_of(body: bytes) -> Any:
    """A server's JSON answer; ValueError for any that is not JSON. orjson, not httpx's `json()` (the standard
    library's): a /server_info of 5,000 nested brackets raised RecursionError past every handler, and the panel
    said "The unit could not be restarted"."""
    import orjson

    return orjson.loads(body)


def dead_subprocess_from(body: bytes) -> str:
    """The dead component named in a 503 body (`{"error": "subprocess not alive", "component": ..., "pid": ...,
    "exit_code": ...}`), in words; "" for any other body (warmup and shutdown 503s have none)."""
    import orjson

    try:
        detail = orjson.loads(body) if body else None
    except orjson.JSONDecodeError:
        return ""
    if not isinstance(detail, dict) or detail.get("error") != "subprocess not alive":
        return ""
    code = detail.get("exit_code")
    if not isinstance(code, int):
        how = "is dead"
    else:
        how = f"exited with code {code}" if code >= 0 else f"was killed by signal {-code}"
    return f"{detail.get('component', '?')} (pid {detail.get('pid', '?')}) {how}"


async def server_info_of(client: httpx.AsyncClient, base: str) -> dict[str, Any] | None:
    """GET /server_info; /get_server_info only when that is 404 (an older server), since a current server writes
    a deprecation WARNING into its journal on every /get_server_info call."""
    resp = await bounded_get(client, f"{base}/server_info")
    if resp.status_code == 404:
        resp = await bounded_get(client, f"{base}/get_server_info")
    info = json_of(resp.content) if resp.status_code == 200 else None
    return info if isinstance(info, dict) else None


async def probe_http(
    client: httpx.AsyncClient, base_url: str, *, want_info: bool = True, known: HttpProbe | None = None
) -> HttpProbe:
    """GET /health; when it is 200, /v1/models and (optionally) /server_info. Never raises.

    `known`: the last probe of a ready server; while /health stays 200 its models stand (no /v1/models)."""
    import httpx

    base = base_url.rstrip("/")
    try:
        resp = await bounded_get(client, f"{base}/health")
    except httpx.ConnectError as err:
        return HttpProbe(reachable=False, error=f"connection refused ({_short(err)})")
    except httpx.TimeoutException:
        return HttpProbe(reachable=True, error="/health timed out")
    except (AnswerTooSlow, AnswerTooLarge) as err:
        return HttpProbe(reachable=True, error=str(err))
    except (httpx.RemoteProtocolError, httpx.ReadError) as err:  # it took the connection, then cut or garbled it:
        # not "port not open yet" (something listens there; is it the SGLang server?)
        return HttpProbe(reachable=True, error=f"/health: the connection was cut or garbled mid-answer ({_short(err)}); "
                                               "is the SGLang server what listens there?")
    except httpx.HTTPError as err:
        return HttpProbe(reachable=False, error=_short(err))
    if resp.status_code != 200:
        dead = dead_subprocess_from(resp.content) if resp.status_code == 503 else ""
        return HttpProbe(reachable=True, health_status=resp.status_code, error=f"/health returned {resp.status_code}",
                         dead_subprocess=dead)
    if known is not None and known.health_status == 200 and known.models:
        return HttpProbe(reachable=True, health_status=200, models=known.models, max_model_len=known.max_model_len)
    models: tuple[str, ...] = ()
    max_len: int | None = None
    info: dict[str, Any] | None = None
    try:
        mresp = await bounded_get(client, f"{base}/v1/models")
        if mresp.status_code == 200:
            answer = json_of(mresp.content)
            data = answer.get("data") if isinstance(answer, dict) else None  # a list, a string: no models
            if not isinstance(data, list):
                data = []
            models = tuple(_text(m.get("id")) for m in data if isinstance(m, dict))
            if data and isinstance(data[0], dict):
                max_len = _int_or_none(data[0].get("max_model_len"))
        if want_info:
            info = await server_info_of(client, base)
    except (httpx.HTTPError, ValueError, AnswerTooSlow, AnswerTooLarge) as err:
        return HttpProbe(reachable=True, health_status=200, models=models, error=f"server info: {_short(err)}")
    return HttpProbe(reachable=True, health_status=200, models=models, max_model_len=max_len, server_info=info)


def _short(err: BaseException) -> str:
    text = str(err) or type(err).__name__
    return text if len(text) < 120 else text[:117] + "..."



def new_probe_client(api_key: str | None) -> httpx.AsyncClient:
    """The probe client. Built off the event loop (see `HealthWatch`): importing httpx and setting up its TLS
    context takes ~150 ms of CPU that would otherwise hold up the panel's first frame."""
    import httpx

    return httpx.AsyncClient(timeout=httpx.Timeout(2.0, connect=1.0), headers=auth_headers(api_key))


async def server_facts(base_url: str, api_key: str | None) -> ServerFacts | None:
    """What the server says about itself (/server_info, /v1/models), for its max running requests; None when it
    does not answer (the benchmark then says why)."""
    return (await server_probe(base_url, api_key))[1]


async def server_probe(base_url: str, api_key: str | None) -> tuple[HttpProbe, ServerFacts | None]:
    """One probe on a client of its own (the headless commands'), and the facts it read: the probe says whether
    anything accepts connections there at all."""
    import httpx

    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0), headers=auth_headers(api_key)) as client:
        probe = await probe_http(client, base_url)
    return probe, facts_from(probe.server_info, probe.models, probe.max_model_len)
