"""MEMORY.md: the deterministic projection of an agent's durable memory, and its rebuild worker."""
