"""House rules on the package's prose: no docstring or comment block over 20 lines, and no
company or filer name in product code. Each failure lists its offenders as ``file:line``."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import evidence_pipeline

PACKAGE = Path(evidence_pipeline.__file__).parent
ROOT = PACKAGE.parent
MAX_LINES = 20


# The filers of the shared corpora (../shared/corpora/*/pdfs file names and the doc_ids of
# data/questions/*.jsonl), as names, file-name stems and tickers. Matched case-sensitively as whole
# words, an underscore counting as a word break so that file names ("3M_2018_10K") match too.
# Left out because they are ordinary words or identifiers: "Block"/"BLOCK" and "SQ" (Block, Inc.),
# "PEP" (PepsiCo's ticker, and Python's enhancement proposals).
FILERS = [
    # sec-10q-dev
    "Apple", "AAPL", "Amazon", "AMAZON", "AMZN", "Intel", "INTC", "Microsoft", "MSFT", "Nvidia", "NVIDIA", "NVDA",
    # financebench-dev
    "3M", "MMM", "Amcor", "AMCOR", "AMCR", "American Express", "AMERICANEXPRESS", "AmEx", "AXP", "MGM",
    "MGMRESORTS", "Pfizer", "PFIZER", "PFE", "Ulta", "ULTA", "ULTABEAUTY",
    # financebench-more
    "Activision", "ACTIVISIONBLIZZARD", "Blizzard", "ATVI", "Adobe", "ADOBE", "ADBE", "AMD", "American Water",
    "AMERICANWATERWORKS", "AWK", "Best Buy", "BESTBUY", "BBY", "Coca-Cola", "COCACOLA", "KO", "Corning", "CORNING",
    "GLW", "General Mills", "GENERALMILLS", "GIS", "Johnson & Johnson", "Johnson", "JOHNSON", "JNJ", "JPMorgan",
    "JPMORGAN", "JPM", "PepsiCo", "PEPSICO", "Verizon", "VERIZON", "VZ",
    # docling-tests (the Redbook sample)
    "IBM",
]  # fmt: skip
FILER_RE = re.compile(r"(?<![A-Za-z0-9])(" + "|".join(re.escape(n) for n in FILERS) + r")(?![A-Za-z0-9])")


def _files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name}:{line}"


def long_docstrings(path: Path) -> list[str]:
    """``file:line (n lines)`` for each module, class or function docstring whose source spans
    more than ``MAX_LINES`` lines."""
    out = []
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        body = node.body
        if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
            continue
        if not isinstance(body[0].value.value, str):
            continue
        doc = body[0]
        n = doc.end_lineno - doc.lineno + 1
        if n > MAX_LINES:
            out.append(f"{_where(path, doc.lineno)} ({n} lines)")
    return out


def long_comment_blocks(path: Path) -> list[str]:
    """``file:line (n lines)`` for each run of consecutive comment-only lines longer than
    ``MAX_LINES`` (tokenized, so a ``#`` inside a string is no comment)."""
    lines = set()
    with io.StringIO(path.read_text()) as f:
        for tok in tokenize.generate_tokens(f.readline):
            if tok.type == tokenize.COMMENT and not tok.line[: tok.start[1]].strip():
                lines.add(tok.start[0])
    out = []
    for start in sorted(lines):
        if start - 1 in lines:
            continue
        end = start
        while end + 1 in lines:
            end += 1
        if end - start + 1 > MAX_LINES:
            out.append(f"{_where(path, start)} ({end - start + 1} lines)")
    return out


def filer_names(path: Path) -> list[str]:
    """``file:line: name`` for each line of the file that names a filer."""
    out = []
    for i, line in enumerate(path.read_text().splitlines(), 1):
        for m in FILER_RE.finditer(line):
            out.append(f"{_where(path, i)}: {m.group(1)}")
    return out


def test_the_checks_see_what_they_look_for(tmp_path):
    sample = tmp_path / "sample.py"
    doc = "\n".join(["x"] * MAX_LINES)
    comment = "\n".join(["# x"] * (MAX_LINES + 1))
    sample.write_text(f'def f():\n    """{doc}\n    """\n\n\n{comment}\ns = "# not a comment"\n# 3M_2018_10K, Intel\'s\n')
    assert long_docstrings(sample) == ["sample.py:2 (21 lines)"]
    assert long_comment_blocks(sample) == ["sample.py:25 (21 lines)"]
    assert filer_names(sample) == ["sample.py:47: 3M", "sample.py:47: Intel"]
    sample.write_text('"""com.microsoft, an Intelligent BLOCK_SIZE, PEP 8, "ko" and imMMMune."""\n')
    assert filer_names(sample) == []


def test_no_docstring_over_20_lines():
    found = [hit for path in _files() for hit in long_docstrings(path)]
    assert not found, "docstrings over 20 lines (say the contract, not the history):\n" + "\n".join(found)


def test_no_comment_block_over_20_lines():
    found = [hit for path in _files() for hit in long_comment_blocks(path)]
    assert not found, "comment blocks over 20 lines:\n" + "\n".join(found)


def test_no_filer_named_in_product_code():
    found = [hit for path in _files() for hit in filer_names(path)]
    assert not found, "company or filer names (state the general case instead):\n" + "\n".join(found)


def test_the_readme_is_for_users_and_stays_under_400_lines():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 400, f"README.md has {len(lines)} lines: figures go to docs/measurements.md, history to CHANGELOG.md"
