"""Near-twin SOPs: each sample document again on other lines, sites or suites, with other values.

A twin keeps its base document's procedure, sections and table shapes (rows, columns,
captions) and differs where real sibling SOPs differ:

- its ID is of the same family and easy to confuse with it (``SOP-8812`` -> ``SOP-8821``,
  ``SOP-QA-070`` -> ``SOP-QA-700``): digit permutations first;
- its title differs only by the distinguishing part (``..., Line 3``), and the scope
  paragraph names that line, suite or laboratory;
- every number in its table cells (but the first column's row labels) and footnotes is
  shifted, and so is every number in its prose questions' answers, where printed.

Shifts are deterministic (``NumberShifter``): a number printed twice in one twin moves the same
way; the value an answer gets in one twin is printed by none of its siblings, and a number never
has the same value in two twins. A twin keeps those of its base document's questions (answers
shifted) whose every answer is printed in the twin and in none of its siblings and whose text
names no number the twin no longer prints; ``evaluation.twin_questions`` phrases them with the
document's ID or title.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from evidence_pipeline.tools.samples.docs_manufacturing import calibration_doc, hold_time_doc, lnp_doc
from evidence_pipeline.tools.samples.docs_quality import endotoxin_doc, toc_doc, visual_inspection_doc
from evidence_pipeline.tools.samples.spec import Columns, DocSpec, Fig, H, P, Q, T
from evidence_pipeline.tools.samples.truth import SampleTruth

DEFAULT_VARIANTS = 7
MAX_VARIANTS = 12
STEP = 0.03  # one shift step, as a share of the number
MANIFEST = "twins.json"

# A number as printed: "1,200", "0.093", "17.5". Not part of a word or an identifier
# ("KH2PO4", "316L", "2R", "USP <85>"), not a section number ("2.6.14"), not a leading
# term of a ratio ("1:350" moves its 350 only).
_NUMBER = re.compile(r"(?<![A-Za-z0-9_.,<])(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![A-Za-z0-9_>:]|[.,]\d)")


@dataclass(frozen=True)
class TwinFamily:
    """How the twins of one sample document differ from it.

    ``label`` and the replacement texts of ``prose`` hold ``{n}``, the variant number.
    """

    build: Callable[[], DocSpec]
    short_title: str  # the part of the title people name the procedure by
    label: str  # the distinguishing part appended to the title: "Line {n}"
    prose: tuple[tuple[str, str], ...]  # (base text, twin text) replaced in every paragraph


FAMILIES: tuple[TwinFamily, ...] = (
    TwinFamily(
        lnp_doc,
        "Lipid Nanoparticle Formulation",
        "Line {n}",
        (("mixing skid MX-300 in suite B2", "mixing skid MX-30{n} of line {n} in suite B2"),),
    ),
    TwinFamily(visual_inspection_doc, "Visual Inspection", "Fill Line FL-{n}", (("on fill line FL-2", "on fill line FL-{n}"),)),
    TwinFamily(endotoxin_doc, "Endotoxin Testing", "Laboratory M-1{n}", (("laboratory M-12", "laboratory M-1{n}"),)),
    TwinFamily(
        calibration_doc,
        "Calibration of Process Instruments",
        "Building {n}",
        (("manufacturing equipment, utilities and cold rooms", "manufacturing equipment, utilities and cold rooms of building {n}"),),
    ),
    TwinFamily(hold_time_doc, "Hold Time Limits", "Suite P{n}", (("purification suites P1 and P2", "purification suite P{n}"),)),
    TwinFamily(toc_doc, "Cleaning Verification", "Suite C{n}", (("in suites B2 and C4", "in suite C{n}"),)),
)


@dataclass
class Twin:
    """One generated twin: its document, where it comes from, and (after ``render``) its truth."""

    spec: DocSpec
    base_id: str
    variant: int
    label: str
    short_title: str
    truth: SampleTruth | None = None
    pdf: bytes = b""

    @property
    def doc_id(self) -> str:
        return self.spec.doc_id

    @property
    def title(self) -> str:
        return self.spec.title

    @property
    def title_part(self) -> str:
        """The distinctive part of the title a reader names it by: "Lipid Nanoparticle Formulation, Line 3"."""
        return f"{self.short_title}, {self.label}"


# --- numbers -------------------------------------------------------------------------------


def _format(m: int, token: str) -> str:
    """``m`` (in units of ``token``'s last printed digit) printed like ``token``: same decimals,
    thousands commas and zero padding."""
    decimals = len(token.split(".")[1]) if "." in token else 0
    digits = str(m).rjust(decimals + 1, "0")
    whole, frac = (digits[:-decimals], digits[-decimals:]) if decimals else (digits, "")
    if "," in token:
        whole = f"{int(whole):,}"
    elif not decimals and token.startswith("0"):
        whole = whole.zfill(len(token))  # "CR-03" stays two digits wide
    return f"{whole}.{frac}" if frac else whole


class NumberShifter:
    """Moves the numbers of one family's twins so that a sibling never prints a twin's answers.

    The numbers of the base document's answers are placed first, for every twin in turn: each
    gets a value no twin holds yet and the base document does not print. Every other number
    then gets a value that no twin's answer holds and that the same number has in no sibling.
    A number moves in steps of 3% (at least one unit
    of its last printed digit), up or down first as the seed draws, to the nearest free value.
    """

    def __init__(self, base: DocSpec, doc_ids: list[str], seed: int = 0) -> None:
        self.seed = seed
        self.maps: dict[str, dict[str, str]] = {doc_id: {} for doc_id in doc_ids}
        self.answer_values: set[str] = set()
        self.given: dict[str, set[str]] = {}  # values each number has been given, over the twins
        answer_numbers = sorted({n for q in base.questions for a in q.answers for n in numbers_in(a)})
        printed = set(numbers_in(spec_text(base)))
        for doc_id in doc_ids:
            for token in answer_numbers:
                value = self._pick(token, doc_id, printed | self.answer_values)
                self.answer_values.add(value)
                self.maps[doc_id][token] = value

    def for_twin(self, doc_id: str) -> Callable[[str], str]:
        """``shift(text)`` for one twin: the same number always moves to the same value in it."""
        mapping = self.maps[doc_id]

        def move(token: str) -> str:
            if token not in mapping:
                given = self.given.setdefault(token, set())
                mapping[token] = self._pick(token, doc_id, self.answer_values | given)
                given.add(mapping[token])
            return mapping[token]

        return lambda text: _NUMBER.sub(lambda m: move(m.group()), text)

    def _pick(self, token: str, doc_id: str, taken: set[str]) -> str:
        n = int(token.replace(",", "").replace(".", ""))  # in units of the last printed digit
        if n == 0:
            return token  # the zero of a range ("0 to 20 L/min") stays
        step = max(1, round(n * STEP))
        up_first = random.Random(f"{self.seed}/{doc_id}/{token}").random() < 0.5
        for k in itertools.count(1):
            for m in (n + k * step, n - k * step) if up_first else (n - k * step, n + k * step):
                if m > 0 and (value := _format(m, token)) not in taken:
                    return value
        raise AssertionError("unreachable")


def numbers_in(text: str) -> list[str]:
    return _NUMBER.findall(text)


def _norm(text: str) -> str:
    return " ".join(text.split())


def occurs(needle: str, haystack: str) -> bool:
    """Whole-token occurrence after white-space normalisation: "17" is not in "17.5" or "1117"."""
    pattern = r"(?<![\w.])" + re.escape(_norm(needle)) + r"(?!\w|[.,]\d)"
    return re.search(pattern, haystack) is not None


def _replace_token(text: str, old: str, new: str) -> str:
    return re.sub(r"(?<![\w.])" + re.escape(old) + r"(?!\w|[.,]\d)", lambda _: new, text)


# --- identifiers -----------------------------------------------------------------------------


def twin_ids(base_id: str, count: int, used: set[str]) -> list[str]:
    """``count`` IDs of ``base_id``'s family that are not in ``used`` (which they are added to).

    Permutations of the number's digits first, nearest first (``SOP-8812`` -> ``SOP-8821``,
    ``SOP-8281``, ...); then the permutations of the next numbers (``SOP-QA-007`` -> ``SOP-QA-008``,
    ``SOP-QA-080``, ``SOP-QA-800``)."""
    match = re.fullmatch(r"(.*?)(\d+)", base_id)
    if match is None:
        raise ValueError(f"{base_id}: a twin's ID needs a number at its end")
    prefix, digits = match.groups()
    width, base = len(digits), int(digits)
    out: list[str] = []
    for delta in itertools.count():
        if base + delta >= 10**width:
            raise ValueError(f"{base_id}: not enough {width}-digit IDs for {count} twins")
        start = str(base + delta).zfill(width)
        numbers = sorted({"".join(p) for p in itertools.permutations(start)}, key=lambda s: (abs(int(s) - base), s))
        for number in numbers:
            doc_id = f"{prefix}{number}"
            if doc_id not in used:
                used.add(doc_id)
                out.append(doc_id)
                if len(out) == count:
                    return out
    raise AssertionError("unreachable")


# --- one twin ------------------------------------------------------------------------------------


def _table_keys(spec: DocSpec) -> set[str]:
    return {t.key for t in spec.tables()}


def make_twin(family: TwinFamily, variant: int, doc_id: str, shifter: NumberShifter) -> Twin:
    """The twin ``variant`` of ``family``'s document, named ``doc_id``; its questions unfiltered."""
    base = family.build()
    label = family.label.format(n=variant)
    shift = shifter.for_twin(doc_id)

    tables = _table_keys(base)
    # Answers printed in prose move where they are printed; table answers move with their cells.
    prose_answers = sorted(
        {a for q in base.questions if q.at.split("/")[0] not in tables for a in q.answers if numbers_in(a)},
        key=len,
        reverse=True,
    )
    applied = {old: False for old, _ in family.prose}

    def paragraph(p: P) -> P:
        text = p.text
        for old, new in family.prose:
            if old in text:
                text = text.replace(old, new.format(n=variant))
                applied[old] = True
        for answer in prose_answers:
            text = _replace_token(text, answer, shift(answer))
        return replace(p, text=text)

    def table(t: T) -> T:
        rows = [[row[0], *(shift(cell) for cell in row[1:])] for row in t.body_rows]
        notes = [(marker, shift(note)) for marker, note in t.footnotes]
        return replace(t, body_rows=rows, footnotes=notes)

    blocks = []
    for b in base.blocks:
        if isinstance(b, P):
            blocks.append(paragraph(b))
        elif isinstance(b, T):
            blocks.append(table(b))
        elif isinstance(b, Columns):
            blocks.append(Columns([paragraph(x) if isinstance(x, P) else x for x in b.blocks]))
        else:
            blocks.append(b)
    missing = [old for old, done in applied.items() if not done]
    if missing:
        raise ValueError(f"{base.doc_id}: distinguishing text not found: {missing}")
    questions = [
        replace(q, question=q.question.replace(base.doc_id, doc_id), answers=[shift(a) for a in q.answers]) for q in base.questions
    ]
    spec = replace(base, doc_id=doc_id, title=f"{base.title}, {label}", blocks=blocks, questions=questions)
    return Twin(spec, base.doc_id, variant, label, family.short_title)


def spec_text(spec: DocSpec, *, fixed_only: bool = False) -> str:
    """The document's printed text (normalised), or with ``fixed_only`` only the parts a twin
    never changes: title line, headings, captions, table headers and row labels."""
    parts = [spec.title_line]
    flat = [x for b in spec.blocks for x in (b.blocks if isinstance(b, Columns) else [b])]
    for b in flat:
        if isinstance(b, H):
            parts.append(f"{b.number} {b.title}")
        elif isinstance(b, Fig):
            parts.append(b.caption)
        elif isinstance(b, P) and not fixed_only:
            parts.append(b.plain)
        elif isinstance(b, T):
            parts.append(b.caption)
            parts += [c for row in b.header_rows for c in row]
            parts += [row[0] for row in b.body_rows]
            if not fixed_only:
                parts += [c for row in b.body_rows for c in row[1:]]
                parts += [f"{m} {note}" for m, note in b.footnotes]
    return _norm(" \n ".join(parts))


def keeps_question(q: Q, own: DocSpec, siblings: list[DocSpec]) -> bool:
    """Whether ``q`` tells ``own`` from every sibling: each answer printed in ``own`` and in no
    sibling, and every number the question names still printed in ``own``'s fixed text."""
    text = spec_text(own)
    others = [spec_text(s) for s in siblings]
    if not all(occurs(a, text) and not any(occurs(a, o) for o in others) for a in q.answers):
        return False
    fixed = spec_text(own, fixed_only=True)
    return all(occurs(n, fixed) for n in numbers_in(q.question))


def family_twins(family: TwinFamily, ids: list[str], seed: int = 0) -> list[Twin]:
    """The twins of one family (variants 1..len(ids)), each keeping the questions that tell it apart."""
    shifter = NumberShifter(family.build(), ids, seed)
    twins = [make_twin(family, v, doc_id, shifter) for v, doc_id in enumerate(ids, start=1)]
    for twin in twins:
        siblings = [t.spec for t in twins if t is not twin]
        twin.spec.questions = [q for q in twin.spec.questions if keeps_question(q, twin.spec, siblings)]
    return twins


def build_twins(variants: int = DEFAULT_VARIANTS, seed: int = 0, families: tuple[TwinFamily, ...] = FAMILIES) -> list[Twin]:
    """Every family's twins, specs only (``render_twins`` draws them). IDs never reuse a base ID."""
    if not 2 <= variants <= MAX_VARIANTS:
        raise ValueError(f"variants must be between 2 and {MAX_VARIANTS}, not {variants}")
    bases = [f.build() for f in families]
    used = {b.doc_id for b in bases}
    twins: list[Twin] = []
    for family, base in zip(families, bases):
        twins += family_twins(family, twin_ids(base.doc_id, variants, used), seed)
    return twins


def render_twins(twins: list[Twin]) -> list[Twin]:
    """Draw each twin's PDF and record its truth (in place; returns ``twins``)."""
    from evidence_pipeline.tools.samples.render import render

    for twin in twins:
        twin.pdf, twin.truth = render(twin.spec)
    return twins


def manifest(twins: list[Twin]) -> list[dict]:
    """One record per twin: ID, base, variant, label, titles and its siblings' IDs."""
    by_base: dict[str, list[str]] = {}
    for t in twins:
        by_base.setdefault(t.base_id, []).append(t.doc_id)
    return [
        {
            "doc_id": t.doc_id,
            "base_id": t.base_id,
            "variant": t.variant,
            "label": t.label,
            "title": t.title,
            "title_part": t.title_part,
            "siblings": [d for d in by_base[t.base_id] if d != t.doc_id],
        }
        for t in twins
    ]


def write_twins(out_dir: Path, variants: int = DEFAULT_VARIANTS, seed: int = 0) -> list[Twin]:
    """Write ``out_dir/corpus/*.pdf``, ``out_dir/truth/*.json`` and ``out_dir/truth/twins.json``."""
    twins = render_twins(build_twins(variants, seed))
    corpus, truth_dir = Path(out_dir) / "corpus", Path(out_dir) / "truth"
    corpus.mkdir(parents=True, exist_ok=True)
    truth_dir.mkdir(parents=True, exist_ok=True)
    for twin in twins:
        assert twin.truth is not None
        (corpus / f"{twin.doc_id}.pdf").write_bytes(twin.pdf)
        (truth_dir / f"{twin.doc_id}.json").write_text(twin.truth.model_dump_json(indent=2) + "\n", encoding="utf-8")
    text = json.dumps(manifest(twins), indent=2, ensure_ascii=False)
    (truth_dir / MANIFEST).write_text(text + "\n", encoding="utf-8")
    return twins


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        print("usage: python -m evidence_pipeline.tools.samples.twins OUT_DIR [VARIANTS]", file=sys.stderr)
        return 2
    twins = write_twins(Path(args[0]), int(args[1]) if len(args) == 2 else DEFAULT_VARIANTS)
    print(f"wrote {len(twins)} twin documents to {Path(args[0]) / 'corpus'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
