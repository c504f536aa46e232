"""The APIPod object a service file creates, and JobProgress outside a worker."""
import os
import subprocess
import sys
import tempfile
import unittest

from apipod import APIPod, JobProgress
from tests.worker_process import PYTHON_DIRECTORY


class APIPodTest(unittest.TestCase):
    def test_defaults(self):
        app = APIPod()
        self.assertEqual((app.title, app.compute, app.provider), (None, "dedicated", "localhost"))

    def test_unknown_compute_or_provider_lists_the_allowed_values(self):
        with self.assertRaisesRegex(ValueError, "compute must be one of dedicated, serverless"):
            APIPod(compute="gpu")
        with self.assertRaisesRegex(ValueError, "provider must be one of localhost, runpod, auto, scaleway, azure"):
            APIPod(provider="aws")

    def test_extra_options_are_kept(self):
        self.assertEqual(APIPod(queue_size=10).options, {"queue_size": 10})

    def test_endpoint_paths_and_methods(self):
        app = APIPod()

        @app.endpoint("/a")
        def a():
            ...

        @app.endpoint("b", methods="get")
        def b():
            ...

        @app.endpoint
        def bare():
            ...

        @app.endpoint(methods=("get", "put"), queue_size=5)
        def named():
            ...

        @app.get("/health")
        def health():
            ...

        @app.post("/submit")
        def submit():
            ...

        self.assertEqual([(endpoint.path, endpoint.methods) for endpoint in app.endpoints], [
            ("/a", ["POST"]), ("/b", ["GET"]), ("/bare", ["POST"]), ("/named", ["GET", "PUT"]),
            ("/health", ["GET"]), ("/submit", ["POST"]),
        ])
        self.assertEqual(app.endpoints[3].options, {"queue_size": 5})
        self.assertEqual(a(), None)  # the decorator returns the function itself

    def test_one_path_serves_one_function(self):
        app = APIPod()
        app.endpoint("/same")(lambda: 1)
        with self.assertRaisesRegex(ValueError, "/same is already served"):
            app.endpoint("/same", methods=["GET"])(lambda: 2)

    def test_methods_are_upper_cased_once_each_and_a_method_the_gateway_cannot_serve_is_refused(self):
        app = APIPod()
        app.endpoint("/twice", methods=["GET", "get"])(lambda: 1)
        self.assertEqual(app.endpoints[0].methods, ["GET"])
        refusals = {
            "FETCH": r"^methods: 'FETCH' is not an HTTP method svc serves \(GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS, TRACE\)$",
            "GET,POST": r"is not an HTTP method svc serves .*\(several are a list: methods=\[\"GET\", \"POST\"\]\)$",
            (): r"^methods: the list is empty; name at least one HTTP method, or leave methods out for POST$",
            ("GET", 1): r"^methods: 1 is not an HTTP method",
        }
        for methods, refusal in refusals.items():
            with self.subTest(methods=methods), self.assertRaisesRegex(ValueError, refusal):
                app.endpoint("/refused", methods=methods)  # refused by the decorator call, before any function
        self.assertEqual(len(app.endpoints), 1)

    def test_a_path_parameter_is_refused_rather_than_served_literally(self):
        app = APIPod()
        with self.assertRaisesRegex(ValueError, r"/items/\{item_id\}: path parameters are not supported"):
            app.endpoint("/items/{item_id}", methods=["GET"])(lambda item_id: item_id)

    def test_start_without_svc_installed_explains_how_to_install_it(self):
        with tempfile.TemporaryDirectory() as directory:
            service = os.path.join(directory, "service.py")
            with open(service, "w") as file:
                file.write("from apipod import APIPod\napp = APIPod()\nif __name__ == '__main__':\n    app.start()\n")
            completed = subprocess.run(
                [sys.executable, service], capture_output=True, text=True, timeout=30,
                env={**os.environ, "PYTHONPATH": PYTHON_DIRECTORY, "PATH": directory},
            )
        self.assertEqual(completed.returncode, 1)
        self.assertIn("svc is not installed", completed.stderr)
        self.assertIn("npm install -g", completed.stderr)
        self.assertIn("npx svc start", completed.stderr)

    def test_start_runs_svc_start_with_the_calling_file(self):
        with tempfile.TemporaryDirectory() as directory:
            fake_svc = os.path.join(directory, "svc")
            with open(fake_svc, "w") as file:
                file.write('#!/bin/sh\necho "svc $@"\n')
            os.chmod(fake_svc, 0o755)
            service = os.path.join(directory, "service.py")
            with open(service, "w") as file:
                file.write("from apipod import APIPod\napp = APIPod()\napp.start()\n")
            completed = subprocess.run(
                [sys.executable, service, "--port", "9000"], capture_output=True, text=True, timeout=30,
                env={**os.environ, "PYTHONPATH": PYTHON_DIRECTORY, "PATH": directory + os.pathsep + os.environ["PATH"]},
            )
        self.assertEqual(completed.stdout.strip(), f"svc start {service} --port 9000")


class JobProgressTest(unittest.TestCase):
    def test_outside_a_worker_it_only_remembers_the_status(self):
        progress = JobProgress()
        self.assertIs(progress.set_status(0.5, "half"), progress)
        self.assertEqual((progress.progress, progress.message), (0.5, "half"))

    def test_progress_is_clamped_and_nan_is_unknown(self):
        reported = []
        progress = JobProgress(reporter=lambda fraction, message: reported.append((fraction, message)))
        progress.set_status(-1)
        progress.set_status(7, "over")
        progress.set_status(float("nan"))
        self.assertEqual(reported, [(0.0, None), (1.0, "over"), (None, "over")])

    def test_a_status_left_out_keeps_its_last_value(self):
        progress = JobProgress().set_status(0.4, "loading")
        progress.set_status(message="still loading")
        self.assertEqual((progress.progress, progress.message), (0.4, "still loading"))
        progress.set_status(0.6)
        self.assertEqual((progress.progress, progress.message), (0.6, "still loading"))


if __name__ == "__main__":
    unittest.main()
