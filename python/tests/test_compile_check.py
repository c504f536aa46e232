"""`python -m apipod._runtime.compile_check`, which the image build runs on the service file."""
import os
import subprocess
import sys
import tempfile
import unittest

from tests.worker_process import PYTHON_DIRECTORY


def check(source: bytes, directory: str = "") -> subprocess.CompletedProcess:
    """Runs the check as the Dockerfile does: from the project's directory, the file by its relative name."""
    directory = directory or tempfile.mkdtemp()
    with open(os.path.join(directory, "service.py"), "wb") as file:
        file.write(source)
    return subprocess.run(
        [sys.executable, "-m", "apipod._runtime.compile_check", "service.py"],
        cwd=directory,
        env={**os.environ, "PYTHONPATH": PYTHON_DIRECTORY, "PYTHONDONTWRITEBYTECODE": "1"},
        capture_output=True,
        text=True,
    )


class CompileCheckTest(unittest.TestCase):
    def test_a_file_python_refuses_fails_with_its_line_and_pythons_words(self):
        result = check(b"from apipod import APIPod\napp = APIPod()\n\ndef f():\n    print 'x'\n")
        self.assertEqual(result.returncode, 1)
        self.assertEqual(
            result.stderr.strip(),
            "service.py:5: SyntaxError: Missing parentheses in call to 'print'. Did you mean print(...)?",
        )

    def test_what_only_the_compiler_refuses_fails_too(self):
        result = check(b"def f():\n    yield 1\nreturn 2\n")
        self.assertEqual((result.returncode, result.stderr.strip()), (1, "service.py:3: SyntaxError: 'return' outside function"))
        result = check(b"def f():\n\tif x:\n        return 1\n")
        self.assertEqual(result.returncode, 1)
        self.assertRegex(result.stderr.strip(), r"^service\.py:3: TabError: ")

    def test_a_null_byte_fails_without_a_traceback(self):
        result = check(b"x = 1\x00\n")
        self.assertEqual(result.returncode, 1)
        self.assertRegex(result.stderr.strip(), r"^service\.py: \w+: source code (string )?cannot contain null bytes$")

    def test_a_valid_file_passes_without_being_run_or_leaving_bytecode(self):
        project = tempfile.mkdtemp()
        marker = os.path.join(project, "ran")
        result = check(f"open({marker!r}, 'w').close()\nraise SystemExit(3)\n".encode(), project)
        self.assertEqual((result.returncode, result.stderr), (0, ""))
        self.assertEqual(os.listdir(project), ["service.py"])

    def test_the_files_coding_comment_is_honoured(self):
        result = check("# -*- coding: latin-1 -*-\nNAME = 'caf\u00e9'\n".encode("latin-1"))
        self.assertEqual((result.returncode, result.stderr), (0, ""))
