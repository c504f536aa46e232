import module_that_does_not_exist  # noqa: F401

from apipod import APIPod

app = APIPod()
