"""Memories: remember, modify, forget and recover, with their rules, batches and feedback."""
