"""Run a Pulumi Python program in this process under the SDK's mocks: no engine, no CLI, no cloud.

This is the one module of wirespeed.program that imports Pulumi. It follows what the SDK's own automation
server does for an inline program (pulumi/automation/_server.py): a copied context with fresh settings, a new
event loop per run (pulumi/pulumi#24338), config set with ``set_all_config`` before the program is imported,
then ``run_in_stack``, which awaits every registration RPC and every outstanding output before returning.
The mock monitor answers the RPCs; :class:`~wirespeed.program.fake_cloud.FakeCloud` invents the answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import os
import runpy
import sys
import threading
import traceback
from collections.abc import Coroutine, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from wirespeed.install_hint import install_command, install_extra
from wirespeed.program.errors import ProgramError
from wirespeed.program.fake_cloud import DEFAULT_AWS_REGION, DEFAULT_AZURE_LOCATION, FakeCloud
from wirespeed.program.model import STACK_TYPE, Invoke, ProgramPlan, RegisteredResource
from wirespeed.program.project import SECRET_PLACEHOLDER, Project, load_project
from wirespeed.values import SECRET_SIG, SIG_KEY, UNKNOWN

# More signatures Pulumi puts in serialised values (pulumi/runtime/rpc.py; the secret one is in wirespeed.values):
# the recorder reads the wire form directly so that recording never builds SDK objects (rehydrating a resource
# reference off the event loop creates outputs no loop will ever run, and the program would never settle).
_RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
_ASSET_SIGS = {"c44067f5952c0a294b673a41bacd8c17": "asset", "0def7320c3a5731c473e5ecbe6d01bc7": "archive"}
UNKNOWN_PLACEHOLDER = "[unknown]"


def run_program(directory: Path | str, stack: str | None = None) -> ProgramPlan:
    """Plan the Pulumi project in ``directory``: run its program and return everything it registered.

    Raises :class:`ProgramError` for a project that cannot be read, a program that raises (with every problem
    of a ``pulumi.InputPropertiesError``), or a missing Pulumi SDK. Nothing is left behind: the working
    directory, ``sys.path``, ``sys.argv`` and the program's own modules are restored afterwards.
    """
    project = load_project(Path(directory), stack)
    try:
        import pulumi  # noqa: F401  (fail early with a clear message)
    except ImportError:
        raise ProgramError(
            f"planning a Pulumi program needs the Pulumi SDK in this environment: add it with {install_extra('pulumi')}"
        ) from None
    # A copy of the current context, as the automation server does: the runtime's settings, root resource and
    # config are context variables, so nothing of this run leaks into the caller or the next run.
    context = contextvars.copy_context()
    return context.run(_run, project)


class _Recorder:
    """Collects what the mock monitor sees. Called from one executor thread at a time (max_workers=1)."""

    def __init__(self) -> None:
        self.resources: list[RegisteredResource] = []
        self.registered_outputs: dict[str, dict[str, Any]] = {}
        self.invokes: list[Invoke] = []
        self.log: list[tuple[str, str]] = []


class _LogCollector(logging.Handler):
    def __init__(self, recorder: _Recorder) -> None:
        super().__init__(level=logging.INFO)
        self.recorder = recorder

    def emit(self, record: logging.LogRecord) -> None:
        self.recorder.log.append((record.levelname.lower(), record.getMessage()))


def _plain(value: Any) -> Any:
    """A JSON-friendly copy: secrets become ``[secret]``, resource references their URN, assets their kind."""
    if isinstance(value, Mapping):
        sig = value.get(SIG_KEY)
        if sig == SECRET_SIG:
            return SECRET_PLACEHOLDER
        if sig == _RESOURCE_SIG:
            return str(value.get("urn", ""))
        if sig in _ASSET_SIGS:
            return f"<{_ASSET_SIGS[sig]}>"
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if value == UNKNOWN:
        return UNKNOWN_PLACEHOLDER
    if value is None or isinstance(value, bool | int | float | str):
        return value
    urn = getattr(value, "urn", None)
    if urn is not None:
        return f"<resource {getattr(value, '_name', '?')}>"
    return f"<{type(value).__name__}>"


def _wire(struct: Any) -> dict[str, Any]:
    """A protobuf Struct as plain Python values, without the SDK rebuilding resources or outputs from it."""
    return {str(k): _wire_value(v) for k, v in struct.fields.items()}


def _wire_value(value: Any) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return _wire(value.struct_value)
    if kind == "list_value":
        return [_wire_value(v) for v in value.list_value.values]
    if kind in ("number_value", "string_value", "bool_value"):
        return getattr(value, kind)
    return None


def _unwrap(value: Any) -> Any:
    """The value under any secret wrapper, for the fake cloud to compute with (it never prints them)."""
    if isinstance(value, Mapping):
        if value.get(SIG_KEY) == SECRET_SIG:
            return _unwrap(value.get("value"))
        return {k: _unwrap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unwrap(v) for v in value]
    return value


def _build_mocks(cloud: FakeCloud, recorder: _Recorder) -> Any:
    import pulumi

    class CloudMocks(pulumi.runtime.Mocks):
        def new_resource(self, args: pulumi.runtime.MockResourceArgs) -> tuple[str, dict[str, Any]]:
            return cloud.new_resource(args.typ, args.name, _unwrap(args.inputs), bool(args.custom))

        def call(self, args: pulumi.runtime.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
            # (result, check failures): MockMonitor.Invoke iterates the failures, so never None.
            result = cloud.call(args.token, _unwrap(args.args))
            recorder.invokes.append(Invoke(args.token, _plain(args.args), _plain(result)))
            return result, []

    return CloudMocks()


def _build_monitor(mocks: Any, recorder: _Recorder) -> Any:
    from pulumi.runtime.mocks import MockMonitor

    class RecordingMonitor(MockMonitor):
        """The SDK's mock monitor, also remembering parents, inputs and registered outputs for the plan."""

        def _record(self, request: Any, urn: str, rid: str, state: Any, read: bool) -> None:
            inputs = {} if request.type == STACK_TYPE else _wire(request.properties if read else request.object)
            recorder.resources.append(
                RegisteredResource(
                    urn=urn,
                    type=request.type,
                    name=request.name,
                    custom=bool(read or request.custom),
                    parent=request.parent or None,
                    id=rid or "",
                    inputs=_plain(inputs),
                    outputs=_plain(state),
                    # A provider reference is "<provider URN>::<provider ID>".
                    provider=request.provider.rsplit("::", 1)[0] if request.provider else None,
                    read=read,
                )
            )

        def RegisterResource(self, request: Any) -> Any:  # noqa: N802  (the gRPC method name)
            response = super().RegisterResource(request)  # type: ignore[no-untyped-call]
            registration = self.resources.get(response.urn)
            state = registration.state if registration is not None else {}
            self._record(request, response.urn, response.id, state if request.custom else {}, read=False)
            return response

        def ReadResource(self, request: Any) -> Any:  # noqa: N802
            response = super().ReadResource(request)  # type: ignore[no-untyped-call]
            registration = self.resources[response.urn]
            self._record(request, response.urn, registration.id, registration.state, read=True)
            return response

        def RegisterResourceOutputs(self, request: Any) -> Any:  # noqa: N802
            recorder.registered_outputs[request.urn] = _plain(_wire(request.outputs))
            return super().RegisterResourceOutputs(request)  # type: ignore[no-untyped-call]

    return RecordingMonitor(mocks)


@contextlib.contextmanager
def _program_environment(project: Project) -> Iterator[None]:
    """cwd, sys.path and sys.argv as the language host sets them; the program's own modules dropped after."""
    saved_cwd = os.getcwd()
    saved_path = list(sys.path)
    saved_argv = list(sys.argv)
    before = set(sys.modules)
    program_dir = str(project.main.parent)
    os.chdir(project.directory)
    sys.path.insert(0, program_dir)
    sys.argv = [str(project.main)]
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        sys.argv = saved_argv
        # Modules the program brought from its own directory (helpers beside __main__.py) would otherwise be
        # reused by the next plan of a different directory; SDK modules stay cached (importing them is the cost).
        root = str(project.directory)
        for name in set(sys.modules) - before:
            module_file = getattr(sys.modules.get(name), "__file__", None) or ""
            if module_file.startswith(root + os.sep) and ".venv" not in module_file:
                del sys.modules[name]


def _run(project: Project) -> ProgramPlan:
    recorder = _Recorder()
    cloud = FakeCloud(
        azure_location=project.config.get("azure-native:location", DEFAULT_AZURE_LOCATION),
        aws_region=project.config.get("aws:region", DEFAULT_AWS_REGION),
    )
    monitor = _build_monitor(_build_mocks(cloud, recorder), recorder)
    logger = logging.getLogger(f"wirespeed.program.{id(recorder)}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(_LogCollector(recorder))

    loop = asyncio.new_event_loop()
    # One worker: the mocks answer instantly, and serial RPCs make every run register in the same order, so
    # invented values (addresses, IDs) and the plan are the same each time.
    loop.set_default_executor(ThreadPoolExecutor(max_workers=1, thread_name_prefix="wirespeed-plan"))
    asyncio.set_event_loop(loop)
    _configure_runtime(project, monitor, logger)
    try:
        _execute(project, loop)
    finally:
        _close(loop)
        logger.handlers.clear()
    return _plan(project, recorder, cloud)


def _configure_runtime(project: Project, monitor: Any, logger: logging.Logger) -> None:
    """The SDK's settings and config as the language host would set them, with the mock monitor and engine."""
    from pulumi.runtime import settings as pulumi_settings
    from pulumi.runtime.config import set_all_config
    from pulumi.runtime.mocks import MockEngine, MockSettings

    pulumi_settings.ROOT.set(None)
    pulumi_settings.configure(
        MockSettings(  # type: ignore[no-untyped-call]
            monitor=monitor,
            monitor_features=set(monitor.GetDeploymentInfo(None).supportedFeatures),
            engine=MockEngine(logger),
            project=project.name,
            stack=project.stack,
            dry_run=False,
            organization="organization",
            root_directory=str(project.directory),
            callbacks=None,
            parallel=1,
            legacy_apply_enabled=False,
            outputs=set(),
            lock=threading.Lock(),
            package_refs={},
            base_providers_by_ref={},
        )
    )
    set_all_config(dict(project.config), list(project.secret_keys))


def _execute(project: Project, loop: asyncio.AbstractEventLoop) -> None:
    """Run the program to the end; whatever it raises becomes a :class:`ProgramError` naming where."""
    import pulumi
    from pulumi.runtime.stack import run_in_stack

    def program() -> Coroutine[Any, Any, None]:
        runpy.run_path(str(project.main), run_name="__main__")
        return _settle()

    try:
        with _program_environment(project), contextlib.redirect_stdout(sys.stderr):
            # The program's own prints go to stderr so `--json` stays one parseable document.
            loop.run_until_complete(run_in_stack(program))
    except pulumi.InputPropertiesError as exc:
        raise _refused(project, exc) from None
    except pulumi.RunError as exc:
        raise ProgramError(f"{project.main}: {exc}") from None
    except ProgramError:
        raise
    except ModuleNotFoundError as exc:
        raise ProgramError(
            f"{project.main}: {_where(exc, project)}{exc}: install the project's requirements "
            f"({install_command(['-r', str(project.directory / 'requirements.txt')])}) into this environment"
        ) from None
    except SystemExit:
        raise  # the program ending the process: the isolated child reports it as that
    except BaseException as exc:
        # An exception of any other class is the program's failure too, BaseExceptions included: in `plan` the
        # program runs in a child leading its own process group, where no terminal's Ctrl-C reaches it, so a
        # KeyboardInterrupt there is one the program raised (as is a GeneratorExit or its own BaseException).
        raise _raised(project, exc) from None


def _refused(project: Project, exc: Any) -> ProgramError:
    """A program's ``InputPropertiesError`` as one heading and one line per problem.

    wirespeed's components put every problem in the message as well as in the details (``str`` of an
    InvalidInputError: a heading, then a line each), so only the message's first line is the heading; a message
    with no details is all problems after its first line.
    """
    lines = [line.strip() for line in str(exc.message or "").splitlines() if line.strip()]
    heading = lines[0].removesuffix(":") if lines else ""
    problems = [f"{e['property_path']}: {e['reason']}" for e in (exc.errors or [])] or lines[1:]
    message = f"{project.main}: the program refused its inputs"
    if heading and heading not in problems:
        message += f": {heading}"
    return ProgramError(message, problems)


def _plan(project: Project, recorder: _Recorder, cloud: FakeCloud) -> ProgramPlan:
    """What the recorder saw, components with the outputs they registered, in a stable order."""
    stack_urn = next((r.urn for r in recorder.resources if r.type == STACK_TYPE), None)
    resources = tuple(
        r
        if r.custom
        else RegisteredResource(
            urn=r.urn,
            type=r.type,
            name=r.name,
            custom=False,
            parent=r.parent,
            id=r.id,
            inputs=r.inputs,
            outputs=recorder.registered_outputs.get(r.urn, {}),
            provider=r.provider,
            read=r.read,
        )
        # Registration order races between resources that do not depend on each other (the SDK sends its RPCs
        # from a thread pool: two profiles' DaemonSets arrive in either order), so plans and their golden files
        # list resources by URN, the stack first.
        for r in sorted(recorder.resources, key=lambda r: (r.type != STACK_TYPE, r.urn))
    )
    return ProgramPlan(
        project=project,
        resources=resources,
        stack_outputs=recorder.registered_outputs.get(stack_urn, {}) if stack_urn else {},
        invokes=tuple(recorder.invokes),
        log=tuple(recorder.log),
        unmocked_invokes=tuple(cloud.unmocked_invokes),
    )


async def _settle() -> None:
    """Wait until every output and registration RPC the program started has finished.

    The SDK's wait_for_rpcs (which still runs after this, and re-raises any failure) waits for the first of all
    pending outputs to finish, over and over: a callback per pending task per round, quadratic in the number of
    outputs (~5,000 for an example here, most of a warm plan's time). Waiting for all of them at once is one
    callback each per round; rounds repeat while finished outputs start new ones.
    """
    from pulumi.runtime.settings import SETTINGS, _get_rpc_manager

    while True:
        with SETTINGS.lock:
            pending: list[asyncio.Future[Any]] = [t for t in SETTINGS.outputs if not t.done()]
        pending += [r for r in _get_rpc_manager().rpcs if isinstance(r, asyncio.Future) and not r.done()]
        if not pending:
            return
        await asyncio.wait(pending)


# How many frames of a program's failure are shown under it, innermost last: the line that raised and the calls
# that led there, without the frames of the SDK, runpy and wirespeed that every program's run starts with.
SHOWN_FRAMES = 5


def _raised(project: Project, exc: BaseException) -> ProgramError:
    """What the program raised: a line naming the program, where it raised and the exception; its last frames."""
    text = str(exc)
    message = f"{project.main}: {_where(exc, project)}{type(exc).__name__}{': ' + text if text else ''}"
    frames = traceback.extract_tb(exc.__traceback__)
    root = str(project.directory) + os.sep
    first = next((i for i, f in enumerate(frames) if f.filename.startswith(root)), 0)
    shown = [
        f"{_shown_path(f.filename, project)}:{f.lineno} in {f.name}" + (f": {f.line}" if f.line else "")
        for f in frames[first:][-SHOWN_FRAMES:]
    ]
    return ProgramError(message, shown)


def _shown_path(filename: str, project: Project) -> str:
    path = Path(filename)
    return str(path.relative_to(project.directory)) if path.is_relative_to(project.directory) else filename


def _where(exc: BaseException, project: Project) -> str:
    """``file:line: `` of the innermost frame in the project's own files, if any."""
    root = str(project.directory) + os.sep
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(root)]
    if not frames:
        return ""
    last = frames[-1]
    return f"{Path(last.filename).relative_to(project.directory)}:{last.lineno}: "


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what a failed run left pending and close the loop (as the automation server does)."""
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    for task in pending:
        with contextlib.suppress(BaseException):
            loop.run_until_complete(task)
    with contextlib.suppress(RuntimeError):
        loop.run_until_complete(loop.shutdown_default_executor())
    loop.close()
    asyncio.set_event_loop(None)
