"""Parser quality and speed: ``evidence-pipeline parse-quality``.

Three measurements of ``DoclingParser`` (the rule route unless Docling weights are set):

1. ``docling_tests``: tables against the DoclingDocument JSON that Docling's ML pipeline
   wrote for its own test PDFs (``docling_tests``).
2. ``generated``: the SOP corpus of ``evidence_pipeline.tools.samples``, whose truth is
   exact (``generated``).
3. ``robustness``: the shared corpora convert or fail alone; speed, memory, 10-Q
   statements (``robustness``; ``memory`` holds the RSS readings and the fresh-process probe).

``metrics`` holds the comparison measures, ``models`` the typed report, ``rendering`` its
console form and ``runner`` one run with one parser instance.

Three commands list what a change touched, file by file: ``digest`` (one digest per file of its
whole parse), ``table_rules`` (the tables the unit builder does not keep as tables) and
``statements`` (the tables that are primary financial statements); the last two share their
command line (``listing``).
"""

from evidence_pipeline.evaluation.parser_quality.models import ParserQualityReport
from evidence_pipeline.evaluation.parser_quality.rendering import render_text
from evidence_pipeline.evaluation.parser_quality.runner import run_report

__all__ = ["ParserQualityReport", "render_text", "run_report"]
