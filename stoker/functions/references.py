"""Functions that reach outside the expression: parameters, resources, files, the parent."""

from __future__ import annotations

from typing import Any, Iterator

from stoker.errors import FunctionError
from stoker.functions.base import Function, resolve
from stoker.functions.call import RUNTIME


def select_path(value: Any, path: list) -> Any:
    """Follow keys/indexes into ``value``; ``None`` when the path leads nowhere (as Heat)."""
    for key in path:
        if isinstance(value, dict):
            if not isinstance(key, (str, int)) or key not in value:
                return None
            value = value[key]
        elif isinstance(value, (list, str)):
            try:
                value = value[int(key)]
            except (ValueError, TypeError, IndexError):
                return None
        else:
            return None
    return value


def _static_name(fn: Function, value: Any, what: str) -> str | None:
    """The name a reference argument holds, if it is known without resolving."""
    if isinstance(value, Function):
        return None
    if not isinstance(value, str):
        raise fn.error(f'{what} in "{fn.name}" must be a string, not {type(value).__name__}')
    return value


class GetParam(Function):
    """``get_param: name`` or ``get_param: [name, key_or_index, ...]``."""

    passes_through = True

    def _name_and_path(self, args: Any) -> tuple[Any, list]:
        if isinstance(args, list):
            if not args:
                raise self.error(f'Function "{self.name}" must have arguments')
            return args[0], args[1:]
        return args, []

    def validate(self) -> None:
        """Heat checks the arguments only where it resolves the call (a create's checks of
        the properties, an output at show): here a static name is only looked up, to warn."""
        if self.args in (None, "", []) or not isinstance(self.args, (str, list)):
            return
        name, _ = self._name_and_path(self.args)
        if isinstance(name, str) and not self.stack.has_parameter(name):
            # Heat fails only where it resolves the call: a branch it never takes is fine
            self.parser.problems.warn(self.path, "unknown-parameter",
                                      f'The parameter "{name}" is not defined in the template '
                                      "(an error at create, if resolved)")

    def result(self) -> Any:
        args = self.args if type(self.args) is str else resolve(self.args)  # a name: nothing to resolve
        if args in (None, "", []):
            raise self.error(f'Function "{self.name}" must have arguments')
        if not isinstance(args, (str, list)):
            raise self.error(f'Argument to "{self.name}" must be string or list')
        name, path = self._name_and_path(args)
        if not isinstance(name, str):
            raise self.error(f'Parameter name in "{self.name}" must be string')
        if not self.stack.has_parameter(name):
            raise self.error(f"The Parameter ({name}) was not provided.", code="unknown-parameter")
        value = self.stack.parameter(name)
        for key in path:
            if not isinstance(key, (str, int)):
                raise self.error(f'Path components in "{self.name}" must be strings')
            if isinstance(value, dict):
                if key not in value:
                    return ""
                value = value[key]
            elif isinstance(value, (list, str)):
                try:
                    value = value[int(key)]
                except ValueError:
                    raise self.error(
                        f"Path components in '{self.name}' must be a string that can be "
                        "parsed into an integer."
                    ) from None
                except IndexError:
                    return ""
            else:
                raise self.error(f"\"{self.name}\" can't traverse path")
        return value


class _ResourceFunction(Function):
    """Shared by functions whose first argument names a resource."""

    passes_through = True
    phase = RUNTIME  # it names a resource: computed once that exists

    def resource_name_arg(self) -> Any:
        return self.args[0] if isinstance(self.args, list) and self.args else self.args

    def static_resource_name(self) -> str | None:
        return _static_name(self, self.resource_name_arg(), "Resource name")

    def check_resource_exists(self) -> None:
        name = self.static_resource_name()
        if name is not None and not self.stack.has_resource(name):
            raise self.error(
                f'The specified reference "{name}" (in {self.name}) is incorrect: '
                "there is no such resource",
                code="unknown-resource",
            )

    def resource_name(self) -> str:
        name = resolve(self.resource_name_arg())
        if not isinstance(name, str):
            raise self.error(f'Resource name in "{self.name}" must be a string')
        if not self.stack.has_resource(name):
            raise self.error(
                f'The specified reference "{name}" (in {self.name}) is incorrect',
                code="unknown-resource",
            )
        return name

    def dependencies(self) -> Iterator[str]:
        name = self.resource_name_arg()
        if type(name) is str and not self.args_have_refs:  # the usual, static case: asked often
            return iter((name,) if self.stack.has_resource(name) else ())
        found = list(super().dependencies()) if self.args_have_refs else []
        if not isinstance(name, str):
            try:
                name = resolve(name)
            except FunctionError:
                return iter(found)
        if isinstance(name, str) and self.stack.has_resource(name):
            found.append(name)
        return iter(found)

    def waits(self) -> bool:
        """As ``Function.waits``; a static name (the usual case, asked for each value naming a
        resource while validating) without building the list of dependencies."""
        name = self.resource_name_arg()
        parser = self.parser
        if type(name) is str and not self.args_have_refs and parser is not None:
            stack = parser.stack
            return stack.has_resource(name) and not stack.resource_ready(name)
        return super().waits()


class GetResource(_ResourceFunction):
    """``get_resource: name``: the resource's physical id."""

    #: Heat's validate never looks the resource up: an output naming none shows the error
    result_time_codes = frozenset(("unknown-resource",))

    def validate(self) -> None:
        if isinstance(self.args, list):
            raise self.error(f'Argument to "{self.name}" must be a resource name, not a list')
        self.check_resource_exists()

    def result(self) -> Any:
        name = self.resource_name()
        if not self.stack.resource_enabled(name):
            return None
        return self.stack.resource_reference(name)


def attributes_read_whole(data: Any, resource: str) -> set[str]:
    """The attributes of ``resource`` that some ``get_attr`` in ``data`` (a template's
    resources and outputs, raw) reads whole, by a static name and no path: with the type's
    own, what Heat's ``get_attr: [resource]`` gives (its stored attribute values)."""
    found: set[str] = set()
    todo = [data]
    while todo:
        value = todo.pop()
        if isinstance(value, dict):
            args = value.get("get_attr") if len(value) == 1 else None
            if (isinstance(args, list) and len(args) == 2 and args[0] == resource
                    and isinstance(args[1], str)):
                found.add(args[1])
            todo.extend(value.values())
        elif isinstance(value, list):
            todo.extend(value)
    return found


class GetAtt(_ResourceFunction):
    """``get_attr: [resource, attribute, key_or_index, ...]``."""

    #: may the attribute be left out (``get_attr: [resource]`` = all attributes)?
    all_attributes_allowed = False

    def validate(self) -> None:
        shortest = 1 if self.all_attributes_allowed else 2
        if not isinstance(self.args, list) or len(self.args) < shortest:
            attribute = "(attribute)" if self.all_attributes_allowed else "attribute"
            raise self.error(
                f'Arguments to "{self.name}" must be of the form [resource_name, {attribute}, (path), ...]'
            )
        self.check_resource_exists()
        if len(self.args) > 1:
            attribute = self.args[1]
            if not isinstance(attribute, (str, Function)):
                raise self.error(f'Attribute name in "{self.name}" must be a string')

    def attribute_name(self) -> str | None:
        """The attribute's name when known without resolving (for the engine)."""
        if len(self.args) < 2 or isinstance(self.args[1], Function):
            return None
        return self.args[1]

    def result(self) -> Any:
        name = self.resource_name()
        if not self.stack.resource_enabled(name):
            return None
        rest = resolve(self.args[1:])
        if not rest:
            return self.stack.resource_all_attributes(name)
        attribute, path = rest[0], rest[1:]
        if not isinstance(attribute, str):
            raise self.error(f'Attribute name in "{self.name}" must be a string')
        return self.stack.resource_attribute(name, attribute, path)


class GetAttThenSelect(GetAtt):
    """2013-05-23's ``get_attr``: same shape, path applied after the attribute."""


class GetAttAllAttributes(GetAtt):
    """2015-10-15 onwards: ``get_attr: [resource]`` gives every attribute but ``show``."""

    all_attributes_allowed = True


class GetFile(Function):
    """``get_file: key``: the content the files map holds for ``key``."""

    passes_through = True

    def validate(self) -> None:
        if isinstance(self.args, Function):
            raise self.error(
                f'The argument of "{self.name}" must be a static path, not a function: '
                "files are gathered before functions run"
            )
        if not isinstance(self.args, str):
            raise self.error(f'Argument to "{self.name}" must be a string (a file path or URL)')
        if self.stack.file(self.args) is None:
            raise self.error(f'No content found in the "files" section for {self.name} path: {self.args}',
                             code="missing-file")

    def result(self) -> Any:
        content = self.stack.file(self.args)
        if content is None:
            raise self.error(f'No content found in the "files" section for {self.name} path: {self.args}',
                             code="missing-file")
        return content


class ResourceFacade(Function):
    """``resource_facade: metadata|deletion_policy|update_policy`` of the parent resource."""

    passes_through = True

    kinds = ("metadata", "deletion_policy", "update_policy")

    def validate(self) -> None:
        if self.args not in self.kinds:
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be one of: {", ".join(self.kinds)}'
            )

    def result(self) -> Any:
        value = self.stack.facade(self.args)
        if value is None:
            if self.args == "deletion_policy":
                return "Delete"
            if self.args == "metadata":
                return {}
        return value
