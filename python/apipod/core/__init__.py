"""`apipod.core`: the upstream apipod toolkit's server package of 1.0.1 to 1.0.4 (later
apipod.engine). svc's toolkit keeps `apipod.core.job.job_progress` and
`apipod.core.job.job_result`, which services import."""
