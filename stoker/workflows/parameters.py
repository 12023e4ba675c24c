"""A workflow's parameters: the declared ones with their defaults, checked as Cloudify checks them."""

from __future__ import annotations

from typing import Any

from stoker.workflows.workflow_error import WorkflowError

#: execution settings every workflow takes (``cfy local``'s --task-retries / --task-retry-interval)
EXECUTION_SETTINGS = {"task_retries": {"type": "integer", "default": 0},
                      "task_retry_interval": {"type": "float", "default": 1}}


def given_flag(given: dict, name: str, default: bool = False) -> bool:
    """A switch of a request (an execution's ``force``, ``dry_run``, ...): a boolean, or the text "true"/"false"
    cloudify-rest-client sends; anything else refused as Cloudify's ``verify_and_convert_bool`` refuses it."""
    value = given.get(name, default)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise WorkflowError(f"{name} must be <true/false>, got {str(value)[:100]}")
    return value


def _boolean(text: str) -> bool:
    if text.strip().lower() not in ("true", "false"):
        raise ValueError(text)
    return text.strip().lower() == "true"


#: what a text given for a number or a boolean stands for, as Cloudify's manager reads it
_FROM_TEXT = {"integer": int, "float": float, "boolean": _boolean}
_TYPES = {"string": (str,), "integer": (int,), "float": (int, float), "boolean": (bool,), "list": (list,),
          "dict": (dict,)}


def workflow_parameters(workflow_id: str, declaration: Any, given: dict, allow_custom: bool = False) -> dict:
    declared = dict((declaration.get("parameters") or {}) if isinstance(declaration, dict) else {})
    schemas = {**EXECUTION_SETTINGS, **declared}
    unknown = sorted(set(given) - set(schemas))
    if unknown and not allow_custom:
        raise WorkflowError(f"Workflow {workflow_id} does not have the following parameters declared: "
                            f"{', '.join(unknown)}; declared: {', '.join(sorted(declared)) or 'none'} "
                            "(--allow-custom-parameters passes them anyway)")
    values, missing = {}, []
    for name, schema in schemas.items():
        schema = schema if isinstance(schema, dict) else {}
        if name in given:
            values[name] = _checked(workflow_id, name, given[name], schema.get("type"))
        elif "default" in schema:
            values[name] = schema["default"]
        elif name in declared and schema.get("required", True) is not False:
            missing.append(name)
    if missing:
        raise WorkflowError(f"Workflow {workflow_id} is missing parameter(s): {', '.join(missing)}")
    values.update({k: v for k, v in given.items() if k not in schemas})
    return values


def _checked(workflow_id: str, name: str, value: Any, type_name: Any) -> Any:
    allowed = _TYPES.get(type_name)
    if allowed is None or value is None:
        return value
    if isinstance(value, str) and type_name in _FROM_TEXT:  # ``cfy executions start -p delta=2`` sends text
        try:
            return _FROM_TEXT[type_name](value)
        except ValueError:
            pass
    if isinstance(value, bool) and type_name in ("integer", "float"):
        allowed = ()
    if not isinstance(value, allowed):
        raise WorkflowError(f"Workflow {workflow_id}: parameter {name} must be of type {type_name}, not {value!r}")
    return value
