"""The apipod toolkit's own command line, read as the svc command that does the same.

Pure: argv in, an SvcCall, a Refusal or a HelpText out; apipod.cli runs it. The forms and
options are the union of the toolkit's argument parsers (apipod/cli.py on PyPI):
1.0.1: `-scan`, `-build`; 1.0.2 to 1.0.8: `--scan`, `--build [FILE]`, `--start` with
`--orchestrator`, `--compute`, `--provider`, `--region`, `--host`, `--port`; its repository
after 1.0.8 (SocAIty/APIPod): `--simulate [TARGET]`, `--direct [BOOL]`, `--deploy [TARGET]`,
`--entrypoint`; 1.0.9 to 1.0.33: sub-commands `start`, `simulate`, `scan`, `build`, `deploy`,
`help` (1.0.10: `analyze`, `-C/--project-dir`; 1.0.18: `deploy --compute-tier`;
1.0.25: `--cwd`). docs/apipod-toolkit.md has the table.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Optional, Sequence, Union

from .upstream_arguments import simulated_target


@dataclass(frozen=True)
class SvcCall:
    """Run svc with `argv`, after printing `notes` (one line each) on stderr."""
    argv: tuple[str, ...]
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Refusal:
    """What svc does not do, and what to run instead: printed, exit code 2."""
    message: str


@dataclass(frozen=True)
class HelpText:
    text: str


Translation = Union[SvcCall, Refusal, HelpText]

COMMANDS = ("start", "simulate", "scan", "build", "analyze", "deploy", "help")
_ROOT_DIR_OPTIONS = ("-C", "--project-dir", "--cwd")
# The toolkit's choices (apipod.common.constants at 1.0.33); svc says itself which it serves.
_ORCHESTRATORS = ("socaity", "local")
_COMPUTES = ("dedicated", "serverless")
_PROVIDERS = ("auto", "localhost", "runpod", "scaleway", "azure")

_NO_PLATFORM = "svc does not deploy to SocAIty's hosted platform"
_DEPLOY_INSTEAD = ("build the image with `svc build --image`, try it with `svc start --orchestrator docker`, "
                   "then push it to your registry (`docker push`) and run it where you deploy "
                   "(RunPod serverless: docs/runpod.md)")
_ANALYZE_INSTEAD = ("`svc scan` writes what svc reads of the project (apipod-deploy/apipod.json: endpoints, "
                    "framework, CUDA, base image) and `svc build` says what the image needs")

HELP = f"""usage: apipod [--scan | --build [FILE] | --start | --simulate [TARGET]] [options]
       apipod [--project-dir DIR] {{start,simulate,scan,build,help}} ...

The apipod toolkit's command line, run by svc; it never prompts. Each form runs:
  apipod --scan, apipod scan            svc scan
  apipod --build [FILE], apipod build [FILE]
                                        svc build [--entrypoint FILE] (the Dockerfile;
                                        svc build --image builds the image)
  apipod --start, apipod start [FILE]   svc start [--entrypoint FILE]
  apipod --simulate [TARGET], apipod simulate [TARGET] [FILE] [--native]
                                        svc start --compute C --provider P for the target
                                        "{{compute}}-{{provider}}" (default: serverless)
options: --host, --port, --entrypoint FILE (svc's own), --compute, --provider (with
--start), --direct [BOOL] (as --native), -C/--project-dir/--cwd DIR (svc's dir),
--orchestrator local (svc's default); --region is not read.
apipod deploy, apipod --deploy and apipod analyze exit 2: {_NO_PLATFORM}.

Details: docs/apipod-toolkit.md ("The apipod command"). svc's own options: svc --help.
"""


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    """argparse that reports instead of exiting, so translate() stays a function."""

    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(message)


def translate(argv: Sequence[str]) -> Translation:
    """The svc command for the toolkit's command line `argv` (without the program name)."""
    argv = list(argv)
    if not argv or "-h" in argv or "--help" in argv:
        return HelpText(HELP)
    try:
        if _names_command(argv):
            return _translate_command(_command_parser().parse_args(argv))
        return _translate_flags(_flag_parser().parse_args(argv))
    except _UsageError as error:
        return Refusal(f"apipod: {error} (apipod --help lists the toolkit's forms; svc --help lists svc's own)")


def _names_command(argv: list[str]) -> bool:
    """The sub-command form: the first argument, after -C/--project-dir/--cwd DIR, names a command."""
    index = 0
    while index < len(argv):
        token = argv[index]
        if token in _ROOT_DIR_OPTIONS:
            index += 2
        elif token.startswith(tuple(f"{option}=" for option in _ROOT_DIR_OPTIONS[1:])) or (token.startswith("-C") and token != "-C"):
            index += 1
        else:
            return token in COMMANDS
    return False


def _command_parser() -> _Parser:
    parser = _Parser(prog="apipod", add_help=False)
    parser.add_argument("-C", "--project-dir", "--cwd", dest="project_dir")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    start = commands.add_parser("start", add_help=False)
    start.add_argument("entrypoint", nargs="?")
    simulate = commands.add_parser("simulate", add_help=False)
    simulate.add_argument("target", nargs="?")
    simulate.add_argument("entrypoint", nargs="?")
    simulate.add_argument("--native", action="store_true")
    for serving in (start, simulate):
        serving.add_argument("--host")
        serving.add_argument("--port", type=int)
    commands.add_parser("scan", add_help=False)
    build = commands.add_parser("build", add_help=False)
    build.add_argument("file", nargs="?")
    commands.add_parser("analyze", add_help=False)
    deploy = commands.add_parser("deploy", add_help=False)
    deploy.add_argument("target", nargs="?")
    deploy.add_argument("--resume")
    deploy.add_argument("--skip-build", action="store_true")
    deploy.add_argument("--push-only", action="store_true")
    deploy.add_argument("--compute-tier", choices=("cpu", "gpu"))
    deploy.add_argument("-y", "--yes", action="store_true")
    help_command = commands.add_parser("help", add_help=False)
    help_command.add_argument("help_command", nargs="?")
    return parser


def _translate_command(args: argparse.Namespace) -> Translation:
    project = [args.project_dir] if args.project_dir else []
    if args.command == "scan":
        return SvcCall(("scan", *project))
    if args.command == "build":
        return SvcCall(("build", *project, *_entrypoint(args.file)))
    if args.command == "start":
        return SvcCall(("start", *project, *_entrypoint(args.entrypoint), *_listen(args)))
    if args.command == "simulate":
        target, entrypoint = args.target, args.entrypoint
        # As the toolkit reads `apipod simulate main.py`: a .py first argument is the entrypoint.
        if entrypoint is None and target is not None and target.endswith(".py"):
            target, entrypoint = None, target
        return _simulate(target or "serverless", args.native, ("start", *project, *_entrypoint(entrypoint), *_listen(args)), "simulate")
    if args.command == "analyze":
        return Refusal(f"apipod analyze checks a project against SocAIty's hosted platform, which svc does not use: {_ANALYZE_INSTEAD}")
    if args.command == "deploy":
        return Refusal(f"apipod deploy: {_NO_PLATFORM}; {_DEPLOY_INSTEAD}")
    if args.help_command not in (None, *COMMANDS):
        return Refusal(f"apipod help: unknown command {args.help_command!r}; the commands: {', '.join(COMMANDS)}")
    return HelpText(HELP)


def _flag_parser() -> _Parser:
    parser = _Parser(prog="apipod", add_help=False)
    parser.add_argument("--scan", "-scan", action="store_true")
    parser.add_argument("--build", nargs="?", const=True)
    parser.add_argument("-build", dest="build", action="store_const", const=True)
    parser.add_argument("--start", action="store_true")
    parser.add_argument("--simulate", nargs="?", const="")
    parser.add_argument("--direct", nargs="?", const="true")
    parser.add_argument("--deploy", nargs="?", const="")
    parser.add_argument("--entrypoint")
    parser.add_argument("--orchestrator", choices=_ORCHESTRATORS)
    parser.add_argument("--compute", choices=_COMPUTES)
    parser.add_argument("--provider", choices=_PROVIDERS)
    parser.add_argument("--region")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    return parser


def _translate_flags(args: argparse.Namespace) -> Translation:
    actions = [name for name, given in (("--scan", args.scan), ("--build", args.build is not None), ("--deploy", args.deploy is not None),
                                        ("--simulate", args.simulate is not None), ("--start", args.start)) if given]
    if not actions:
        return HelpText(HELP)
    if len(actions) > 1:
        return Refusal(f"apipod: give one of {', '.join(actions)} (the toolkit ran only {actions[0]}); run one apipod command for each")
    action = actions[0]
    if args.orchestrator == "socaity":
        return Refusal(f"apipod {action} --orchestrator socaity: {_NO_PLATFORM} nor serve under its orchestrator; "
                       "leave it out to serve on this machine, or run the built image with `svc start --orchestrator docker`")
    if action == "--deploy":
        return Refusal(f"apipod --deploy: {_NO_PLATFORM}; {_DEPLOY_INSTEAD}")
    serves = action in ("--start", "--simulate")
    if action == "--build":
        for option in ("compute", "provider"):
            value = getattr(args, option)
            if value is not None:
                return Refusal(f"apipod --build --{option} {value}: svc's image takes its {option} from the service, "
                               f"APIPod({option}=\"{value}\") in service.py (which svc scan reads), or from "
                               f"APIPOD_{option.upper()}={value} when the container starts; set it there and leave out --{option}")
    if action == "--simulate" and (args.compute is not None or args.provider is not None):
        return Refusal("apipod --simulate TARGET sets compute and provider itself: give --simulate \"{compute}-{provider}\", "
                       "or --start with --compute and --provider, not both")
    ignored = [f"--{option}" for option, given in (("direct", args.direct is not None and action != "--simulate"),
                                                   ("host", args.host is not None and not serves), ("port", args.port is not None and not serves))
               if given]
    notes = tuple(f"apipod: {option} does nothing with {action} (the toolkit did not read it either): ignored" for option in ignored)
    if args.region is not None:
        notes += ("apipod: --region names a region of the hosted platform, which svc does not deploy to: ignored",)
    entrypoint = args.build if isinstance(args.build, str) else args.entrypoint
    if action == "--scan":
        return SvcCall(("scan", *_entrypoint(args.entrypoint)), notes)
    if action == "--build":
        return SvcCall(("build", *_entrypoint(entrypoint)), notes)
    serve = ("start", *_entrypoint(entrypoint), *_listen(args))
    if action == "--simulate":
        translated = _simulate(args.simulate or "serverless", _truthy(args.direct), serve, "--simulate")
        return translated if isinstance(translated, Refusal) else SvcCall(translated.argv, (*notes, *translated.notes))
    chosen = [*(["--compute", args.compute] if args.compute else []), *(["--provider", args.provider] if args.provider else [])]
    return SvcCall((*serve, *chosen), notes)


def _simulate(target: str, direct: bool, serve: tuple[str, ...], form: str) -> Translation:
    try:
        compute, provider, warning = simulated_target(target, direct, f"{form} {target}")
    except ValueError as error:
        return Refusal(f"apipod: {error}")
    return SvcCall((*serve, "--compute", compute, "--provider", provider), () if warning is None else (f"apipod: {warning}",))


def _entrypoint(file: Optional[str]) -> list[str]:
    return [] if file is None else ["--entrypoint", file]


def _listen(args: argparse.Namespace) -> list[str]:
    return [*(["--host", args.host] if args.host is not None else []), *(["--port", str(args.port)] if args.port is not None else [])]


def _truthy(value: Optional[str]) -> bool:
    """--direct's BOOL, read as the toolkit reads it."""
    return value is not None and value.strip().lower() in ("1", "true", "yes", "y")
