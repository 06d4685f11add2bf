"""The parse digest names what a parser change touched: the same file gives the same line,
another file another, and a file that fails says so."""

from __future__ import annotations

import shutil

from evidence_pipeline.evaluation.parser_quality.digest import main


def test_digest_lines_are_stable_and_tell_files_apart(sample_corpus, tmp_path, capsys):
    pdfs = sorted(sample_corpus.glob("*.pdf"))[:2]
    for pdf in pdfs:
        shutil.copy(pdf, tmp_path / pdf.name)
    assert main([str(tmp_path)]) == 0
    first = capsys.readouterr().out.splitlines()
    assert main([str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == first
    assert [line.split()[-1] for line in first] == [p.name for p in pdfs]
    digests = [line.split()[0] for line in first]
    assert len(set(digests)) == 2 and all(len(d) == 16 for d in digests)
    assert all(int(line.split()[1]) >= 1 for line in first)  # every sample SOP holds a table

    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.7 not really")
    assert main([str(tmp_path)]) == 1
    out = capsys.readouterr().out.splitlines()
    errors = [line for line in out if line.startswith("error ")]
    assert len(errors) == 1 and "broken.pdf" in errors[0]
    assert [line for line in out if line not in errors] == first
