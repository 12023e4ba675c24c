"""A hidden parameter's value never appears in anything ``stoker stack ...`` prints."""

from __future__ import annotations

import pytest

from .helpers import template

PASSWORD = "Sup3r-S3cret-Passw0rd"
NEW_PASSWORD = "An0ther-S3cret-Passw0rd"
API_KEY = "KEY-hunter2-FROM-ENV"  # from hidden_env.yaml
SECRETS = (PASSWORD, NEW_PASSWORD, API_KEY)


def _clean(run, *secrets: str) -> None:
    for secret in secrets or SECRETS:
        assert secret not in run.output, f"{secret!r} shown by stoker {' '.join(run.args)}:\n{run.output}"


@pytest.mark.sqlite_only
def test_hidden_values_are_never_shown(cli, files):
    runs = []

    def run(*args, code=0):
        done = cli(*args).expect(code)
        runs.append(done)
        return done

    run("stack", "create", "h", "-t", template("hidden.yaml"), "-e", template("hidden_env.yaml"),
        "-P", f"dir={files}", "-P", f"password={PASSWORD}", "--wait")
    # the secret did reach the resources
    assert (files / "secret.txt").read_text() == f"{PASSWORD}:{API_KEY}"

    for fmt in ("yaml", "value"):
        run("stack", "show", "h", "-f", fmt)
    for fmt in ("table", "json"):
        run("stack", "show", "h", "-f", fmt)
        run("stack", "event", "list", "h", "-f", fmt)
        run("stack", "output", "show", "h", "--all", "-f", fmt)
        run("stack", "resource", "list", "h", "-f", fmt)
        run("stack", "resource", "show", "h", "secret_file", "-f", fmt)
        run("stack", "resource", "show", "h", "salted", "-f", fmt)
    run("stack", "list")
    run("stack", "output", "list", "h")
    run("stack", "failures", "list", "h")
    run("stack", "environment", "show", "h")
    run("stack", "template", "show", "h")
    shown = run("stack", "show", "h", "-f", "json").json
    assert shown["parameters"]["password"] == shown["parameters"]["api_key"] == "******"
    env = run("stack", "environment", "show", "h", "-f", "json").json
    assert env["parameters"]["api_key"] == "******"

    run("stack", "update", "h", "--existing", "-P", f"password={NEW_PASSWORD}", "--dry-run", "-f", "json")
    run("stack", "update", "h", "--existing", "-P", f"password={NEW_PASSWORD}", "--wait", "-f", "json")
    assert (files / "secret.txt").read_text() == f"{NEW_PASSWORD}:{API_KEY}"
    run("stack", "event", "list", "h", "-f", "json")
    run("stack", "check", "h", "-f", "json")
    run("stack", "delete", "h", "--yes", "--wait")

    for done in runs:
        _clean(done)


@pytest.mark.sqlite_only
def test_a_bad_hidden_value_is_not_echoed_in_the_error(cli, files):
    bad = "bad!value!that-is-secret"
    done = cli("stack", "create", "h", "-t", template("hidden.yaml"), "-e", template("hidden_env.yaml"),
               "-P", f"dir={files}", "-P", f"password={bad}").expect(1)
    assert "password" in done.output
    _clean(done, bad, API_KEY)
    done = cli("stack", "create", "h", "-t", template("hidden.yaml"), "-e", template("hidden_env.yaml"),
               "-P", f"dir={files}", "-P", f"password={bad}", "-f", "json").expect(1)
    assert "parameters.password" in done.output
    _clean(done, bad, API_KEY)
    assert cli("stack", "list", "-f", "json").expect(0).json == []


@pytest.mark.sqlite_only
def test_a_hidden_value_in_a_bad_property_is_not_echoed(cli, engine):
    secret = "Zebra-Secret-99"
    run = cli("stack", "create", "h", "-t", template("hidden_property.yaml"), "-P", f"password={secret}")
    run.expect(1)
    assert "resources.token.properties.length" in run.stderr
    _clean(run, secret)
    # the Python API's error says the same
    with pytest.raises(Exception) as caught:
        engine.create_stack("h", template("hidden_property.yaml"), parameters={"password": secret})
    assert secret not in str(caught.value)
