"""What the parser must know of scripts other than Latin: Hangul, CJK, Arabic and Hebrew.

- Hangul and CJK: one character is a syllable or a word, so a two-character heading ("목적",
  purpose) is a whole heading, and Korean sets its word spaces tight.
- Arabic and Hebrew: docling-parse already gives right-to-left lines in logical order, but a
  PDF whose font maps glyphs to the Unicode *presentation forms* (contextual Arabic letters,
  Hebrew ligatures) yields text that looks right and matches nothing typed: those are folded
  back into their letters.
"""

from __future__ import annotations

import re
import unicodedata

# Hangul syllables, CJK ideographs, kana.
WIDE_LETTER_RE = re.compile(r"[\uac00-\ud7a3\u3400-\u4dbf\u4e00-\u9fff\u3040-\u30ff]")
HANGUL_RE = re.compile(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
# Hebrew (FB1D-FB4F) and Arabic (FB50-FDFF, FE70-FEFF) presentation forms.
PRESENTATION_FORMS_RE = re.compile(r"[\ufb1d-\ufdff\ufe70-\ufefe]+")


def letter_weight(text: str) -> int:
    """Letters of ``text``, a syllable or ideograph of a wide script counting as two."""
    return sum(ch.isalpha() for ch in text) + len(WIDE_LETTER_RE.findall(text))


def between_hangul(left: str, right: str) -> bool:
    """Two word cells meet Hangul to Hangul. docling-parse splits Hangul words only at a space
    (Korean sets its spaces tight, often kerned to under a tenth of the type size), so such a
    pair is two eojeols, never one word cut in two."""
    return bool(left) and bool(right) and bool(HANGUL_RE.match(left[-1])) and bool(HANGUL_RE.match(right[0]))


def fold_presentation_forms(text: str) -> str:
    """Arabic and Hebrew presentation forms back to their letters (NFKC on those runs only:
    other compatibility characters, such as superscript footnote markers, stay as printed)."""
    return PRESENTATION_FORMS_RE.sub(lambda m: unicodedata.normalize("NFKC", m.group()), text)
