"""What ingest embeds, in word pieces: children, pieces of the texts they stand for
(``embed_text``: prefix and text) and the share of them that is the location prefix, per child
kind; and the pieces the model reads when children are embedded as ingest embeds them by
default (``mixed``: each distinct text and each distinct prefix once, ``Embedder.embed_children``).

    python -m evidence_pipeline.benchmark.child_tokens data/cache/eval/parsed/<parser>

reads every ParsedDoc JSON in the folder (the eval parse cache; ``make eval-sec`` fills it
for the 10-Qs) and builds units and children as ingest does. Embedding time grows with the
pieces, so this is the size of the embedding work without timing it.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from evidence_pipeline.benchmark.inputs import parsed_children
from evidence_pipeline.embedding import token_counter


def measure(folder: str | Path, doc_prefix: str = "") -> dict:
    counter = token_counter(None)
    children = pieces = prefix = docs = 0
    kinds: Counter = Counter()
    kind_pieces: Counter = Counter()
    unique: set[str] = set()
    parts: set[str] = set()  # what the mixed mode embeds: texts and prefixes, each once per call
    for _, kids in parsed_children(folder, doc_prefix):
        docs += 1
        counts = counter.counts([c.embed_text for c in kids])
        unique.update(c.embed_text for c in kids)  # Embedder.embed embeds each distinct text once
        parts.update(c.text for c in kids)
        parts.update(c.prefix for c in kids if c.prefix)
        children += len(kids)
        pieces += sum(counts)
        prefix += sum(counter.counts([c.prefix for c in kids]))
        for child, n in zip(kids, counts):
            kinds[child.kind] += 1
            kind_pieces[child.kind] += n
    return {
        "documents": docs,
        "children": children,
        "distinct_texts": len(unique),
        "word_pieces": pieces,
        "prefix_pieces": prefix,
        "prefix_share": round(prefix / pieces, 3) if pieces else 0.0,
        "distinct_parts": len(parts),
        "mixed_pieces": sum(counter.counts(sorted(parts))),
        "pieces_per_child": {k: round(kind_pieces[k] / kinds[k], 1) for k in sorted(kinds)},
    }


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description="Word pieces ingest embeds for the parsed documents in a folder.")
    ap.add_argument("parsed", help="folder of ParsedDoc JSON files, e.g. data/cache/eval/parsed/<parser>")
    ap.add_argument("--doc-prefix", default="", help="only documents whose id starts with this")
    args = ap.parse_args()
    print(json.dumps(measure(args.parsed, args.doc_prefix), indent=2))
