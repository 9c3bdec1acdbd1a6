"""Data files on S3-compatible object storage: ``s3://bucket/prefix/*.parquet`` as a data argument.

DuckDB's ``httpfs`` extension is not part of the pip package and nothing is downloaded at run time,
so objects are read through pyarrow's S3 filesystem (the AWS SDK bundled in pyarrow). Each matching
object is copied, as a stream of 1 MiB blocks, into a private temporary directory (removed at exit)
and then read exactly as a local file is: the same CSV dialect and malformed-row rules, JSON number
literals, Parquet row numbers, file hashes for ``ingest``. Memory stays bounded; local disk holds one
copy of the batch. Messages name the objects by their ``s3://`` URLs.

Credentials come from the AWS SDK's standard chain: ``AWS_ACCESS_KEY_ID`` / ``AWS_SECRET_ACCESS_KEY``
(/ ``AWS_SESSION_TOKEN``), then ``AWS_PROFILE`` in ``~/.aws/credentials`` and ``~/.aws/config``
(``AWS_SHARED_CREDENTIALS_FILE``, ``AWS_CONFIG_FILE``), then the instance's role. The endpoint of an
S3-compatible server is ``TSCONTRACT_S3_ENDPOINT``, ``AWS_ENDPOINT_URL_S3`` or ``AWS_ENDPOINT_URL``;
the region ``AWS_REGION`` or ``AWS_DEFAULT_REGION``. No message shows a credential.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tscontract.errors import SHOWN_AS, InputError
from tscontract.shown import VALUE_CHARS, cut

S3_SCHEME = "s3://"
ENDPOINT_ENVS = ("TSCONTRACT_S3_ENDPOINT", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL")
_SECRET_ENVS = ("AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ACCESS_KEY_ID")
_GLOB = re.compile(r"[*?\[]")
_BLOCK = 1 << 20


def is_s3(item: Any) -> bool:
    return isinstance(item, str) and item.startswith(S3_SCHEME)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """``pattern`` as a regular expression over object keys: ``*`` and ``?`` stay within one ``/``
    level, ``**`` crosses levels (``**/`` also matches no level), ``[...]`` is a character class."""
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:[^/]*/)*")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            negated = body.startswith("!")
            members = body[negated:].replace("\\", "\\\\").replace("[", "\\[")  # ranges (a-z) stay ranges
            out.append("[" + ("^/" if negated else "") + members + "]")
            i = end + 1
            continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def scrubbed(text: str) -> str:
    """``text`` with every credential of the environment replaced by ``***``."""
    for name in _SECRET_ENVS:
        value = os.environ.get(name, "")
        if len(value) >= 4:
            text = text.replace(value, "***")
    return text


def error_line(exc: BaseException) -> str:
    """A storage or table library's error as shown: its first line, credentials masked before it is cut."""
    text = scrubbed(str(exc))
    return cut(next((line.strip() for line in text.splitlines() if line.strip()), type(exc).__name__), VALUE_CHARS)


def _failure(url: str, exc: BaseException) -> InputError:
    return InputError(f"cannot read {url}: {error_line(exc)}")


def s3_filesystem() -> Any:
    """pyarrow's S3 filesystem with the endpoint and region of the environment; credentials from the
    AWS SDK's chain. Two attempts per request and bounded timeouts: a wrong endpoint fails in seconds."""
    from pyarrow import fs

    options: dict[str, Any] = {
        "retry_strategy": fs.AwsStandardS3RetryStrategy(max_attempts=2),
        "connect_timeout": 5,
        "request_timeout": 60,
    }
    for name in ENDPOINT_ENVS:
        endpoint = os.environ.get(name, "").strip()
        if endpoint:
            parts = urlsplit(endpoint)
            if parts.scheme not in ("http", "https") or not parts.netloc or parts.path.strip("/"):
                raise InputError(f"{name}={endpoint!r}: give the server's URL, such as http://localhost:9000")
            options["endpoint_override"], options["scheme"] = parts.netloc, parts.scheme
            break
    region = os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if region:
        options["region"] = region
    return fs.S3FileSystem(**options)


def matching_objects(filesystem: Any, url: str) -> list[str]:
    """The objects ``url`` names (``bucket/key`` paths, sorted): one object, or every object a glob matches."""
    from pyarrow import fs

    bucket, _, pattern = url[len(S3_SCHEME) :].partition("/")
    if not bucket or not pattern or pattern.endswith("/"):
        raise InputError(f"{url}: give s3://bucket/key or a glob such as s3://bucket/prefix/*.parquet")
    glob = _GLOB.search(pattern)
    try:
        if glob is None:
            info = filesystem.get_file_info(f"{bucket}/{pattern}")
            if info.type == fs.FileType.File:
                return [info.path]
            hint = "; a prefix: add /*.parquet (or the files' suffix)" if info.type == fs.FileType.Directory else ""
            raise InputError(f"{url}: no such object{hint}")
        base = pattern[: glob.start()].rpartition("/")[0]
        selector = fs.FileSelector(f"{bucket}/{base}".rstrip("/"), recursive=True, allow_not_found=True)
        infos = filesystem.get_file_info(selector)
    except OSError as exc:
        raise _failure(url, exc) from None
    regex = glob_regex(pattern)
    found = sorted(i.path for i in infos if i.type == fs.FileType.File and regex.fullmatch(i.path[len(bucket) + 1 :]))
    if not found:
        raise InputError(f"{url}: no object matches")
    return found


def _copy_directory() -> Path:
    path = Path(tempfile.mkdtemp(prefix="tscontract-s3-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def fetched(url: str) -> list[Path]:
    """Local copies of the objects ``url`` names, in key order; each is shown as its ``s3://`` URL."""
    filesystem = s3_filesystem()
    objects = matching_objects(filesystem, url)
    directory = _copy_directory()
    copies = []
    for index, name in enumerate(objects):
        shown = S3_SCHEME + name
        base = name.rpartition("/")[2]  # the object's own name: its suffix, its date (a mapping's file_name)
        if base in ("", ".", ".."):
            raise InputError(f"{shown}: an object name that is no file name")
        local = directory / str(index) / base
        local.parent.mkdir()
        try:
            with filesystem.open_input_stream(name) as source, local.open("wb") as target:
                while block := source.read(_BLOCK):
                    target.write(block)
        except OSError as exc:
            raise _failure(shown, exc) from None
        SHOWN_AS[str(local)] = shown
        copies.append(local)
    return copies


def localized(items: list[Any]) -> list[Any]:
    """``items`` with every ``s3://`` URL replaced by local copies of the objects it names."""
    if not any(is_s3(item) for item in items):
        return items
    out: list[Any] = []
    for item in items:
        out.extend(fetched(item) if is_s3(item) else [item])
    return out
