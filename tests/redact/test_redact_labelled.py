"""Precision and recall of the default `Redactor` on the committed labelled set.

The set (tests/data/redact_labelled.jsonl, built by tests/helpers/redact_gen.py) holds
identifiers in Chinese and English sentences and at least as many numeric
look-alikes: order numbers, dates, prices, versions, IDs and cards failing
their checksum, phone-like numbers of the wrong length.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from branchmem import InvalidInput, Redactor
from branchmem_eval.redact import evaluate, load
from helpers.redact_gen import build, is_luhn, is_valid_id

DATA = Path(__file__).parents[1] / "data" / "redact_labelled.jsonl"
ROWS = load(DATA)


def test_the_set_is_large_and_mostly_negative() -> None:
    assert len(ROWS) >= 300
    negatives = [r for r in ROWS if not r["expect"]]
    assert len(negatives) * 2 >= len(ROWS)
    assert all(any(c.isdigit() for c in r["text"]) for r in negatives)
    tags = Counter(r["tag"] for r in negatives)
    for tag in ("order", "date", "price", "version", "bad_id", "bad_card", "wrong_length_phone"):
        assert tags[f"negative:{tag}"] >= 20, tag


def test_the_committed_set_is_what_the_generator_builds() -> None:
    assert [json.loads(json.dumps(r)) for r in build()] == ROWS


def test_labels_agree_with_the_independent_checksums() -> None:
    """Expected IDs and cards pass the generator's own checks; the bad ones fail them."""
    for row in ROWS:
        for e in row["expect"]:
            number = "".join(c for c in e["text"] if c.isalnum())
            if e["kind"] == "id_card":
                assert is_valid_id(number), row
            if e["kind"] == "bank_card":
                assert is_luhn(number), row
        if row["tag"] == "negative:bad_card":
            number = "".join(c for c in row["text"] if c.isdigit())
            assert not is_luhn(number), row


def _naive_counts(redactor: Redactor) -> tuple[Counter[str], Counter[str], Counter[str]]:
    tp: Counter[str] = Counter()
    fp: Counter[str] = Counter()
    fn: Counter[str] = Counter()
    for row in ROWS:
        want = [(e["kind"], e["text"]) for e in row["expect"]]
        got = [(f.kind, f.text) for f in redactor.findings(row["text"])]
        for g in got:
            (tp if g in want else fp)[g[0]] += 1
        for w in want:
            if w not in got:
                fn[w[0]] += 1
    return tp, fp, fn


def test_recall_is_one_and_no_negative_changes() -> None:
    redactor = Redactor()
    tp, fp, fn = _naive_counts(redactor)
    assert sum(fn.values()) == 0, f"missed: {dict(fn)}"
    assert sum(fp.values()) == 0, f"false positives: {dict(fp)}"
    for kind in ("id_card", "bank_card", "phone", "email", "ipv4", "ipv6"):
        assert tp[kind] >= 25, kind
    negatives = [r["text"] for r in ROWS if not r["expect"]]
    assert [t for t in negatives if redactor.redact(t) != t] == []


@pytest.mark.parametrize("mode", ["mask", "drop"])
def test_every_expected_identifier_leaves_the_text(mode: str) -> None:
    redactor = Redactor(mode)
    for row in ROWS:
        out = redactor.redact(row["text"])
        for e in row["expect"]:
            assert e["text"] not in out, (row, out)


def test_evaluate_agrees_with_a_naive_count() -> None:
    redactor = Redactor()
    report = evaluate(redactor, ROWS)
    tp, fp, fn = _naive_counts(redactor)
    for s in report.scores:
        assert (s.true_pos, s.false_pos, s.false_neg) == (tp[s.kind], fp[s.kind], fn[s.kind])
    assert report.negatives == sum(1 for r in ROWS if not r["expect"])
    assert report.changed_negatives == ()
    assert report.total().recall == 1.0


def test_evaluate_counts_misses_and_false_positives() -> None:
    rows = [
        {"text": "电话 13812345678", "expect": [{"kind": "phone", "text": "13812345678"}]},
        {"text": "a@b.com", "expect": []},
    ]
    report = evaluate(Redactor(detectors=["email"]), rows)
    scores = {s.kind: s for s in report.scores}
    assert (scores["phone"].recall, scores["email"].precision) == (0.0, 0.0)
    assert report.changed_negatives == ("a@b.com",)


def test_malformed_labelled_rows_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInput, match="a labelled row is"):
        evaluate(Redactor(), [{"text": "x"}])
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"text": "x", "expect": [{"kind": 1}]}\n', encoding="utf-8")
    with pytest.raises(InvalidInput, match=r"bad\.jsonl:1"):
        load(bad)
    bad.write_text("not json\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="not a JSON line"):
        load(bad)
    with pytest.raises(InvalidInput, match="cannot read"):
        load(tmp_path / "missing.jsonl")
