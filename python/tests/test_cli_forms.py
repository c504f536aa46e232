"""The toolkit's command lines (both forms, every option) and the svc command each becomes."""
import unittest

from apipod._runtime.cli_forms import HelpText, Refusal, SvcCall, translate


def svc(command: str) -> tuple[str, ...]:
    return translate(command.split()).argv


class FlagFormTest(unittest.TestCase):
    """apipod 1.0.1 to 1.0.8 and its repository after 1.0.8: apipod --scan, --build, --start, ..."""

    def test_scan_is_svc_scan_in_each_spelling(self):
        for form in ("--scan", "-scan", "--sca"):  # -scan: 1.0.1; argparse takes an unambiguous prefix
            with self.subTest(form=form):
                self.assertEqual(translate([form]), SvcCall(("scan",)))
        self.assertEqual(svc("--scan --entrypoint app.py"), ("scan", "--entrypoint", "app.py"))

    def test_build_renders_the_dockerfile_for_the_file_given(self):
        self.assertEqual(translate(["--build"]), SvcCall(("build",)))
        self.assertEqual(translate(["-build"]), SvcCall(("build",)))
        self.assertEqual(svc("--build app/main.py"), ("build", "--entrypoint", "app/main.py"))
        self.assertEqual(svc("--build --entrypoint main.py"), ("build", "--entrypoint", "main.py"))

    def test_start_passes_host_port_compute_and_provider(self):
        self.assertEqual(svc("--start"), ("start",))
        self.assertEqual(svc("--start --host 127.0.0.1 --port 9000"), ("start", "--host", "127.0.0.1", "--port", "9000"))
        self.assertEqual(svc("--start --compute serverless --provider runpod"),
                         ("start", "--compute", "serverless", "--provider", "runpod"))
        self.assertEqual(svc("--start --entrypoint main.py --orchestrator local"), ("start", "--entrypoint", "main.py"))
        # svc says itself that it serves no azure; the toolkit's own choices are checked here.
        self.assertEqual(svc("--start --provider azure"), ("start", "--provider", "azure"))

    def test_simulate_serves_the_target_upstream_runs_locally(self):
        cases = {
            "--simulate": ("serverless", "localhost"),
            "--simulate serverless-runpod": ("serverless", "localhost"),
            "--simulate serverless-runpod --direct": ("serverless", "runpod"),
            "--simulate serverless-runpod --direct true": ("serverless", "runpod"),
            "--simulate serverless-runpod --direct false": ("serverless", "localhost"),
            "--simulate dedicated-azure": ("dedicated", "localhost"),
        }
        for command, (compute, provider) in cases.items():
            with self.subTest(command=command):
                self.assertEqual(svc(command), ("start", "--compute", compute, "--provider", provider))
        self.assertEqual(svc("--simulate --entrypoint main.py --port 8001"),
                         ("start", "--entrypoint", "main.py", "--port", "8001", "--compute", "serverless", "--provider", "localhost"))

    def test_options_the_action_never_read_are_named_as_ignored(self):
        translation = translate("--build --port 9000 --region us-east-1 --direct".split())
        self.assertEqual(translation.argv, ("build",))
        self.assertEqual(len(translation.notes), 3)
        self.assertIn("--port does nothing with --build", translation.notes[1])
        self.assertIn("--region names a region of the hosted platform", translation.notes[2])
        self.assertIn("azure has no serverless offering", translate(["--simulate", "serverless-azure"]).notes[0])

    def test_no_action_prints_the_help(self):
        self.assertIsInstance(translate([]), HelpText)
        self.assertIsInstance(translate(["--port", "9000"]), HelpText)
        self.assertIsInstance(translate(["--start", "--help"]), HelpText)


class CommandFormTest(unittest.TestCase):
    """apipod 1.0.9 to 1.0.33: apipod start, simulate, scan, build, analyze, deploy, help."""

    def test_each_command_is_its_svc_command(self):
        self.assertEqual(svc("scan"), ("scan",))
        self.assertEqual(svc("build"), ("build",))
        self.assertEqual(svc("build path/to/service.py"), ("build", "--entrypoint", "path/to/service.py"))
        self.assertEqual(svc("start"), ("start",))
        self.assertEqual(svc("start main.py --port 8123 --host 127.0.0.1"),
                         ("start", "--entrypoint", "main.py", "--host", "127.0.0.1", "--port", "8123"))

    def test_project_dir_in_each_spelling_is_svcs_directory(self):
        for form in ("-C svc1", "-Csvc1", "--project-dir svc1", "--project-dir=svc1", "--cwd svc1", "--cwd=svc1"):
            with self.subTest(form=form):
                self.assertEqual(svc(f"{form} scan"), ("scan", "svc1"))
        self.assertEqual(svc("-C svc1 start main.py"), ("start", "svc1", "--entrypoint", "main.py"))
        self.assertEqual(svc("--project-dir svc1 build"), ("build", "svc1"))

    def test_simulate_reads_target_entrypoint_and_native_as_the_toolkit_does(self):
        self.assertEqual(svc("simulate"), ("start", "--compute", "serverless", "--provider", "localhost"))
        self.assertEqual(svc("simulate serverless-runpod --native"), ("start", "--compute", "serverless", "--provider", "runpod"))
        self.assertEqual(svc("simulate main.py --native --port 9"),
                         ("start", "--entrypoint", "main.py", "--port", "9", "--compute", "serverless", "--provider", "localhost"))
        self.assertEqual(svc("simulate dedicated-azure main.py"),
                         ("start", "--entrypoint", "main.py", "--compute", "dedicated", "--provider", "localhost"))

    def test_help_prints_the_forms(self):
        self.assertIn("apipod --scan, apipod scan            svc scan", translate(["help"]).text)
        self.assertIsInstance(translate(["help", "start"]), HelpText)
        self.assertIn("unknown command 'bogus'", translate(["help", "bogus"]).message)


class RefusalTest(unittest.TestCase):
    """What svc does not do: said with what to run instead (apipod.cli exits 2)."""

    def test_the_hosted_platform_is_refused_saying_what_to_run(self):
        for command in ("deploy", "deploy serverless-runpod --yes --skip-build --compute-tier gpu",
                        "deploy --resume d-1 --push-only", "--deploy", "--deploy serverless"):
            with self.subTest(command=command):
                refusal = translate(command.split())
                self.assertIsInstance(refusal, Refusal)
                self.assertIn("svc does not deploy to SocAIty's hosted platform", refusal.message)
                self.assertIn("svc build --image", refusal.message)
        self.assertIn("`svc scan` writes what svc reads", translate(["analyze"]).message)
        self.assertIn("--orchestrator docker", translate("--start --orchestrator socaity".split()).message)

    def test_a_build_target_svc_reads_from_the_service_is_refused_naming_where(self):
        refusal = translate("--build --provider runpod".split())
        self.assertIn('APIPod(provider="runpod") in service.py', refusal.message)
        self.assertIn("APIPOD_PROVIDER=runpod", refusal.message)
        self.assertIn("APIPOD_COMPUTE=serverless", translate("--build --compute serverless".split()).message)

    def test_bad_usage_names_the_option(self):
        cases = {
            "--start --workers 2": "unrecognized arguments: --workers 2",
            "--start --port eighty": "argument --port: invalid int value: 'eighty'",
            "--start --compute gpu": "argument --compute: invalid choice: 'gpu'",
            "--scan --build": "give one of --scan, --build (the toolkit ran only --scan)",
            "--simulate serverless --compute dedicated": "sets compute and provider itself",
            "simulate gpu-runpod": "simulate gpu-runpod: invalid compute 'gpu'",
            "simulate serverless-moon": "invalid provider 'moon'",
            "deploy --compute-tier tpu": "argument --compute-tier: invalid choice: 'tpu'",
            "start a.py b.py": "unrecognized arguments: b.py",
        }
        for command, message in cases.items():
            with self.subTest(command=command):
                refusal = translate(command.split())
                self.assertIsInstance(refusal, Refusal)
                self.assertIn(message, refusal.message)


if __name__ == "__main__":
    unittest.main()
