"""Memory for coding agents (Claude Code, Codex): their sessions as trees,
recalled through hooks at the current leaf (standard library only).

- `hook`: what ``branchmem claude-code hook`` runs (`run_hook`, `main`)
- `install`: hook entries and the MCP server in the agents' settings
- `paths`: the default store, namespace, log and cursors

The transcripts themselves are read by `branchmem.importers` (formats
``claude-code`` and ``codex``).
"""
