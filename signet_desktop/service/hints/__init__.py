"""Prospective hints: the LLM-written questions a memory answers, and their worker."""
