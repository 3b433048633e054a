"""Evaluation of branchmem, apart from the engine: the harnesses that measure
what a search, an extractor or a redactor gets right.

Modules: `labelled` (Recall@K and MRR over a labelled JSONL set, behind
``branchmem eval recall FILE``), `scenarios` and `scenario_eval` (the shipped
scenario sets in ``data/`` and their judge, behind ``branchmem eval recall
--set``), `scenario_check` (assertions no ranker could pass), `extract` (an
extractor's facts against labels), `redact` (a redactor against labelled
spans) and `public` (public labelled sets read from a path, and the figures
of bench/public_recall.py). Each is built on `branchmem.api.StoreAPI`
or a capability's own functions, never inside the engine's packages.
"""

from .labelled import LabelledQuery, LabelledSet, RecallRow, load_labelled, read_labelled, recall

__all__ = [
    "LabelledQuery",
    "LabelledSet",
    "RecallRow",
    "load_labelled",
    "read_labelled",
    "recall",
]
