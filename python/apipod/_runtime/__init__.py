"""svc's worker runtime: how the gateway runs a service (the worker, its protocol, reading
arguments and writing results, the runpod bridge, the apipod command's translator). Not the
toolkit's API: a service imports from `apipod` (and the upstream module paths it stands in
for); these modules may change in any release."""
