"""The documents a benchmark command measures: the paths it was given, or the generated sample corpus."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence


def documents(paths: Sequence[str], workdir: Path) -> list[Path]:
    """The documents under ``paths`` (files or folders) in name order; with no paths, the sample
    corpus generated into ``workdir/corpus``."""
    if paths:
        from evidence_pipeline.corpus import expand_paths

        return sorted(expand_paths(paths))
    from evidence_pipeline.tools.samples.corpus import generate_corpus

    return sorted(generate_corpus(workdir / "corpus"))
