"""The APIPod object a service file creates, and JobProgress outside a worker."""
import contextlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from apipod import APIPod, JobProgress
from tests.test_worker import WorkerTestCase
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

    def test_upstreams_simulate_means_what_upstream_runs_locally(self):
        cases = {
            "serverless": ("serverless", "localhost"),
            "": ("serverless", "localhost"),
            "serverless-runpod": ("serverless", "localhost"),  # upstream's Socaity emulation: its job queue
            "serverless-socaity": ("serverless", "localhost"),
            "dedicated": ("dedicated", "localhost"),
            "dedicated-azure": ("dedicated", "localhost"),
        }
        for simulate, target in cases.items():
            with self.subTest(simulate=simulate):
                app = APIPod(simulate=simulate)
                self.assertEqual((app.compute, app.provider), target)
        direct = APIPod(simulate="serverless-runpod", direct=True)
        self.assertEqual((direct.compute, direct.provider), ("serverless", "runpod"))

    def test_simulating_serverless_where_upstream_has_none_warns_and_serves_the_job_queue(self):
        with contextlib.redirect_stderr(io.StringIO()) as stderr:
            app = APIPod(simulate="serverless-azure")
        self.assertEqual((app.compute, app.provider), ("serverless", "localhost"))
        self.assertIn("azure has no serverless offering", stderr.getvalue())

    def test_a_simulate_target_upstream_refuses_is_refused(self):
        with self.assertRaisesRegex(ValueError, r"APIPod\(simulate='gpu'\): invalid compute 'gpu'"):
            APIPod(simulate="gpu")
        with self.assertRaisesRegex(ValueError, "invalid provider 'aws'"):
            APIPod(simulate="serverless-aws")
        with self.assertRaisesRegex(ValueError, "give simulate=, or compute= and provider=, not both"):
            APIPod(simulate="serverless", compute="dedicated")

    def test_provider_socaity_is_served_as_localhost_with_a_warning(self):
        with contextlib.redirect_stderr(io.StringIO()) as stderr:
            app = APIPod(provider="socaity")
        self.assertEqual(app.provider, "localhost")
        self.assertIn("svc does not deploy to SocAIty's platform", stderr.getvalue())

    def test_upstream_arguments_that_change_what_it_serves_are_named_in_a_warning(self):
        with contextlib.redirect_stderr(io.StringIO()) as stderr:
            APIPod(prefix="/api", orchestrator="socaity", summary="docs only", max_upload_file_size_mb=5)
        self.assertEqual(stderr.getvalue().splitlines(), [
            "apipod: APIPod(prefix=...) is not read by svc: svc serves each endpoint at its own path (and under /v1): "
            "put the prefix into the paths",
            "apipod: APIPod(orchestrator=...) is not read by svc: svc start --orchestrator (local or docker) chooses "
            "where the service runs",
        ])

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

    def test_fastapis_router_registrations_are_endpoints_as_on_upstreams_app(self):
        # Upstream's APIPod is a FastAPI APIRouter: services may register with its methods too.
        app = APIPod()

        def predict(text: str) -> str:
            return text

        app.add_api_route("/route", predict)
        app.api_route("/both", methods=["post", "PUT"])(predict)
        app.put("/put", response_model=str, status_code=201)(predict)
        app.patch("/patch")(predict)
        app.delete("/delete")(predict)
        app.endpoint("/direct")(predict)
        child = APIPod()
        child.endpoint("/run")(predict)
        child.get("run-status")(predict)
        app.include_router(child, prefix="/models/")
        self.assertEqual([(endpoint.path, endpoint.methods) for endpoint in app.endpoints], [
            ("/route", ["GET"]), ("/both", ["POST", "PUT"]), ("/put", ["PUT"]), ("/patch", ["PATCH"]),
            ("/delete", ["DELETE"]), ("/direct", ["POST"]), ("/models/run", ["POST"]), ("/models/run-status", ["GET"])])
        with self.assertRaisesRegex(TypeError, "include_router: svc serves the endpoints of another APIPod, and list is not one"):
            app.include_router([])

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
        # svc's npm name: `npm install -g svc` or `npx svc` would fetch an unrelated package.
        self.assertIn("`npm install -g svc-ml`", completed.stderr)
        self.assertIn(f"npx --package=svc-ml svc start {service}", completed.stderr)

    def test_start_runs_svc_start_with_the_calling_file(self):
        service, stdout = self.run_with_a_fake_svc("app.start()", "--port", "9000")
        self.assertEqual(stdout.strip(), f"svc start {service} --port 9000")

    def test_start_passes_upstreams_port_and_host_before_the_command_line(self):
        service, stdout = self.run_with_a_fake_svc("app.start(port=8009, host='0.0.0.0')", "--port", "9000")
        self.assertEqual(stdout.strip(), f"svc start {service} --port 8009 --host 0.0.0.0 --port 9000")

    def run_with_a_fake_svc(self, start_call: str, *arguments: str) -> tuple[str, str]:
        """(the service file, what a fake `svc` on PATH printed of its arguments) for
        `python service.py ARGUMENTS` whose last line is `start_call`."""
        directory = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, directory)
        fake_svc = os.path.join(directory, "svc")
        with open(fake_svc, "w") as file:
            file.write('#!/bin/sh\necho "svc $@"\n')
        os.chmod(fake_svc, 0o755)
        service = os.path.join(directory, "service.py")
        with open(service, "w") as file:
            file.write(f"from apipod import APIPod\napp = APIPod()\n{start_call}\n")
        completed = subprocess.run(
            [sys.executable, service, *arguments], capture_output=True, text=True, timeout=30,
            env={**os.environ, "PYTHONPATH": PYTHON_DIRECTORY, "PATH": directory + os.pathsep + os.environ["PATH"]},
        )
        return service, completed.stdout


class UpstreamServiceTest(WorkerTestCase):
    def test_a_service_calling_upstreams_start_at_module_level_is_served(self):
        worker, ready = self.start_ready_worker(self.service_from_source(
            "from apipod import APIPod\napp = APIPod(simulate='serverless')\n\n"
            "@app.endpoint('/predict')\ndef predict(my_param1: str, my_param2: int = 0):\n"
            "    return my_param1\n\napp.start(port=8009, host='0.0.0.0')\n"))
        self.assertEqual(ready["app"]["compute"], "serverless")
        self.assertEqual([endpoint["path"] for endpoint in ready["endpoints"]], ["/predict"])
        self.assertEqual(worker.finish()[0], 0)


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
