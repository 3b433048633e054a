"""Redaction of personal data before anything is stored.

``Store(path, redactor=Redactor())`` passes every event's and record's
content, and every logged query, through `Redactor.redact` first.
Standard library only; ``mode="vault"`` needs the ``branchmem[redact]`` extra.
"""

from .detectors import DETECTORS
from .redactor import MODES, Finding, Redactor, Rule

__all__ = ["DETECTORS", "MODES", "Finding", "Redactor", "Rule"]
