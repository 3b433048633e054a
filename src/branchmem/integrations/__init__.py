"""Integrations of branchmem with agent frameworks (each an optional extra)."""
