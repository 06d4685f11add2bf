"""Documents in a corpus folder and the partition keys that name them.

A document's id is its file name without the extension (the default id of the
evaluation format). Its partition key is that id made safe for Dagster and for
command lines: characters Dagster rejects or that break CLI key lists (commas,
brackets, '...', control characters, '%') are percent-encoded; very long names
are cut and made unique with a hash. The mapping from key back to the file is a
scan of the corpus folder, so keys never need a side table.
"""

from __future__ import annotations

import hashlib
import os
import re
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from evidence_pipeline.parser_port import SUPPORTED_SUFFIXES

MAX_KEY_LENGTH = 120

_UNSAFE = re.compile(r"[%,\[\]\x00-\x1f\x7f]|\.\.\.")


def doc_id_for(path: Path) -> str:
    return unicodedata.normalize("NFC", path.stem)


def partition_key(doc_id: str) -> str:
    key = _UNSAFE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group().encode()), doc_id)
    if len(key) > MAX_KEY_LENGTH:
        digest = hashlib.sha1(doc_id.encode()).hexdigest()[:10]
        key = f"{key[: MAX_KEY_LENGTH - 11]}~{digest}"
    return key


def file_fingerprint(stat: os.stat_result) -> str:
    """``size:mtime_ns``: when a file's fingerprint is unchanged its content is taken as unchanged
    (the cheap pre-check before hashing)."""
    return f"{stat.st_size}:{stat.st_mtime_ns}"


def iter_documents(root: Path) -> Iterator[Path]:
    """Supported files under ``root``, recursively, in a stable order; hidden files skipped."""
    if not root.is_dir():
        return
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if path.is_file() and path.suffix.lower() in SUPPORTED_SUFFIXES and not any(p.startswith(".") for p in rel.parts):
            yield path


def find_document(root: Path, key: str) -> Path | None:
    for path in iter_documents(root):
        if partition_key(doc_id_for(path)) == key:
            return path
    return None


@dataclass
class CorpusScan:
    """The documents of a folder by partition key. Two files with one id (same name in two
    subfolders, or ``a.pdf`` and ``a.docx``) cannot both be partitions: the first in scan
    order wins and the others are listed in ``duplicates``."""

    paths: dict[str, Path] = field(default_factory=dict)
    duplicates: list[Path] = field(default_factory=list)


def scan(root: Path) -> CorpusScan:
    result = CorpusScan()
    for path in iter_documents(root):
        key = partition_key(doc_id_for(path))
        if key in result.paths:
            result.duplicates.append(path)
        else:
            result.paths[key] = path
    return result


def doc_id_from_key(key: str) -> str | None:
    """The document id a key was made from; None for a shortened key (the hash is one-way)."""
    if len(key) == MAX_KEY_LENGTH and re.search(r"~[0-9a-f]{10}$", key):
        return None
    return unquote(key)


def expand_paths(paths: list[str | Path]) -> list[Path]:
    """Files named directly, and the supported files found under directories."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        found += list(iter_documents(path)) if path.is_dir() else [path]
    return found
