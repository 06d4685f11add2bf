"""The package's import graph: no module imports itself back through others, and the plain
core loads without Docling or Dagster."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import evidence_pipeline

PACKAGE = Path(evidence_pipeline.__file__).parent
CORE = [
    "units", "records", "children", "splitting", "sparse", "retrieval", "pipeline", "corpus", "text", "parser_port",
    "parents", "contract", "bm25_query",
]  # fmt: skip
# The framework adapters' and the service's own dependencies (extras): the core runs without them.
INTEGRATION_LIBRARIES = {"langchain_core", "llama_index", "mcp", "fastapi", "uvicorn", "starlette"}


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = ["evidence_pipeline", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports anywhere in its source (lazy imports and
    ``TYPE_CHECKING`` blocks too). ``from a import b`` names ``a.b`` when that is a module."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for a in node.names:
                    sub = f"{node.module}.{a.name}"
                    targets.add(sub if sub in modules else node.module)
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as a path (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = 2
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_package_has_no_import_cycle():
    graph = import_graph()
    assert "evidence_pipeline.records" in graph["evidence_pipeline.units"]  # the walk sees imports
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])


def test_find_cycle_reports_a_circle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_core_imports_without_docling_or_dagster():
    code = (
        "import json, sys\n"
        + "".join(f"import evidence_pipeline.{m}\n" for m in CORE)
        + "print(json.dumps(sorted(m for m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    loaded = {m.split(".")[0] for m in json.loads(out.stdout)}
    assert "evidence_pipeline" in loaded
    assert not loaded & {"docling", "docling_core", "docling_parse", "dagster", *INTEGRATION_LIBRARIES}


def test_only_the_command_line_imports_the_integrations():
    graph = import_graph()
    users = {
        module
        for module, targets in graph.items()
        if not module.startswith("evidence_pipeline.integrations") and any(t.startswith("evidence_pipeline.integrations") for t in targets)
    }
    assert users == {"evidence_pipeline.cli"}  # `evidence-pipeline mcp`, imported when that command runs


def test_no_parser_module_is_long():
    for path in (PACKAGE / "parser").glob("*.py"):
        assert len(path.read_text().splitlines()) <= 450, path.name
