"""Parser fuzz: mutated copies of small real PDFs give a ParsedDoc or a ParseError naming the file.

Nothing else may come out (no other exception, no hang, no dead parent): every parse runs in
the worker process under a time limit. The mutations are seeded, so a failure reproduces.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import pytest

from evidence_pipeline.errors import ParseError
from evidence_pipeline.parser.worker import WorkerParser
from evidence_pipeline.records import ParsedDoc
from evidence_pipeline.settings import ParserSettings

SOURCES = ("2305.03393v1-pg9", "table_mislabeled_as_picture", "code_and_formula")  # classic xref and xref streams
CASES_PER_SOURCE = 10
SEED = 20261130
TIMEOUT_S = 10.0

_OBJ = re.compile(rb"\d+ 0 obj\b")
_TOKENS = [
    b"<<",
    b">>",
    b"[",
    b"]",
    b"/Length 99999999",
    b"/Type /Page",
    b"/Kids [1 0 R]",
    b"stream\n",
    b"endstream",
    b"0",
    b"-1",
    b"4294967296",
    b"1e308",
    b"(",
    b")",
    b"/Filter /FlateDecode",
    b"R",
    b"null",
    b"%",
]


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 60)):
        out[rng.randrange(9, len(out))] = rng.randrange(256)  # keep the %PDF- header
    return bytes(out)


def truncate(data: bytes, rng: random.Random) -> bytes:
    return data[: int(len(data) * rng.uniform(0.2, 0.97))]


def delete_xref(data: bytes, rng: random.Random) -> bytes:
    """Remove the last cross-reference section (classic table or xref stream object)."""
    at = data.rfind(b"startxref")
    offset = int(re.search(rb"\d+", data[at + 9 : at + 40]).group())
    if data[offset : offset + 4] == b"xref":
        end = data.find(b"trailer", offset)
    else:
        end = data.find(b"endobj", offset) + len(b"endobj")
    return data[:offset] + data[end:]


def random_object_body(data: bytes, rng: random.Random) -> bytes:
    """Replace the body of one object with random bytes or a soup of PDF tokens."""
    objs = list(_OBJ.finditer(data))
    for _ in range(rng.randint(1, 3)):
        m = rng.choice(objs)
        end = data.find(b"endobj", m.end())
        if end < 0:
            continue
        if rng.random() < 0.5:
            body = bytes(rng.randrange(256) for _ in range(rng.randint(0, 2048)))
        else:
            body = b" ".join(rng.choice(_TOKENS) for _ in range(rng.randint(1, 200)))
        data = data[: m.end()] + b"\n" + body + b"\n" + data[end:]
        objs = list(_OBJ.finditer(data))
    return data


MUTATIONS = (flip_bytes, truncate, delete_xref, random_object_body)


def mutated_pdfs(corpora: Path, out: Path) -> list[Path]:
    rng = random.Random(SEED)
    paths = []
    for source in SOURCES:
        data = (corpora / "docling-tests" / "pdfs" / f"{source}.pdf").read_bytes()
        for i in range(CASES_PER_SOURCE):
            mutate = MUTATIONS[i % len(MUTATIONS)]
            path = out / f"{source}-{i:02d}-{mutate.__name__}.pdf"
            path.write_bytes(mutate(data, rng))
            paths.append(path)
    return paths


@pytest.fixture(scope="module")
def fuzz_parser():
    with WorkerParser(ParserSettings(timeout_s=TIMEOUT_S, max_memory_mb=2048)) as parser:
        yield parser


def test_mutated_pdfs_give_a_document_or_an_error_naming_the_file(corpora, tmp_path, fuzz_parser):
    originals = [corpora / "docling-tests" / "pdfs" / f"{s}.pdf" for s in SOURCES]
    assert all(isinstance(fuzz_parser.parse(p), ParsedDoc) for p in originals)  # the worker itself is sound
    outcomes: dict[str, str] = {}
    for path in mutated_pdfs(corpora, tmp_path):
        started = time.monotonic()
        try:
            doc = fuzz_parser.parse(path)
        except ParseError as exc:
            assert exc.path == str(path) and exc.reason and "\n" not in exc.reason, str(exc)
            assert "could not start" not in exc.reason, str(exc)
            outcomes[path.name] = f"error: {exc.reason}"
        else:
            assert doc.doc_id == path.stem and doc.source == str(path)
            outcomes[path.name] = "parsed"
        # start-up of a fresh worker after a crash is not part of the document's limit
        assert time.monotonic() - started < TIMEOUT_S + 60, path.name
    parsed = sum(v == "parsed" for v in outcomes.values())
    assert len(outcomes) == len(SOURCES) * CASES_PER_SOURCE
    # The corpus mixes survivable damage with fatal damage: both outcomes must occur.
    assert 0 < parsed < len(outcomes), outcomes
