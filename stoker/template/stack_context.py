"""What an intrinsic function may ask of the stack it lives in.

The template layer knows parameters, conditions and files; it knows resource
*names* but not resource *state*.  ``StackContext`` answers what the template
layer can, and raises ``ResourcePending`` for the rest.  The engine subclasses
it and answers the resource questions from real resources.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

from stoker.errors import REJECTED_PARAMETER, FunctionError, ResourcePending

#: every name ``pseudo_parameters`` may give (a parameter of one of these names is looked up the long way)
_PSEUDO_NAMES = frozenset(("OS::stack_name", "OS::stack_id", "OS::project_id",
                           "AWS::StackName", "AWS::Region", "AWS::StackId"))


class StackContext:
    """The seam between functions and whatever runs the template."""

    def __init__(
        self,
        *,
        stack_name: str = "stack",
        stack_id: str = "00000000-0000-0000-0000-000000000000",
        project_id: str = "default",
        parameters: Mapping[str, Any] | None = None,
        parameter_names: frozenset[str] | set[str] | None = None,
        rejected_parameters: frozenset[str] | set[str] = frozenset(),
        resource_names: frozenset[str] | set[str] = frozenset(),
        condition_names: frozenset[str] | set[str] = frozenset(),
        files: Mapping[str, str] | None = None,
        facade: Mapping[str, Any] | None = None,
        mappings: Mapping[str, Any] | None = None,
        cfn: bool = False,
    ):
        self.stack_name = stack_name
        self.stack_id = stack_id
        self.project_id = project_id
        self.parameters: dict[str, Any] = dict(parameters or {})
        #: declared parameters; a declared one may lack a value while validating
        self.parameter_names = set(self.parameters if parameter_names is None else parameter_names)
        #: declared parameters whose given value was refused (and reported as such)
        self.rejected_parameters = frozenset(rejected_parameters)
        self.resource_names = set(resource_names)
        self.condition_names = set(condition_names)
        self.files = dict(files or {})
        #: the parent resource's metadata and policies; None in a top-level stack
        self.facade_data = None if facade is None else dict(facade)
        #: a CFN template's ``Mappings`` (for ``Fn::FindInMap``)
        self.mappings = dict(mappings or {})
        #: a CFN-format template also has the AWS:: pseudo parameters
        self.cfn = cfn
        #: set by whoever evaluates conditions: name -> bool
        self.condition_evaluator: Callable[[str], bool] | None = None

    # -- parameters -------------------------------------------------------------
    def has_parameter(self, name: str) -> bool:
        return name in self.parameter_names or name in self.pseudo_parameters()

    def parameter(self, name: str) -> Any:
        if name in self.parameters and name not in _PSEUDO_NAMES and name not in self.rejected_parameters:
            return self.parameters[name]  # the usual case: no table of pseudo parameters built
        pseudo = self.pseudo_parameters()
        if name in pseudo:
            return pseudo[name]
        if name in self.rejected_parameters:
            raise FunctionError(f"The Parameter ({name}) has an invalid value.", code=REJECTED_PARAMETER)
        if name not in self.parameters:
            raise FunctionError(f"The Parameter ({name}) was not provided.", code="missing-parameter")
        return self.parameters[name]

    def pseudo_parameters(self) -> dict[str, str]:
        pseudo = {
            "OS::stack_name": self.stack_name,
            "OS::stack_id": self.stack_id,
            "OS::project_id": self.project_id,
        }
        if self.cfn:
            pseudo.update({"AWS::StackName": self.stack_name, "AWS::Region": "ap-southeast-1",
                           "AWS::StackId": f"arn:openstack:heat::{self.project_id}:stacks/"
                                           f"{self.stack_name}/{self.stack_id}"})
        return pseudo

    # -- conditions -------------------------------------------------------------
    def has_condition(self, name: str) -> bool:
        return name in self.condition_names

    def condition(self, name: str) -> bool:
        if self.condition_evaluator is None:
            raise FunctionError(f'Invalid condition "{name}"', code="unknown-condition")
        return self.condition_evaluator(name)

    # -- resources --------------------------------------------------------------
    def has_resource(self, name: str) -> bool:
        return name in self.resource_names

    def resource_enabled(self, name: str) -> bool:
        """False when the resource's ``condition`` is false."""
        return True

    def resource_ready(self, name: str) -> bool:
        """Has the resource been created, so that its id and attributes can be asked?"""
        return False

    def resource_reference(self, name: str) -> Any:
        """``get_resource``: the physical id."""
        raise ResourcePending(name)

    def resource_attribute(self, name: str, attribute: str, path: list | tuple = ()) -> Any:
        """``get_attr``: one attribute, followed along ``path`` (keys and indexes)."""
        raise ResourcePending(name)

    def resource_all_attributes(self, name: str) -> dict:
        """``get_attr: [name]``: every attribute but ``show``."""
        raise ResourcePending(name)

    # -- files and the parent ---------------------------------------------------
    def file(self, key: str) -> str | None:
        return self.files.get(key)

    def facade(self, kind: str) -> Any:
        """``resource_facade``: the parent resource's metadata/policies (refused at the top, as Heat)."""
        if self.facade_data is None:
            raise FunctionError('"resource_facade" is only available inside a provider template: '
                                "a top-level stack has no facade resource", code="no-facade")
        return self.facade_data.get(kind)

    def availability_zones(self) -> list[str]:
        return ["nova"]
