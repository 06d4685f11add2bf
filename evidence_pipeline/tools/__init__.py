"""Tools beside the pipeline: the sample-corpus generator (``tools.samples``) and a local
Celery backfill (``tools.celery_backfill``, on ``tools.celery_local``).

Nothing in the runtime core imports this package; its extra dependencies come with
``pip install 'evidence_pipeline[tools]'`` (the Celery tools: the ``celery`` extra).
"""

from __future__ import annotations

import importlib.util

TOOLS_EXTRA = ("reportlab",)


def missing_tools() -> str | None:
    """None when the ``tools`` extra is installed; otherwise one line saying what to install."""
    missing = [name for name in TOOLS_EXTRA if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return f"{', '.join(missing)} not installed; install the tools extra: pip install 'evidence_pipeline[tools]'"
