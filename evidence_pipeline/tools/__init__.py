"""Tools beside the pipeline: the sample-corpus generator (``tools.samples``).

Nothing in the runtime core imports this package; its extra dependencies come with
``pip install 'evidence_pipeline[tools]'``.
"""

TOOLS_EXTRA_HINT = "install the tools extra: pip install 'evidence_pipeline[tools]'"


def missing_tools_dependency(exc: ModuleNotFoundError) -> bool:
    """True when ``exc`` is a dependency of the tools extra that is not installed (reportlab)."""
    return (exc.name or "").split(".")[0] == "reportlab"
