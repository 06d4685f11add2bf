"""The edit-test loop's memo of parses of the shared corpora (``make test-fast`` only).

Parsing real documents is half of ``make test-fast``'s work, and it is the same work every run
until the parser changes. With ``EVIDENCE_TEST_PARSE_MEMO`` naming a folder, ``DoclingParser.parse``
of a file under the shared corpora answers from that folder when the same parse was made before
by the same code:

- the key is the file's bytes, the arguments (path, ``doc_id``, ``pages``), the parser's name and
  settings, and the **code fingerprint**: the installed distributions' versions and the bytes of every
  ``evidence_pipeline`` module the parser package imports, directly or through others, at module
  level or inside a function, and of the packages above them. An edit to any of them starts a new memo, so the parser's tests
  parse again after every change to the parser.
- only the shared corpora's files are kept: they never change, and no test alters their parse
  by patching the parser. Generated and hostile files are parsed every time, as are failures.
- a test file marked ``pytest.mark.parses_afresh`` (one that parses a file twice to compare the
  two, or counts the parser's work) always parses.

``make test`` leaves the memo off: the full suite, and CI, parse everything afresh.
"""

from __future__ import annotations

import ast
import hashlib
import os
import shutil
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "evidence_pipeline"


def module_file(package: Path, name: str) -> Path | None:
    """The source file of module ``name`` (``evidence_pipeline.…``) in ``package``, None where it has none."""
    base = package.joinpath(*name.split(".")[1:])
    for candidate in (base / "__init__.py", base.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def imported_modules(package: Path, name: str) -> set[str]:
    """The ``evidence_pipeline`` modules module ``name`` imports anywhere in its body, relative
    imports resolved; ``from package import module`` counts the module, and the package only
    where another name comes from the package itself."""
    path = module_file(package, name)
    assert path is not None, name
    found: set[str] = set()
    parent = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("evidence_pipeline"))
        elif isinstance(node, ast.ImportFrom):
            anchor = parent.rsplit(".", node.level - 1)[0] if node.level > 1 else parent
            base = (f"{anchor}.{node.module}" if node.module else anchor) if node.level else node.module or ""
            if base.startswith("evidence_pipeline"):
                modules = {f"{base}.{a.name}" for a in node.names if module_file(package, f"{base}.{a.name}")}
                found |= modules
                if len(modules) < len(node.names):  # a name defined in ``base`` itself
                    found.add(base)
    return {m for m in found if module_file(package, m) is not None}


def parser_closure(package: Path = PACKAGE) -> set[str]:
    """Every module of the parser package, every ``evidence_pipeline`` module they import,
    directly or through others, and the packages above them (their own code runs on import;
    what they import for other callers does not count)."""
    todo = ["evidence_pipeline.parser"] + [
        f"evidence_pipeline.parser.{p.stem}" for p in (package / "parser").glob("*.py") if p.stem != "__init__"
    ]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name not in seen and module_file(package, name) is not None:
            seen.add(name)
            todo += sorted(imported_modules(package, name) - seen)
    return seen | {name.rsplit(".", i)[0] for name in seen for i in range(1, name.count(".") + 1)}


def code_fingerprint(package: Path = PACKAGE) -> str:
    """The installed distributions' versions and the bytes of ``parser_closure``'s modules."""
    from importlib.metadata import distributions

    installed = sorted(f"{d.metadata['Name']}=={d.version}" for d in distributions())
    digest = hashlib.sha256("\n".join(installed).encode())
    for name in sorted(parser_closure(package)):
        digest.update(f"\n{name}\n".encode())
        digest.update(module_file(package, name).read_bytes())  # type: ignore[union-attr]
    return digest.hexdigest()[:24]


# Test files whose tests parse afresh (``pytest.mark.parses_afresh``, gathered by conftest at
# collection): those that compare a parse with another parse of the same file, or count the work.
AFRESH_FILES: set[str] = set()


def afresh() -> bool:
    """Whether the test running now (its set-up included) is in a file marked ``parses_afresh``."""
    current = os.environ.get("PYTEST_CURRENT_TEST", "")
    return current.split("::", 1)[0] in AFRESH_FILES


def install(folder: Path, corpora: Path) -> None:
    """Answer ``DoclingParser.parse`` of files under ``corpora`` from ``folder`` (see the module)."""
    from evidence_pipeline.parser.docling_parser import DoclingParser
    from evidence_pipeline.records import ParsedDoc

    original = DoclingParser.parse
    memo = folder / code_fingerprint()
    corpora = corpora.resolve()
    for stale in folder.glob("*"):  # memos of other code: never read again
        if stale.is_dir() and stale != memo:
            shutil.rmtree(stale, ignore_errors=True)

    def parse(self, path, doc_id=None, pages=None):
        source = Path(path).resolve()
        if not source.is_relative_to(corpora) or not source.is_file() or afresh():
            return original(self, path, doc_id, pages)
        key = hashlib.sha256(source.read_bytes())
        key.update(repr((str(path), doc_id, pages, self.name, self.settings.model_dump_json())).encode())
        entry = memo / f"{key.hexdigest()[:32]}.json"
        if entry.is_file():
            return ParsedDoc.model_validate_json(entry.read_text())
        doc = original(self, path, doc_id, pages)
        memo.mkdir(parents=True, exist_ok=True)
        part = entry.with_suffix(f".{os.getpid()}.part")
        part.write_text(doc.model_dump_json())
        part.replace(entry)  # whole or absent, whichever worker writes it
        return doc

    DoclingParser.parse = parse  # type: ignore[method-assign]
