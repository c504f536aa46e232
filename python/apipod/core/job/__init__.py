"""`apipod.core.job`: where apipod 1.0.1 to 1.0.4 keep JobProgress and JobResult."""
