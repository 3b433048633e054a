"""Importers for chat exports whose history is a tree: ChatGPT, Claude, Open WebUI,
LibreChat and SillyTavern, and coding agents' transcripts: Claude Code and Codex
(`agents.import_transcript` reads one from where the last read stopped).

`read_export` yields each conversation as events (the export's own message ids,
parents first) with its current leaf; `import_export` (also `Store.import_export`)
adds them to a store and points branch ``conv/<id>`` at the current leaf.

::

    report = Store("mem.db").import_export("conversations.json", namespace="alice")
    for line in report.conversations:
        print(line.branch, line.events, line.added, line.current)
"""

from .load import import_conversation, import_export
from .model import Conflict, Conversation, Imported, ImportReport, Skipped, branch_name
from .reader import FORMATS, Export, UnknownFormat, read_export

__all__ = [
    "FORMATS",
    "Conflict",
    "Conversation",
    "Export",
    "ImportReport",
    "Imported",
    "Skipped",
    "UnknownFormat",
    "branch_name",
    "import_conversation",
    "import_export",
    "read_export",
]
