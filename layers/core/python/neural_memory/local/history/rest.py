"""Reading a REST API page by page as an import must: following ``Link: rel="next"``, waiting out
a spent rate limit (``X-RateLimit-Reset``, or ``Retry-After``) with the time shown, retrying a 5xx
or a dropped connection a bounded number of times, and refusing a page that is not JSON of the
expected shape with an error naming its URL (an import stops there, and its cursor says where to
continue)."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    import httpx

Model = TypeVar("Model", bound=BaseModel)

RETRIES = 4  # for one request: a 5xx, a 429 without a reset, a dropped connection
RATE_LIMIT_WAITS = 5  # consecutive waits for one request before giving up
BACKOFF_S = 0.5  # doubled at each retry


class SourceError(Exception):
    """The API cannot be read (refused, or still failing after the retries): the message names the URL."""


def say(message: str) -> None:
    """A line on standard error that does not break a progress bar."""
    from tqdm import tqdm

    tqdm.write(message, file=sys.stderr)


@dataclass(frozen=True)
class Page:
    """One response: its URL, its decoded JSON and the next page's URL, if any."""

    url: str
    data: Any
    next_url: str | None

    def items(self, model: type[Model], what: str) -> list[Model]:
        """The page as a list of ``model``; a page of another shape is a ``SourceError``."""
        if not isinstance(self.data, list):
            raise SourceError(f"{self.url}: expected a list of {what}, got {type(self.data).__name__}")
        return [self.parse(model, item, what) for item in self.data]

    def parse(self, model: type[Model], value: Any, what: str) -> Model:
        try:
            return model.model_validate(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise SourceError(f"{self.url}: not {what}: {where}: {first['msg']}") from exc


class RestSource:
    """GETs against one API; ``transport`` and ``sleep`` are injectable (a stand-in server, tests)."""

    def __init__(
        self,
        name: str,
        base_url: str,
        headers: Mapping[str, str],
        *,
        transport: httpx.BaseTransport | None = None,
        sleep: Callable[[float], None] = time.sleep,
        backoff_s: float = BACKOFF_S,
    ) -> None:
        import httpx

        self.name = name
        self._http = httpx.Client(
            base_url=base_url, headers=dict(headers), transport=transport, timeout=30.0, follow_redirects=True
        )
        self._sleep = sleep
        self._backoff_s = backoff_s

    def close(self) -> None:
        self._http.close()

    def get(self, url: str, params: Mapping[str, str | int] | None = None) -> Page:
        """One page; waits and retries as the module says, else raises ``SourceError``."""
        import httpx

        retries = waits = 0
        while True:
            try:
                response = self._http.get(url, params=dict(params) if params else None)
            except httpx.HTTPError as exc:
                if retries >= RETRIES:
                    raise SourceError(f"GET {url}: {type(exc).__name__}: {exc}") from exc
                retries = self._back_off(retries, f"GET {url}: {type(exc).__name__}")
                continue
            wait = rate_limit_wait(response)
            if wait is not None:
                if waits >= RATE_LIMIT_WAITS:
                    raise SourceError(f"GET {response.url}: still rate limited after {waits} waits")
                waits += 1
                until = datetime.fromtimestamp(time.time() + wait, tz=UTC)
                say(f"{self.name} rate limit reached: waiting until {until:%Y-%m-%d %H:%M:%S} UTC ({wait:.0f} s)")
                self._sleep(wait)
                continue
            if response.status_code >= 500 or response.status_code == 429:
                if retries >= RETRIES:
                    raise SourceError(f"GET {response.url}: {response.status_code} after {retries} retries")
                retries = self._back_off(retries, f"GET {response.url}: {response.status_code}")
                continue
            if response.status_code >= 400:
                raise SourceError(f"GET {response.url}: {response.status_code} {_message(response)}")
            try:
                data = response.json()
            except ValueError as exc:
                kind = response.headers.get("content-type", "no content type")
                raise SourceError(f"GET {response.url}: not JSON ({kind})") from exc
            following = response.links.get("next", {}).get("url")
            return Page(str(response.url), data, following)

    def _back_off(self, retries: int, what: str) -> int:
        delay = self._backoff_s * 2**retries
        say(f"{what}: retrying in {delay:.1f} s")
        self._sleep(delay)
        return retries + 1


def rate_limit_wait(response: httpx.Response) -> float | None:
    """Seconds to wait when ``response`` says the rate limit is spent (403 or 429 with
    ``X-RateLimit-Remaining: 0`` and a reset time, or with ``Retry-After``), else None."""
    if response.status_code not in (403, 429):
        return None
    retry_after = response.headers.get("retry-after", "")
    if retry_after.isdigit():
        return float(retry_after)
    reset = response.headers.get("x-ratelimit-reset", "")
    if response.headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
        return max(0.0, int(reset) - time.time()) + 0.5  # the reset is in whole seconds
    return None


def _message(response: httpx.Response) -> str:
    """What the API said about a refusal (its JSON ``message``, else the start of the body)."""
    try:
        body = response.json()
    except ValueError:
        return response.text[:200]
    if isinstance(body, dict):
        error = body.get("error")
        message = body.get("message") or (error.get("message") if isinstance(error, dict) else None)
        if isinstance(message, str):
            return message
    return response.text[:200]
