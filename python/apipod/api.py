"""`apipod.api`, where the upstream apipod toolkit defines APIPod (1.0.5 on)."""
from .app import APIPod

__all__ = ["APIPod"]
