"""``python -m evidence_pipeline.tools.samples OUT_DIR``."""

from evidence_pipeline.tools.samples.corpus import main

raise SystemExit(main())
