"""`apipod.engine`: the upstream apipod toolkit's server package (1.0.5 on). svc's toolkit keeps
the modules of it that services import (`apipod.engine.jobs.job_progress`,
`apipod.engine.jobs.job_result`); the rest is upstream's server, which svc replaces
(upstream_names.py says so on import)."""
