"""Generate a cell-lookup question set from every table of real PDF corpora, with the gold
taken by an independent extractor: pdfplumber's tables, never this project's parser, so a
parse error of ours shows as a miss instead of agreeing with itself.

Two stages, both single-process (the extraction is slow; run it ``nice``):

1. extraction, cached per document under ``--cache``: every page's text from the PDF's text
   layer (pypdfium2, normalised as the metrics normalise: what ``check_questions`` reads), and
   pdfplumber's ruled tables (cells with their text and box) and words on the pages that draw
   at least ``--min-paths`` paths (a page without rules or shading has no table for
   pdfplumber's default strategy); ``--max-table-pages`` caps those per document (seeded);
2. generation from the cache. For each table block (the one-row tables that shaded rows make
   are stacked back into one), the row label is the row's first non-empty cell and the column
   label the header cell(s) of the column: the first row(s) of the table where they read as
   headers, else the text printed just above the region over that column (financial
   statements print their periods above the ruled region), else the header of a block above
   with the same column edges; a block where none is found is skipped, and so is a column
   whose label repeats. A cell is asked when its value is not empty, not pure punctuation, at
   most 80 characters, printed on its page, and rare in its document (the normalised value
   occurs at most ``--max-occurrences`` times in the whole document's text), and its row label
   is unique in the block. Questions are phrased several ways, half with the document named;
   at most ``--per-doc`` per document, sampled with a fixed seed.

    python -m scripts.datasets.lookup_questions --corpora DIR [DIR ...] [--cache DIR] [--out FILE]

Each corpus folder holds ``pdfs/``; doc_id is the file name without the extension.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import re
import sys
import time
import unicodedata
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from evidence_pipeline.evaluation.metrics import normalize
from evidence_pipeline.evaluation.questions import Question, write_questions

DEFAULT_OUT = Path("data/questions/lookup.jsonl")
DEFAULT_CACHE = Path("data/cache/lookup-tables")
EXTRACT_VERSION = 1  # bump when the cached extraction changes shape
SEED = 20240634

# ---------------------------------------------------------------------------------------------
# Stage 1: extraction (pdfplumber), cached per document


def _box(b: Iterable[float]) -> list[float]:
    return [round(float(v), 1) for v in b]


def pdfium_pages(pdf: Path) -> tuple[list[str], list[int]]:
    """Each page's text as the PDF's text layer holds it (pypdfium2, normalised as the metrics
    normalise: what ``check_questions`` reads) and its number of drawn paths."""
    import pypdfium2 as pdfium
    import pypdfium2.raw as pdfium_c

    texts: list[str] = []
    paths: list[int] = []
    doc = pdfium.PdfDocument(str(pdf))
    try:
        for i in range(len(doc)):
            page = doc[i]
            textpage = page.get_textpage()
            texts.append(normalize(textpage.get_text_range()))
            textpage.close()
            paths.append(sum(1 for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_PATH], max_depth=3)))
            page.close()
    finally:
        doc.close()
    return texts, paths


def table_pages(doc_id: str, paths: list[int], min_paths: int, max_pages: int) -> list[int]:
    """1-based pages worth asking pdfplumber for ruled tables: those with at least ``min_paths``
    drawn paths (a table ruled or shaded by fewer is rare, and pdfplumber's parse of a page is
    the slow step); at most ``max_pages`` of them (0: all), drawn with a seed per document."""
    candidates = [i for i, n in enumerate(paths, 1) if n >= min_paths]
    if max_pages and len(candidates) > max_pages:
        candidates = sorted(random.Random(f"{SEED}:{doc_id}").sample(candidates, max_pages))
    return candidates


def extract_document(pdf: Path, min_paths: int, max_pages: int, log=None, previous: dict | None = None) -> dict:
    """Page texts (pypdfium2) for all pages; pdfplumber's tables and words on the table pages.
    ``previous``: an extraction of the same file with other page limits; the pages it searched
    that are chosen again are taken from it, not parsed again."""
    import pdfplumber

    reuse = previous if previous and previous.get("version") == EXTRACT_VERSION else None
    if reuse:
        texts, paths = [p["text"] for p in reuse["pages"]], [p["paths"] for p in reuse["pages"]]
    else:
        texts, paths = pdfium_pages(pdf)
    chosen = table_pages(unicodedata.normalize("NFC", pdf.stem), paths, min_paths, max_pages)
    pages: list[dict] = [{"page": i, "text": t, "paths": n, "tables": []} for i, (t, n) in enumerate(zip(texts, paths, strict=True), 1)]
    if reuse:
        for i in chosen:
            if reuse["pages"][i - 1].get("searched"):
                pages[i - 1] = reuse["pages"][i - 1]
    todo = [i for i in chosen if not pages[i - 1].get("searched")]
    with pdfplumber.open(pdf) as doc:
        for done, i in enumerate(todo, 1):
            page = doc.pages[i - 1]
            entry = pages[i - 1]
            entry["searched"] = True
            try:
                for table in page.find_tables():
                    rows = []
                    # extract() walks table.rows and their cells in the same order
                    for row, cell_texts in zip(table.rows, table.extract(), strict=True):
                        rows.append(
                            [
                                None if box is None else {"text": text or "", "box": _box(box)}
                                for box, text in zip(row.cells, cell_texts, strict=True)
                            ]
                        )
                    entry["tables"].append({"box": _box(table.bbox), "rows": rows})
                if entry["tables"]:
                    entry["words"] = [[w["text"], *_box((w["x0"], w["top"], w["x1"], w["bottom"]))] for w in page.extract_words()]
            except Exception as exc:  # noqa: BLE001 - one bad page must not lose the document
                entry["error"] = f"{type(exc).__name__}: {exc}"
            finally:
                page.close()
            if log and done % 10 == 0:
                log(f"  {pdf.name}: {done}/{len(todo)} table pages")
    return {"version": EXTRACT_VERSION, "file": pdf.name, "min_paths": min_paths, "max_pages": max_pages, "pages": pages}


def _cache_path(cache: Path, pdf: Path) -> Path:
    digest = hashlib.blake2b(pdf.name.encode(), digest_size=6).hexdigest()
    return cache / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', pdf.stem)}-{digest}.json"


def load_or_extract(pdf: Path, cache: Path | None, min_paths: int, max_pages: int, log=None) -> dict:
    path = _cache_path(cache, pdf) if cache else None
    previous = None
    if path and path.is_file():
        previous = json.loads(path.read_text(encoding="utf-8"))
        if (previous.get("version"), previous.get("min_paths"), previous.get("max_pages")) == (EXTRACT_VERSION, min_paths, max_pages):
            return previous
    data = extract_document(pdf, min_paths, max_pages, log, previous)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, path)
    return data


def corpus_pdfs(corpora: list[Path]) -> list[Path]:
    """Every PDF of the corpora (``DIR/pdfs/*.pdf``, or ``DIR/*.pdf``), sorted by corpus then name."""
    found: list[Path] = []
    for corpus in sorted(corpora, key=lambda p: p.name):
        folder = corpus / "pdfs" if (corpus / "pdfs").is_dir() else corpus
        found += sorted((p for p in folder.glob("*.pdf") if p.is_file()), key=lambda p: p.name)
    return found


def _log(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Stage 2: questions from the cached tables

_PUNCT = re.compile(r"[\W_]+")
_NUMERIC = re.compile(r"[\s$€£%()\-–—+.,*]*")
_YEAR = re.compile(r"(19|20)\d\d")
_LEADERS = re.compile(r"(\s*\.){3,}.*$|[\s:.]+$")


def clean(text: str | None) -> str:
    """A cell's text on one line: white space collapsed, dot leaders and trailing colons cut."""
    text = " ".join((text or "").split())
    return _LEADERS.sub("", text).strip()


def is_value(text: str) -> bool:
    return bool(text) and not _PUNCT.fullmatch(text)


def is_numeric(text: str) -> bool:
    rest = _NUMERIC.sub("", text)
    return bool(rest) and rest.isdigit()


def is_header_text(text: str) -> bool:
    return not is_numeric(text) or bool(_YEAR.fullmatch(text.strip()))


@dataclass
class Cell:
    text: str
    box: list[float]


@dataclass
class Block:
    """Tables of a page stacked into one (shaded one-row tables) with the same column edges."""

    rows: list[list[Cell | None]]
    box: list[float]


def _signature(table: dict) -> list[float | None]:
    return [None if c is None else c["box"][0] for c in table["rows"][0]]


def _same_columns(a: list[float | None], b: list[float | None]) -> bool:
    return len(a) == len(b) and all(x is None or y is None or abs(x - y) < 2.0 for x, y in zip(a, b, strict=True))


def blocks_of(page: dict) -> list[Block]:
    blocks: list[Block] = []
    signature: list[float | None] = []
    for table in sorted(page["tables"], key=lambda t: (t["box"][1], t["box"][0])):
        rows = [[None if c is None else Cell(c["text"], c["box"]) for c in row] for row in table["rows"]]
        sig = _signature(table)
        last = blocks[-1] if blocks else None
        if last and _same_columns(signature, sig) and 0 <= table["box"][1] - last.box[3] < 30:
            last.rows += rows
            last.box = [min(last.box[0], table["box"][0]), last.box[1], max(last.box[2], table["box"][2]), table["box"][3]]
        else:
            blocks.append(Block(rows, list(table["box"])))
            signature = sig
    return blocks


def _texts(row: list[Cell | None]) -> list[str]:
    return [clean(c.text) if c else "" for c in row]


def _is_header_row(row: list[Cell | None]) -> bool:
    texts = _texts(row)
    rest = [t for t in texts[1:] if t]
    return bool(rest) and len([t for t in texts if t]) >= 2 and all(is_header_text(t) for t in rest)


def in_table_header(block: Block) -> tuple[int, dict[int, str]]:
    """(rows the header takes, column -> label) when the block's first row(s) read as headers."""
    first = 0
    while first < min(2, len(block.rows) - 1) and len([t for t in _texts(block.rows[first]) if t]) == 1:
        first += 1  # a title row spanning the table
    if first >= len(block.rows) or not _is_header_row(block.rows[first]):
        return 0, {}
    header = [block.rows[first]]
    second = first + 1
    if second < len(block.rows) - 1 and _is_header_row(block.rows[second]):
        spans = any(c is None for c in block.rows[first][1:])
        if spans or not _texts(block.rows[second])[0]:
            header.append(block.rows[second])
    labels: dict[int, list[str]] = {}
    for row in header:
        current = ""
        for i, cell in enumerate(row):
            if cell is not None:
                current = clean(cell.text)
            if i and current:  # a merged cell (None) carries the text of the cell it extends
                labels.setdefault(i, []).append(current)
    return second if len(header) == 1 else second + 1, {i: " ".join(dict.fromkeys(v)) for i, v in labels.items()}


def value_columns(rows: list[list[Cell | None]]) -> dict[int, tuple[float, float]]:
    """Column -> (left, right) zone: from the right edge of the previous value column (or of
    the label column) to this column's right edge."""
    right: dict[int, float] = {}
    for row in rows:
        texts = _texts(row)
        label = next((i for i, t in enumerate(texts) if t), None)
        for i, (cell, text) in enumerate(zip(row, texts, strict=True)):
            if cell is not None and label is not None and i > label and is_value(text):
                right[i] = max(right.get(i, 0.0), cell.box[2])
    if not right:
        return {}
    label_right = min((row[0].box[2] for row in rows if row and row[0] is not None), default=0.0)
    zones: dict[int, tuple[float, float]] = {}
    left = label_right
    for i in sorted(right):
        zones[i] = (left, right[i])
        left = right[i]
    return zones


def header_above(block: Block, page: dict, zones: dict[int, tuple[float, float]]) -> dict[int, str]:
    """Column labels printed just above the block (financial statements print the periods
    above the ruled or shaded region): up to 4 lines of words over the value columns."""
    if not zones:
        return {}
    x0, top, x1 = block.box[0], block.box[1], block.box[2]
    others = [t["box"] for t in page["tables"] if t["box"][3] <= top - 1]
    words = [
        w
        for w in page.get("words", [])
        if top - 90 <= w[2]
        and w[4] <= top + 2
        and x0 - 5 <= (w[1] + w[3]) / 2 <= x1 + 5
        and not any(b[0] <= (w[1] + w[3]) / 2 <= b[2] and b[1] <= (w[2] + w[4]) / 2 <= b[3] for b in others)
    ]
    lines: list[list[list]] = []
    for w in sorted(words, key=lambda w: (w[2], w[1])):
        if lines and abs(w[2] - lines[-1][0][2]) <= 3:
            lines[-1].append(w)
        else:
            lines.append([w])
    first_zone = min(z[0] for z in zones.values())
    labels: dict[int, list[str]] = {}
    kept = skipped = 0
    bottom_edge = top
    for line in reversed(lines):
        line_bottom, line_top = max(w[4] for w in line), min(w[2] for w in line)
        if bottom_edge - line_bottom > (20 if kept + skipped == 0 else 12) or kept == 4:
            break
        line.sort(key=lambda w: w[1])
        phrases: list[list] = []
        for w in line:
            if phrases and w[1] - phrases[-1][-1][3] <= 6:
                phrases[-1].append(w)
            else:
                phrases.append([w])
        if any(p[-1][3] - p[0][1] > 0.7 * (x1 - x0) for p in phrases):
            break  # a line of prose, not a header
        if any(p[-1][3] > first_zone and not is_header_text(" ".join(w[0] for w in p)) for p in phrases):
            # figures: a row of the table that the ruling or shading did not take in (shaded
            # tables shade every other row); look past two of them, never past a header line
            if kept or skipped == 2:
                break
            skipped += 1
            bottom_edge = line_top
            continue
        for phrase in phrases:
            px0, px1 = phrase[0][1], phrase[-1][3]
            centre = (px0 + px1) / 2
            if px0 < first_zone - 5:
                continue  # over the label column: "(Millions)", a caption, a title across the table
            covered = [i for i, (a, b) in zones.items() if px0 - 2 <= (a + b) / 2 <= px1 + 2]
            if not covered:
                covered = [i for i, (a, b) in zones.items() if a <= centre <= b]
            text = " ".join(w[0] for w in phrase)
            for i in covered:
                labels.setdefault(i, []).insert(0, text)
        kept += 1
        bottom_edge = line_top
    return {i: " ".join(v) for i, v in labels.items()}


@dataclass
class Candidate:
    page: int
    row: str
    column: str
    value: str
    order: int


def block_candidates(block: Block, page: dict, above: list[tuple[float, str]]) -> tuple[list[Candidate], bool]:
    """The asked cells of a block, and whether a header was found. ``above``: (right edge,
    label) of the columns of the blocks above on the page, for a block that continues a table
    under a section row (same columns, header printed once); the block's own are added to it."""
    skip, labels = in_table_header(block)
    rows = block.rows[skip:]
    zones = value_columns(rows)
    if not labels:
        labels = header_above(block, page, zones)
    labels = {i: clean(t) for i, t in labels.items() if re.search(r"[^\W_]", clean(t))}
    if labels:
        above += [(zones[i][1], t) for i, t in labels.items() if i in zones]
    else:
        for i, (_, right) in zones.items():
            label = next((t for edge, t in reversed(above) if abs(edge - right) < 4), None)
            if label:
                labels[i] = label
    if not labels:
        return [], False
    duplicated = {t for t, n in Counter(labels.values()).items() if n > 1}
    labels = {i: t for i, t in labels.items() if t not in duplicated}
    row_labels = Counter(next((t for t in _texts(r) if t), "") for r in rows)
    found: list[Candidate] = []
    for row in rows:
        texts = _texts(row)
        label_at = next((i for i, t in enumerate(texts) if t), None)
        if label_at is None:
            continue
        row_label = texts[label_at]
        if row_labels[row_label] > 1 or not re.search(r"[^\W\d_]", row_label) or len(row_label) > 100:
            continue
        for i, value in enumerate(texts):
            column = labels.get(i)
            if i <= label_at or not column or not is_value(value) or len(value) > 80 or len(column) > 100:
                continue
            if value.count("(") != value.count(")"):
                continue  # a figure the cell's edge cut: "(294"
            if normalize(value) in (normalize(row_label), normalize(column)):
                continue
            found.append(Candidate(page["page"], row_label, column, value, len(found)))
    return found, True


def document_candidates(data: dict, max_occurrences: int) -> tuple[list[Candidate], Counter]:
    """Every cell of the document's tables that may be asked, with the reasons the others were not."""
    whole = " \n ".join(p["text"] for p in data["pages"])
    stats: Counter = Counter()
    out: list[Candidate] = []
    seen_values: set[str] = set()
    for page in data["pages"]:
        above: list[tuple[float, str]] = []
        for block in blocks_of(page):
            found, headed = block_candidates(block, page, above)
            stats["blocks"] += 1
            stats["blocks without header"] += not headed
            for c in found:
                needle = normalize(c.value)
                if needle not in page["text"]:
                    stats["value not in the page text"] += 1
                elif whole.count(needle) > max_occurrences:
                    stats["value too common"] += 1
                elif needle in seen_values:
                    stats["value asked already"] += 1
                else:
                    seen_values.add(needle)
                    out.append(c)
    stats["candidates"] = len(out)
    return out, stats


# How a document is named in a question: company and filing, or the protocol's own number.
COMPANIES = {
    "AAPL": "Apple", "AMZN": "Amazon", "INTC": "Intel", "MSFT": "Microsoft", "NVDA": "NVIDIA",
    "3M": "3M", "AMAZON": "Amazon", "AMCOR": "Amcor", "AMERICANEXPRESS": "American Express", "MGMRESORTS": "MGM Resorts",
    "PFIZER": "Pfizer", "ULTABEAUTY": "Ulta Beauty", "ACTIVISIONBLIZZARD": "Activision Blizzard", "ADOBE": "Adobe",
    "AMD": "AMD", "AMERICANWATERWORKS": "American Water Works", "BESTBUY": "Best Buy", "BLOCK": "Block",
    "COCACOLA": "Coca-Cola", "CORNING": "Corning", "GENERALMILLS": "General Mills", "JOHNSON_JOHNSON": "Johnson & Johnson",
    "JPMORGAN": "JPMorgan Chase", "PEPSICO": "PepsiCo", "VERIZON": "Verizon",
}  # fmt: skip
PROTOCOLS = {
    "NCT00230607_Prot_000": "the Fabrazyme lactation study AGAL02603",
    "NCT00486889_Prot_000": "protocol AGLU03606 (alglucosidase alfa, infantile-onset Pompe disease)",
    "NCT00658021_Prot_000": "protocol H8O-MC-GWBQ (exenatide in adolescents)",
    "NCT00743340_Prot_001": "protocol GS-US-162-0112 (emtricitabine rollover)",
    "NCT00777920_Prot_000": "the ambrisentan study GS-US-300-0124",
    "NCT00810446_Prot_001": "the Mycobutin HRD joint survey (A0061007)",
    "NCT00867815_Prot_000": "the PDE5 inhibitor NAION case-crossover study",
    "NCT00935012_Prot_000": "the tafamidis protocol B3461026",
    "NCT00952380_Prot_000": "the dalteparin protocol FRAG-A001-201",
    "NCT01076205_Prot_SAP_000": "the AGIL adalimumab study",
    "NCT01090414_Prot_003": "the idelalisib extension study 101-99",
    "NCT01100034_Prot_001": "the etanercept paediatric psoriasis registry B1801035",
    "NCT01144338_Prot_000": "EXSCEL (exenatide once weekly)",
    "NCT01190189_Prot_000": "the HPV-067 EXT 015 vaccine study",
}
_FORMS = {"10K": "10-K", "10Q": "10-Q", "8K": "8-K", "EARNINGS": "earnings release"}


def document_name(doc_id: str) -> str:
    if doc_id in PROTOCOLS:
        return PROTOCOLS[doc_id]
    m = re.fullmatch(r"(NCT\d{8})_.*", doc_id)
    if m:
        return f"protocol {m.group(1)}"
    m = re.fullmatch(r"(\d{4}) (Q\d) ([A-Z]+)", doc_id)
    if m:  # sec-10q-dev: "2023 Q1 AAPL"
        return f"{COMPANIES.get(m.group(3), m.group(3))}'s {m.group(1)} {m.group(2)} 10-Q"
    m = re.fullmatch(r"(.+?)_(\d{4})(Q\d)?_(10K|10Q|8K|EARNINGS)(?:_dated-([\d-]+))?", doc_id, re.IGNORECASE)
    if m:
        company = COMPANIES.get(m.group(1).upper(), m.group(1).replace("_", " ").title())
        period = f"{m.group(2)} {m.group(3).upper()}" if m.group(3) else m.group(2)
        form = _FORMS[m.group(4).upper()]
        owner = f"{company}'" if company.endswith("s") else f"{company}'s"
        if m.group(5):
            return f"{owner} {form} dated {m.group(5)}"
        return f"{owner} {period} {form}"
    return doc_id


TEMPLATES_ANONYMOUS = (
    "What is the {row} for {column}?",
    "{row} — {column}?",
    "What value is reported for {row} under {column}?",
    "{column}: what is the figure for {row}?",
)
TEMPLATES_NAMED = (
    "In {doc}, what is the {column} of {row}?",
    "What does {doc} report for {row} under {column}?",
    "{doc}: {row}, {column}?",
    "According to {doc}, what is {row} ({column})?",
)


def _slug(doc_id: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", doc_id.lower()).strip("-")


def document_questions(doc_id: str, candidates: list[Candidate], per_doc: int) -> list[Question]:
    rng = random.Random(f"{SEED}:{doc_id}:questions")
    chosen = candidates if len(candidates) <= per_doc else rng.sample(candidates, per_doc)
    chosen.sort(key=lambda c: (c.page, c.order))
    name = document_name(doc_id)
    questions: list[Question] = []
    for n, c in enumerate(chosen, 1):
        named = rng.random() < 0.5
        template = rng.choice(TEMPLATES_NAMED if named else TEMPLATES_ANONYMOUS)
        text = template.format(doc=name, row=c.row, column=c.column)
        if normalize(c.value) in normalize(text):
            continue  # the question would give its answer away
        questions.append(
            Question(id=f"lk-{_slug(doc_id)}-{n:03d}", question=text, doc_id=doc_id, answers=[c.value], page=c.page, kind="lookup")
        )
    return questions


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m scripts.datasets.lookup_questions", description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpora", type=Path, nargs="+", required=True, help="corpus folders, each with pdfs/")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="folder for the per-document extraction")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--min-paths", type=int, default=8, help="search pages with at least this many drawn paths")
    ap.add_argument("--max-table-pages", type=int, default=0, help="search at most this many pages per document, seeded (0: all)")
    ap.add_argument("--per-doc", type=int, default=80, help="at most this many questions per document")
    ap.add_argument("--max-occurrences", type=int, default=2, help="ask a value printed at most this often in its document")
    ap.add_argument("--extract-only", action="store_true", help="fill the cache and stop")
    args = ap.parse_args(argv)
    missing = [c for c in args.corpora if not c.is_dir()]
    if missing:
        print(f"error: not a folder: {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    pdfs = corpus_pdfs(args.corpora)
    questions: list[Question] = []
    totals: Counter = Counter()
    for n, pdf in enumerate(pdfs, 1):
        started = time.monotonic()
        cached = _cache_path(args.cache, pdf).is_file() if args.cache else False
        data = load_or_extract(pdf, args.cache, args.min_paths, args.max_table_pages, _log)
        searched = sum(1 for p in data["pages"] if p.get("searched"))
        tables = sum(len(p["tables"]) for p in data["pages"])
        how = "cached" if cached else f"{time.monotonic() - started:.0f} s"
        line = f"[{n}/{len(pdfs)}] {pdf.name}: {len(data['pages'])} pages, {searched} searched, {tables} tables ({how})"
        if args.extract_only:
            _log(line)
            continue
        doc_id = unicodedata.normalize("NFC", pdf.stem)
        candidates, stats = document_candidates(data, args.max_occurrences)
        asked = document_questions(doc_id, candidates, args.per_doc)
        questions += asked
        totals += stats
        _log(f"{line}; {len(candidates)} cells to ask, {len(asked)} questions")
    if args.extract_only:
        return 0
    write_questions(questions, args.out)
    docs = Counter(q.doc_id for q in questions)
    print(f"{len(questions)} questions on {len(docs)} of {len(pdfs)} documents -> {args.out}")
    print("  " + ", ".join(f"{k}: {v}" for k, v in sorted(totals.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
