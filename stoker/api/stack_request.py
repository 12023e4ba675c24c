"""What a create, update, preview or validate request body holds (Heat's InstantiationData).

``{"stack_name", "template" (map or text) | "template_url", "parameters",
"environment" (map or text), "environment_files", "files", "timeout_mins",
"disable_rollback", "tags", ...}``.  Every problem is a 400 with a message
naming the field.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from stoker.api.body import check_depth, extract_bool, extract_int, extract_tags
from stoker.api.error_bodies import ApiError, bad_request
from stoker.errors import Problems, ValidationFailed
from stoker.limits import limit
from stoker.names import stack_name_error
from stoker.template.environment import Environment
from stoker.template.loader import load
from stoker.template.template import Template

@dataclass
class Inputs:
    template: Template | None
    environment: Environment | None
    parameters: dict
    files: dict
    timeout_mins: int | None = None
    disable_rollback: bool | None = None
    tags: list[str] | None = None
    clear_parameters: list[str] = field(default_factory=list)
    #: Heat's converge: an update that also puts right what drifted (``engine/drift.py``)
    converge: bool = False
    raw_environment: dict | None = None


def stack_name(body: dict) -> str:
    if "stack_name" not in body:
        raise bad_request("No stack name specified")
    name = body["stack_name"]
    error = stack_name_error(name)
    if error:
        raise bad_request(error, "StackValidationFailed")
    return name


def parse(body: dict, patch: bool = False, template_required: bool = True) -> Inputs:
    files = body.get("files") or {}
    if not isinstance(files, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in files.items()):
        raise bad_request("files must be a map of file names to file contents (strings)")
    parameters = body.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise bad_request("parameters must be a map of parameter names to values")
    template = _template(body, files, patch or not template_required)
    environment, raw_env = _environment(body, files)
    inputs = Inputs(template, environment, dict(parameters), dict(files), raw_environment=raw_env)
    if body.get("timeout_mins") is not None:
        inputs.timeout_mins = extract_int("timeout_mins", body["timeout_mins"], allow_zero=False)
    if body.get("disable_rollback") is not None:
        inputs.disable_rollback = extract_bool("disable_rollback", body["disable_rollback"])
    if body.get("tags") is not None:
        inputs.tags = extract_tags(body["tags"])
    clear = body.get("clear_parameters") or []
    if not isinstance(clear, list) or not all(isinstance(c, str) for c in clear):
        raise bad_request("clear_parameters must be a list of parameter names")
    inputs.clear_parameters = clear
    if body.get("converge") is not None:
        inputs.converge = extract_bool("converge", body["converge"])
    return inputs


def _template(body: dict, files: dict, optional: bool) -> Template | None:
    if "template" in body and body["template"] not in (None, ""):
        data = body["template"]
        if isinstance(data, dict):
            size, most = len(json.dumps(data)), limit("max_template_size")
            if size > most:
                raise ApiError(400, f"Request limit exceeded: Template size ({size} bytes) exceeds maximum "
                               f"allowed size ({most} bytes).", "RequestLimitExceeded")
            return Template(data, files)
        if isinstance(data, str):
            return _checked(Template.from_text(data, "template", files))
        raise bad_request("template must be a map or the text of a template")
    if body.get("template_url"):
        raise _no_urls(body["template_url"])
    if optional:
        return None
    raise bad_request("No template specified")


def _checked(template: Template) -> Template:
    check_depth(template.data, "The template")
    return template


def _no_urls(url: Any) -> ApiError:
    """Templates by URL are refused: Stoker works offline, and a server fetching URLs
    for its callers could be pointed at addresses only it can reach."""
    return bad_request(f"template_url is not supported ({url!r}): Stoker does not fetch URLs; send the "
                      "template itself in \"template\" (python-heatclient and openstack do)")


def _environment(body: dict, files: dict) -> tuple[Environment | None, dict | None]:
    """The environment: the files named in ``environment_files`` merged in order, else ``environment``."""
    sources: list[tuple[str, Any]] = []
    names = body.get("environment_files")
    if names:
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise bad_request("environment_files must be a list of names of the files map")
        for name in names:
            if name not in files:
                raise bad_request(f"environment file {name} is not in the files map")
            sources.append((name, files[name]))
    elif body.get("environment") not in (None, "", {}):
        sources.append(("environment", body["environment"]))
    if not sources:
        return None, None
    env = Environment()
    problems = Problems()
    merged: dict = {}
    for name, data in sources:
        if isinstance(data, str):
            data = load(data, name)
            check_depth(data, f"The environment {name}")
        if not isinstance(data, dict):
            raise bad_request(f"{name}: an environment must be a map of sections")
        env.merge(data, problems, name)
        merged.update(data)
    if problems.errors:
        raise ValidationFailed(problems.items)
    env.warnings = problems.warnings
    return env, env.as_dict()
