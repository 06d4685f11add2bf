"""Adapters for the tools applications already use: LangChain and LlamaIndex retrievers,
an MCP server for LLM agents.

Each module needs its own extra (``pip install 'evidence_pipeline[langchain]'``,
``[llamaindex]``, ``[mcp]``) and is imported only by whoever uses it: the core never
imports this package, so the pipeline runs without any of them.
"""
