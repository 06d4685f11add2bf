"""The package's import graph: modules import only from their own layer or the layers below it
(``LAYERS``), no module imports itself back through others, and the plain core loads without
Docling or Dagster."""

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
    "parents", "contract", "bm25_query", "vocabulary", "fusion", "financial_statements", "context", "payload", "cards", "page_boxes",
]  # fmt: skip

# The package's layers, lowest first: a module imports from its own layer and the layers below,
# never from one above. A module belongs to the layer of the longest name here that is it or
# holds it ("" is the package's own ``__init__``).
LAYERS: list[tuple[str, set[str]]] = [
    ("records and vocabulary", {
        "errors", "settings", "text", "tables", "bm25_query", "vocabulary", "fusion", "financial_statements", "records",
        "work",
    }),
    ("evidence building", {
        "parser", "parser_port", "corpus", "page_boxes", "units", "table_notes", "splitting", "children", "cards", "payload", "sparse",
        "context", "tools.samples",
    }),
    ("model and store", {"embedding", "embedding_onnx", "embedding_quant", "store", "staleness", "parser.baseline_chunks"}),
    ("ingest", {"pipeline", "contract", "parents"}),
    ("search", {"retrieval"}),
    ("applications", {"", "service", "integrations", "orchestration", "evaluation"}),
    ("entry points", {"cli", "benchmark", "tools"}),
]  # fmt: skip

# Inside ``retrieval``: the query read once, the rules, then the stages in their order.
RETRIEVAL_LAYERS: list[set[str]] = [
    {"query", "rules"}, {"named_documents", "named_rows", "named_statements", "reference", "coverage"}, {"route"}, {"candidates"},
    {"fuse"}, {"expand", "focus", "budget"},
    {"flow"}, {""},
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
                return path[path.index(nxt) :] + [nxt]
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


def layer_of(module: str, layers: list[set[str]], package: str = "evidence_pipeline") -> int | None:
    """The index of the layer ``module`` belongs to (its longest listed prefix), None when unlisted."""
    name = module.removeprefix(package).removeprefix(".")
    best: tuple[int, int] | None = None
    for n, names in enumerate(layers):
        for prefix in names:
            if name == prefix or prefix and name.startswith(prefix + "."):
                if best is None or len(prefix) > best[1]:
                    best = (n, len(prefix))
    return best[0] if best else None


def upward_imports(graph: dict[str, set[str]], layers: list[set[str]], package: str = "evidence_pipeline") -> list[str]:
    """``importer -> imported`` for every import of a module from a higher layer than its own."""
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if layer_of(target, layers, package) is not None
        and layer_of(module, layers, package) is not None
        and layer_of(target, layers, package) > layer_of(module, layers, package)
    )


def test_every_module_has_a_layer():
    names = [names for _, names in LAYERS]
    assert [m for m in import_graph() if layer_of(m, names) is None] == []


def test_no_module_imports_from_a_layer_above_its_own():
    names = [names for _, names in LAYERS]
    assert upward_imports(import_graph(), names) == []


def test_the_search_stages_import_only_what_comes_before_them():
    graph = {m: t for m, t in import_graph().items() if m.startswith("evidence_pipeline.retrieval")}
    inside = {m: {t for t in targets if t.startswith("evidence_pipeline.retrieval")} for m, targets in graph.items()}
    assert all(layer_of(m, RETRIEVAL_LAYERS, "evidence_pipeline.retrieval") is not None for m in inside)
    assert upward_imports(inside, RETRIEVAL_LAYERS, "evidence_pipeline.retrieval") == []


def test_the_layer_check_sees_an_upward_import():
    layers = [{"records"}, {"store"}, {"retrieval"}]
    graph = {"evidence_pipeline.store.base": {"evidence_pipeline.retrieval.fuse", "evidence_pipeline.records"}}
    assert upward_imports(graph, layers) == ["evidence_pipeline.store.base -> evidence_pipeline.retrieval.fuse"]
    assert layer_of("evidence_pipeline", [{"x"}, {""}]) == 1 and layer_of("evidence_pipeline.records", [{""}]) is None


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


# The sample generator, the benchmarks and the evaluation are extras of the product: only the
# command line reaches them (lazily, for `generate`, `bench`, `eval`, `parse-quality`).
DEV_EXTRAS = ("evidence_pipeline.tools", "evidence_pipeline.benchmark", "evidence_pipeline.evaluation")


def test_only_the_command_line_imports_the_dev_extras():
    graph = import_graph()
    users = {
        module for module, targets in graph.items() if not module.startswith(DEV_EXTRAS) and any(t.startswith(DEV_EXTRAS) for t in targets)
    }
    assert users <= {"evidence_pipeline.cli"}, sorted(users)


def test_the_package_imports_nothing_from_the_repository_scripts():
    """``scripts/`` (dataset curation) is not installed: nothing in the package may need it."""
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else ([node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
            )
            assert not any(n == "scripts" or n.startswith("scripts.") for n in names), path
