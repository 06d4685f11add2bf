"""Footnotes of a table that the parser did not label as such.

A schedule table marks its row labels with superscript letters ("Vital Signsᵃ") and prints
the notes after the table, often at the top of the next page, in small type that reads as
plain paragraphs; several notes may share one paragraph ("a Temperature ... b Exam of ...").
The table's own markers say which notes to look for: the paragraphs right after the table
that open with one of its unresolved markers are its notes, split at each further marker
in the order the markers run (a, b, c ...), so a word "a" in a sentence is never a marker.
"""

from __future__ import annotations

from evidence_pipeline.records import Table, TextBlock
from evidence_pipeline.tables import footnote_map, norm_mark, split_marker

_TEXT_LABELS = {"paragraph", "footnote", "list_item", "other"}


def table_marks(cells: list[list[str]]) -> list[str]:
    """The footnote markers a table's cells carry, normalised ("ᵃ" -> "a"), in marker order."""
    marks: set[str] = set()
    for row in cells:
        for text in row:
            _, mark = split_marker(text)
            if mark:
                marks.add(norm_mark(mark))
    return sorted(marks, key=_order)


def _order(mark: str) -> tuple[int, int | str]:
    if mark.isdigit():
        return (1, int(mark))
    return (0, mark) if mark.isalpha() else (2, mark)


def _opening_mark(text: str, marks: list[str]) -> str | None:
    head = text.lstrip()
    for mark in marks:
        if mark.isalnum():
            if head == mark or head.startswith(mark + " "):
                return mark
        elif head.startswith(mark):
            return mark
    return None


def split_notes(text: str, marks: list[str]) -> list[str]:
    """'a Temperature ... b Exam of heart' -> ['a Temperature ...', 'b Exam of heart'] for
    marks ['a', 'b']: a note starts where the next expected marker stands alone as a word."""
    words = text.split()
    notes: list[list[str]] = []
    waiting = list(marks)
    for i, word in enumerate(words):
        nxt = words[i + 1] if i + 1 < len(words) else ""
        opens = None
        for k, mark in enumerate(waiting[:3]):  # a missing note may be skipped, not many
            if (mark.isalnum() and word == mark and nxt[:1] and not nxt[:1].islower()) or (
                not mark.isalnum() and word.startswith(mark) and len(word) > len(mark)
            ):
                opens = k
                break
        if opens is not None and (notes or i == 0):
            del waiting[: opens + 1]
            notes.append([word])
        elif notes:
            notes[-1].append(word)
        else:
            return []
    return [" ".join(n) for n in notes]


def notes_after(items: list, start: int, table: Table, cells: list[list[str]], known: list[str], used: set[int]) -> list[str]:
    """The notes for ``table``'s unresolved markers in the text blocks from ``items[start]`` on
    (its last page or the next); the blocks taken are added to ``used``."""
    resolved = footnote_map(known)
    marks = [m for m in table_marks(cells) if m not in resolved]
    if not marks:
        return []
    last_page = table.pages[-1] if table.pages else table.page
    notes: list[str] = []
    for j in range(start, len(items)):
        block = items[j]
        if not isinstance(block, TextBlock) or block.label not in _TEXT_LABELS or j in used:
            break
        if last_page is not None and block.page is not None and block.page > last_page + 1:
            break
        text = block.text.strip()
        if _opening_mark(text, marks) is None:
            if notes and text[:1].islower():  # a note's wrapped line read as its own paragraph
                notes[-1] = f"{notes[-1]} {text}"
                used.add(j)
                continue
            break
        parts = split_notes(text, marks)
        if not parts:
            break
        notes += parts
        used.add(j)
        done = set(footnote_map(notes))
        marks = [m for m in marks if m not in done]
        if not marks:
            break
    return notes
