"""`signet storage migrate`: a workspace's database copied between SQLite and PostgreSQL.

`plan.py` decides what is copied and in which order (the tables both schemas share, parents
before children), `convert.py` turns each value into the other backend's form and into the
normal form both sides hash alike, `progress.py` keeps the resumable record in the target,
`copy.py` moves the rows in batches (one target transaction each) and `verify.py` compares
per-table counts and content hashes. The service layer (`service/storage_transfer.py`) opens
the two databases and adds what is derived above storage (the vector mirrors).
"""
