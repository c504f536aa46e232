"""`apipod.engine.jobs`: where the upstream apipod toolkit keeps JobProgress and JobResult."""
