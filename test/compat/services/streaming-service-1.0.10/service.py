# Not from upstream: streaming_service.py has no app of its own. This mounts it as the
# toolkit's test/debug_test_services.py `launch_streaming` does, at the same commit.
from apipod import APIPod
import streaming_service

app = APIPod()
streaming_service.register(app)
