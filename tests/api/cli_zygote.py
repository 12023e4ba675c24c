"""The process behind ``tests/api/forked_cli.py``: a command-line client (the real ``cfy`` or ``openstack``),
imported once, each command run in a fork of this process.

Run as a script (``python cli_zygote.py CLIENT``) in the environment every command of one runner shares.  It
reads one request a line on stdin: ``{"args": [...], "out": PATH, "err": PATH}``; forks; the child points its
stdout and stderr at the two files and runs ``CLIENT ARGS`` as the client's own script in ``bin`` does; the
parent answers ``{"code": EXIT_CODE}`` on stdout when the child has ended.
"""

import importlib
import json
import os
import sys
import traceback


def cfy_imported() -> None:
    """cfy's modules, its lazily loaded command modules included."""
    from cloudify_cli import main

    for name in dir(main):
        spec = getattr(getattr(main, name), "_import_spec", None)
        if spec:
            importlib.import_module(spec[0])


def cfy(args: list) -> int:
    """cfy reads its active profile, and builds its command tree from it, when its modules are imported: each
    command reads both again, as a new cfy process would."""
    from cloudify_cli import env, main

    env.profile = env.get_profile_context(suppress_error=True)
    main._make_cfy().main(args=args, prog_name="cfy")
    return 0


def openstack_imported() -> None:
    """The shell and the orchestration commands (heatclient's), which its commands load by entry point."""
    import openstackclient.shell  # noqa: F401
    from importlib.metadata import entry_points

    for point in entry_points(group="openstack.orchestration.v1"):
        importlib.import_module(point.module)


def openstack(args: list) -> int:
    from openstackclient.shell import main

    return main(args)


#: each client's imports (in this process) and its command (in a fork)
CLIENTS = {"cfy": (cfy_imported, cfy), "openstack": (openstack_imported, openstack)}


def run(command, args: list, out: str, err: str) -> None:
    """In the child: the command with its output in the two files; never returns."""
    code = 1
    try:
        with open(os.devnull) as nothing:
            os.dup2(nothing.fileno(), 0)
        for fd, path in ((1, out), (2, err)):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        sys.argv = [command.__name__, *args]
        try:
            code = command(args) or 0
        except SystemExit as exit_:
            if isinstance(exit_.code, str):
                print(exit_.code, file=sys.stderr)
            code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        except BaseException:  # what an uncaught exception does to the client's process
            sys.excepthook(*sys.exc_info())
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(client: str) -> None:
    imported, command = CLIENTS[client]
    imported()
    for line in sys.stdin:
        request = json.loads(line)
        child = os.fork()
        if child == 0:
            run(command, request["args"], request["out"], request["err"])
        _pid, status = os.waitpid(child, 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    serve(sys.argv[1])
