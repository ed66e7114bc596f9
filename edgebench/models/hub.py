"""The Hugging Face Hub (the `hf` extra): quiet, quickly failing calls for `hf:` specs,
registry entries of kind `hf` and `models add`.

huggingface_hub retries a refused connection (0.36: five times, 23 s; 1.x and later: for
up to a minute when no copy is cached), logging a multi-line warning per try. Every call
here first asks for the file's metadata itself: one HEAD request (the standard library,
the user's token), no retries, a timeout, so an offline machine or a wrong repo, revision
or file gets one line at once. Only then does huggingface_hub download, its loggers,
warnings and (off a terminal) progress bars muted. `HF_ENDPOINT` is read at each call (a
mirror, or a test's local server), not only when huggingface_hub is imported.
"""

from __future__ import annotations

import logging
import os
import sys
import urllib.error
import urllib.request
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urljoin, urlsplit

from edgebench.errors import UserError

HF_PREFIX = "hf:"
DEFAULT_ENDPOINT = "https://huggingface.co"
# One metadata request, no retries: long enough for a slow link, short enough to fail.
METADATA_TIMEOUT_S = 10.0
_LOGGERS = ("huggingface_hub", "urllib3", "httpx", "httpx2", "httpcore", "httpcore2", "filelock")
# Exception class names (any version of huggingface_hub, requests or httpx) that mean
# the Hub could not be reached at all.
_OFFLINE = ("ConnectError", "ConnectionError", "ConnectTimeout", "OfflineModeIsEnabled")
_TIMEOUT = ("Timeout", "TimeoutException", "ReadTimeout", "TimeoutError")


@dataclass(frozen=True)
class HubFile:
    """One file of a Hub repo, as `OWNER/REPO/PATH` in an `hf:` spec."""

    repo: str
    file: str

    @property
    def spec(self) -> str:
        return f"{HF_PREFIX}{self.repo}/{self.file}"


@dataclass(frozen=True)
class FileFacts:
    """What the Hub says about a file at one revision (for `models add`)."""

    commit: str  # the revision resolved to a commit sha
    size: int
    sha256: str
    license: str  # from the model card's metadata; "" when it gives none
    base_model: str  # likewise


def parse_spec(spec: str) -> HubFile:
    """`hf:OWNER/REPO/FILE` (FILE may be in a folder); one line if malformed."""
    parts = spec[len(HF_PREFIX) :].strip("/").split("/")
    if not spec.startswith(HF_PREFIX) or len(parts) < 3 or not all(parts) or ".." in parts:
        raise UserError(f"bad model spec {spec!r}: expected hf:OWNER/REPO/FILE.gguf")
    return HubFile("/".join(parts[:2]), "/".join(parts[2:]))


def endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def _hub(what: str) -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise UserError(
            f"{what}: the Hugging Face Hub needs huggingface_hub: pip install 'edgebench[hf]'"
        ) from None
    return huggingface_hub


@contextmanager
def quiet() -> Iterator[None]:
    """Mute huggingface_hub's (and its HTTP stack's) log lines and warnings; its progress
    bars too unless stderr is a terminal. The library's own settings are restored after."""
    loggers = [logging.getLogger(name) for name in _LOGGERS]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    bars = None
    if not sys.stderr.isatty():
        try:
            from huggingface_hub.utils import (
                are_progress_bars_disabled,
                disable_progress_bars,
                enable_progress_bars,
            )

            bars = (are_progress_bars_disabled(), enable_progress_bars)
            disable_progress_bars()
        except ImportError:
            pass
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)
        if bars is not None and not bars[0]:
            bars[1]()


def describe(exc: BaseException, where: str) -> str:
    """One line saying why a Hub call about `where` (repo, file, revision) failed."""
    names = {cls.__name__ for cls in type(exc).__mro__}
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
    if "GatedRepoError" in names:
        return f"{where}: the repo is gated: accept its terms on the Hub and log in (hf auth login)"
    if "RepositoryNotFoundError" in names:
        return (
            f"{where}: no such repo on {endpoint()} (or it is private: log in with hf auth login)"
        )
    if "RevisionNotFoundError" in names:
        return f"{where}: no such revision in the repo"
    if "EntryNotFoundError" in names:
        return f"{where}: no such file in the repo at that revision"
    if names & set(_OFFLINE):
        return f"{where}: cannot reach the Hugging Face Hub at {endpoint()} (offline?): {first}"
    if names & set(_TIMEOUT):
        return f"{where}: the Hugging Face Hub at {endpoint()} did not answer in time (offline?)"
    return f"{where}: the Hugging Face Hub refused: {first}"


def _commit_of(target: HubFile, revision: str | None, where: str) -> str:
    """The commit the file is at, from one HEAD request of our own (huggingface_hub's
    metadata call retries a refused connection, for 23 s in 0.36): a
    ConnectionError or TimeoutError when the Hub cannot be reached, a UserError when it
    answers that the repo, revision or file does not exist."""
    if os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE"):
        raise ConnectionError("HF_HUB_OFFLINE is set")  # the cached copy, if any, is used
    rev = quote(revision or "main", safe="")
    url = f"{endpoint()}/{quote(target.repo)}/resolve/{rev}/{quote(target.file)}"
    for _ in range(_REDIRECTS):
        answer = _head(url, _auth_headers())
        commit = answer.headers.get("X-Repo-Commit")
        if answer.status < 300 or (answer.status < 400 and commit):
            if not commit:
                raise UserError(f"{where}: {endpoint()} does not answer like the Hugging Face Hub")
            return commit
        location = urljoin(url, answer.headers.get("Location") or "")
        if answer.status < 400 and urlsplit(location).netloc == urlsplit(url).netloc:
            url = location  # a renamed repo, on the same host (the token goes nowhere else)
            continue
        raise UserError(_refusal(answer.status, answer.headers.get("X-Error-Code"), where))
    raise UserError(f"{where}: too many redirects from {endpoint()}")


_REDIRECTS = 4


@dataclass(frozen=True)
class _Answer:
    status: int
    headers: Any  # email.message.Message: case-insensitive


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx itself carries X-Repo-Commit; a CDN is not asked


def _head(url: str, headers: dict[str, str]) -> _Answer:
    if not url.startswith(("https://", "http://")):
        raise UserError(f"HF_ENDPOINT must be an http(s) URL, got {endpoint()!r}")
    request = urllib.request.Request(url, method="HEAD", headers=headers)
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=METADATA_TIMEOUT_S) as response:
            return _Answer(response.status, response.headers)
    except urllib.error.HTTPError as exc:
        return _Answer(exc.code, exc.headers)
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise TimeoutError(str(exc.reason)) from None
        raise ConnectionError(str(exc.reason)) from None
    except TimeoutError:
        raise
    except OSError as exc:
        raise ConnectionError(str(exc)) from None


def _auth_headers() -> dict[str, str]:
    """The user's token (HF_TOKEN, `hf auth login`) as huggingface_hub would send it."""
    try:
        from huggingface_hub.utils import build_hf_headers

        return dict(build_hf_headers())
    except Exception:  # an API that moved: ask anonymously (public repos still work)
        return {}


def _refusal(status: int, code: str | None, where: str) -> str:
    if code == "GatedRepo":
        return f"{where}: the repo is gated: accept its terms on the Hub and log in (hf auth login)"
    if code == "RepoNotFound" or status == 401:
        return (
            f"{where}: no such repo on {endpoint()} (or it is private: log in with hf auth login)"
        )
    if code == "RevisionNotFound":
        return f"{where}: no such revision in the repo"
    if code == "EntryNotFound" or status == 404:
        return f"{where}: no such file in the repo at that revision"
    return f"{where}: the Hugging Face Hub at {endpoint()} answered HTTP {status}"


def download(target: HubFile, *, revision: str | None, cache: Path) -> Path:
    """The file through huggingface_hub's own cache in `cache` (a copy already there is
    used when the Hub cannot be reached); its path."""
    hub = _hub(target.spec)
    where = f"{target.spec}{f'@{revision}' if revision else ''}"
    with quiet():
        try:
            _commit_of(target, revision, where)
        except UserError:
            raise
        except Exception as exc:  # the hub raises many types (HTTP, offline, auth, missing)
            cached = _cached(hub, target, revision, cache) if _is_offline(exc) else None
            if cached is not None:
                return cached
            raise UserError(describe(exc, where)) from None
        # By the revision as given, so the cache records what `main` was (used offline).
        return Path(_fetch(hub, target, revision, where, cache_dir=cache))


def download_into(
    target: HubFile, *, revision: str, folder: Path, starting: Callable[[], None]
) -> Path:
    """The file downloaded into `folder` (no shared cache: a registry pull verifies and
    moves it); its path. `starting()` is called once the Hub has answered."""
    hub = _hub(target.spec)
    where = f"{target.spec}@{revision}"
    with quiet():
        try:
            commit = _commit_of(target, revision, where)
        except UserError:
            raise
        except Exception as exc:
            raise UserError(describe(exc, where)) from None
        starting()
        return Path(_fetch(hub, target, commit, where, local_dir=folder))


def _fetch(hub: Any, target: HubFile, revision: str | None, where: str, **into: Path) -> str:
    try:
        return str(
            hub.hf_hub_download(
                target.repo,
                target.file,
                revision=revision,
                endpoint=endpoint(),
                etag_timeout=METADATA_TIMEOUT_S,
                **into,
            )
        )
    except Exception as exc:
        raise UserError(describe(exc, where)) from None


def _cached(hub: Any, target: HubFile, revision: str | None, cache: Path) -> Path | None:
    try:
        local = hub.hf_hub_download(
            target.repo, target.file, revision=revision, cache_dir=cache, local_files_only=True
        )
    except Exception:
        return None
    return Path(local)


def _is_offline(exc: BaseException) -> bool:
    names = {cls.__name__ for cls in type(exc).__mro__}
    return bool(names & set(_OFFLINE + _TIMEOUT))


def file_facts(target: HubFile, revision: str | None) -> FileFacts:
    """The commit `revision` (default: the main branch) is, and the file's size and
    sha256 there (Git LFS metadata; a GGUF is always stored with LFS)."""
    hub = _hub(target.spec)
    where = f"{target.spec}{f'@{revision}' if revision else ''}"
    with quiet():
        try:
            _commit_of(target, revision, where)  # fails fast, before the slower API call
            api = hub.HfApi(endpoint=endpoint())
            info = api.model_info(
                target.repo, revision=revision, files_metadata=True, timeout=METADATA_TIMEOUT_S
            )
        except UserError:
            raise
        except Exception as exc:
            raise UserError(describe(exc, where)) from None
    sibling = next((s for s in info.siblings or [] if s.rfilename == target.file), None)
    if sibling is None:
        raise UserError(f"{where}: no such file in the repo at that revision")
    lfs = sibling.lfs
    sha256 = getattr(lfs, "sha256", None) or (lfs.get("sha256") if isinstance(lfs, dict) else None)
    size = getattr(lfs, "size", None) or sibling.size
    if not sha256 or not size:
        raise UserError(f"{where}: the Hub gives no sha256 for the file (not stored with Git LFS)")
    card = info.card_data
    return FileFacts(
        commit=str(info.sha),
        size=int(size),
        sha256=str(sha256),
        license=_card_text(card, "license"),
        base_model=_card_text(card, "base_model"),
    )


def _card_text(card: Any, key: str) -> str:
    value = getattr(card, key, None) if card is not None else None
    if isinstance(value, list) and len(value) == 1:
        value = value[0]
    return value if isinstance(value, str) else ""
