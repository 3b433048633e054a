"""``branchmem eval recall --set``: the figures of the scenario sets from the shell."""

from __future__ import annotations

import json

import pytest

from branchmem import Store
from branchmem.cli import main
from branchmem_eval.scenario_eval import ScenarioClock, run_set
from branchmem_eval.scenarios import load_set


def mem_store(clock: ScenarioClock) -> Store:
    return Store(clock=clock)


def test_cli_prints_the_figures_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "eval",
        "recall",
        "--set",
        "multihop",
        "--split",
        "tune",
        "--embedder",
        "hashing",
        "--mode",
        "keyword",
        "--mode",
        "hybrid",
        "--json",
    ]
    assert main(argv) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["embedder"], r["mode"]) for r in rows] == [
        ("-", "keyword"),
        ("hashing-256", "hybrid"),
    ]
    direct = run_set(mem_store, load_set("multihop", "tune"), embedder="hashing")
    assert rows[1]["passed"] == direct.passed and rows[1]["assertions"] == direct.assertions
    assert rows[1]["edges_loaded"] == direct.edges_loaded > 0  # Store has add_edge
    assert rows[1]["edges_skipped"] == direct.edges_skipped == 0


def test_cli_table_and_failures_of_the_tune_split(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [
        "eval",
        "recall",
        "--set",
        "scenarios",
        "--split",
        "tune",
        "--embedder",
        "hashing",
        "--failures",
    ]
    assert main(argv) == 0
    out = capsys.readouterr().out
    r = run_set(mem_store, load_set("scenarios", "tune"), embedder="hashing")
    assert f"{r.pass_rate:.2f} ({r.passed}/{r.assertions})" in out
    assert out.count("missed") == len(r.failures())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--set", "scenarios", "--failures"], "tune split only"),
        (["--set", "scenarios", "--split", "held-out", "--failures"], "tune split only"),
        ([], "FILE or --set"),
        (["x.jsonl", "--set", "scenarios"], "FILE or --set"),
        (["--set", "scenarios", "--db", "x.db"], "drop --db"),
        (["x.jsonl", "--split", "tune"], "apply to --set"),
    ],
)
def test_cli_refuses_what_does_not_apply(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "recall", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
