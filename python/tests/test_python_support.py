"""The toolkit and the examples run on every Python svc supports, from 3.10 (the default of
a project that names none). Only 3.11 runs here, so vermin reads the source for syntax,
modules and members newer than 3.10 instead."""
import os
import subprocess
import sys
import unittest

from .test_media import importable

REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OLDEST_SUPPORTED = "3.10"


@unittest.skipUnless(importable("vermin"), "vermin is not installed")
class OldestPythonTest(unittest.TestCase):
    def test_toolkit_and_examples_need_nothing_newer_than_the_oldest_supported_python(self):
        sources = [os.path.join(REPOSITORY, "python", "apipod"), os.path.join(REPOSITORY, "examples")]
        checked = subprocess.run(
            [sys.executable, "-c", "import sys, vermin; sys.exit(vermin.main())", f"--target={OLDEST_SUPPORTED}-", "--no-tips", "--violations", "--eval-annotations", *sources],
            capture_output=True,
            text=True,
        )
        self.assertEqual(checked.returncode, 0, checked.stdout + checked.stderr)
