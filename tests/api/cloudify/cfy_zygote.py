"""The process behind ``tests/api/cloudify/cfy_runner.py``: the real cfy 7.0.5, imported once, each command run in a
fork of this process.

Run as a script (``python cfy_zygote.py``) in the environment every command of one runner shares (its
``CFY_WORKDIR``).  It reads one request a line on stdin: ``{"args": [...], "out": PATH, "err": PATH}``; forks; the
child points its stdout and stderr at the two files and runs ``cfy ARGS`` as ``bin/cfy`` does; the parent
answers ``{"code": EXIT_CODE}`` on stdout when the child has ended.  cfy reads its active profile, and builds its
command tree from it, when its modules are imported: each child reads both again, as a new cfy process would.
"""

import importlib
import json
import os
import sys
import traceback


def imported() -> None:
    """cfy's modules, its lazily loaded command modules included."""
    from cloudify_cli import main

    for name in dir(main):
        spec = getattr(getattr(main, name), "_import_spec", None)
        if spec:
            importlib.import_module(spec[0])


def run(args: list, out: str, err: str) -> None:
    """In the child: ``cfy ARGS`` with its output in the two files; never returns."""
    code = 1
    try:
        with open(os.devnull) as nothing:
            os.dup2(nothing.fileno(), 0)
        for fd, path in ((1, out), (2, err)):
            target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(target, fd)
            os.close(target)
        from cloudify_cli import env, main

        env.profile = env.get_profile_context(suppress_error=True)
        sys.argv = ["cfy", *args]
        try:
            main._make_cfy().main(args=args, prog_name="cfy")
            code = 0
        except SystemExit as exit_:
            if isinstance(exit_.code, str):
                print(exit_.code, file=sys.stderr)
            code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
        except BaseException:  # what an uncaught exception does to the cfy process
            sys.excepthook(*sys.exc_info())
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    imported()
    for line in sys.stdin:
        request = json.loads(line)
        child = os.fork()
        if child == 0:
            run(request["args"], request["out"], request["err"])
        _pid, status = os.waitpid(child, 0)
        print(json.dumps({"code": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    serve()
