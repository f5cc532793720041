"""PostgreSQL: the connection adapter, the migration runner, and what differs by dialect."""
