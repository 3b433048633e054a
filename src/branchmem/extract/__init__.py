"""Memories that write themselves: extractors propose, the writer gates.

An extractor reads the last events on the path to an anchor and the memories
visible there, and proposes ``add``, ``update`` and ``delete`` changes
(`Proposal`). `extract` checks every proposal against the gate (sources on
the path, targets visible, fail closed) and writes it as a gated record with
an id derived from the proposal, so running it twice writes once.

>>> from branchmem import Store
>>> store = Store()
>>> _ = store.add_event("e1", content="我在腾讯做产品经理。")
>>> [m.content for m in store.extract(at="e1")]
['用户在腾讯工作', '用户的职业是产品经理']
"""

from ..backends.jobs import Job
from ..errors import ExtractionError
from .llm import LLMExtractor
from .proposal import (
    ADD,
    DELETE,
    OPS,
    UPDATE,
    ChainExtractor,
    Dropped,
    Extractor,
    Proposal,
    proposal_id,
)
from .rules import Fact, RuleExtractor
from .summary import SummaryExtractor
from .worker import Worker
from .writer import Extraction, extract

__all__ = [
    "ADD",
    "DELETE",
    "OPS",
    "UPDATE",
    "ChainExtractor",
    "Dropped",
    "Extraction",
    "ExtractionError",
    "Extractor",
    "Fact",
    "Job",
    "LLMExtractor",
    "Proposal",
    "RuleExtractor",
    "SummaryExtractor",
    "Worker",
    "extract",
    "proposal_id",
]
