"""The search service (``evidence-pipeline serve``): FastAPI + uvicorn, in the ``serve`` extra.

The plain-Python core never imports this package; this package imports FastAPI.
"""
