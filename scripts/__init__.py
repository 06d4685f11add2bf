"""Developer scripts kept beside the package, never installed (setuptools finds only ``evidence_pipeline*``)."""
