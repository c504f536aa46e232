"""The module name a worker imports the service file under, whatever the file is called
(see docs/worker-protocol.md)."""

SERVICE_MODULE_NAME = "__apipod_service__"
