"""branchbench: does a memory system leak facts from abandoned conversation branches?

Synthetic branching conversations (format v1: ``docs/branchbench-format.md``,
read by ``scenario``, checked by ``validate``), seven memory
systems fed the same events through one extractor (``systems``, ``extract``),
keyword scoring of their contexts and, with a model configured, of its answers
(``metrics``, ``llm``), and reports recomputed from saved runs (``report``).
Run it with ``branchbench run --split dev --out DIR``; check and freeze a folder
of your own scenarios with ``branchbench validate DIR`` and ``branchbench freeze DIR``.
"""
