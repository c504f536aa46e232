"""The `apipod` command (pip's console script, npm's bin/apipod.js): the toolkit's own command
line, run by svc. At upstream's path, apipod.cli:main, as the toolkit's console script names it.

Python, not TypeScript: pip installs it where Node may be missing, and it still prints its help,
refusals and how to install svc; only what svc runs needs Node."""
from __future__ import annotations

import os
import shlex
import sys
from typing import Optional, Sequence

from ._runtime.cli_forms import HelpText, Refusal, translate
from ._runtime.svc_executable import find_svc, install_advice


def main(argv: Optional[Sequence[str]] = None) -> None:
    translation = translate(sys.argv[1:] if argv is None else argv)
    if isinstance(translation, HelpText):
        sys.stdout.write(translation.text)
        sys.exit(0)
    if isinstance(translation, Refusal):
        print(translation.message, file=sys.stderr)
        sys.exit(2)
    svc = find_svc()
    if svc is None:
        print(install_advice(shlex.join(["svc", *translation.argv])), file=sys.stderr)
        sys.exit(1)
    for note in translation.notes:
        print(note, file=sys.stderr)
    sys.stderr.flush()
    os.execv(svc[0], [*svc, *translation.argv])  # exec: signals and the exit code are svc's own


if __name__ == "__main__":
    main()
