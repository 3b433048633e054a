"""The server's JSON answers read back as branchmem's frozen dataclasses (those
without a ``from_dict`` of their own, or with tuples that JSON made lists)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..branch_types import AuditEntry, Conflict, MergeResult
from ..model import Explanation, Memory, SourceStatus
from ..retrieval.hit import Hit, HitExplanation


def explanation(d: Mapping[str, Any]) -> Explanation:
    return Explanation(
        d["memory_id"],
        d["at"],
        d["visible"],
        d["reason"],
        tuple(SourceStatus(s["event_id"], s["state"]) for s in d["sources"]),
        tuple(d["hidden_by"]),
        d.get("hidden_by_time"),
    )


def hit(d: Mapping[str, Any]) -> Hit:
    e = d.get("explanation")
    why = None
    if e is not None:
        why = HitExplanation(
            explanation(e["visibility"]),
            e["scoring"],
            e["keyword_rank"],
            e["vector_rank"],
            e["relevance"],
            bool(e.get("vector_pending", False)),
            str(e.get("cutoff", "")),
        )
    conf = float(d.get("confidence", 0.0))
    return Hit(Memory.from_dict(d["memory"]), d["score"], d["via"], dict(d["parts"]), why, conf)


def merge_result(d: Mapping[str, Any]) -> MergeResult:
    return MergeResult(**{**d, "conflict_ids": tuple(d["conflict_ids"])})


def conflict(d: Mapping[str, Any]) -> Conflict:
    return Conflict(**{**d, "members": tuple(d["members"])})


def audit_entry(d: Mapping[str, Any]) -> AuditEntry:
    return AuditEntry(**{**d, "ids": tuple(d["ids"])})
