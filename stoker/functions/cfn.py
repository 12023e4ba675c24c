"""The CloudFormation-compatible functions: of heat_template_version 2013-05-23 and of the
CFN formats (AWSTemplateFormatVersion 2010-09-09, HeatTemplateFormatVersion 2012-12-12).

In HOT, ``Fn::Select`` lives on until 2015-04-30; the others were removed in
2014-10-16.  ``Fn::Join``, ``Fn::Replace``, ``Fn::ResourceFacade``,
``Fn::GetAtt`` and the condition functions are the HOT functions with
CloudFormation argument shapes.
"""

from __future__ import annotations

import json
import re
from itertools import groupby
from typing import Any

from stoker.functions import logic, references, strings
from stoker.functions.base import Function, describe, resolve, show


class Base64(Function):
    """``Fn::Base64: string``: the string itself (Heat takes user data as plain text)."""

    def validate(self) -> None:
        self.check(self.args)

    def check(self, value: Any) -> None:
        if not isinstance(value, (str, Function)):
            raise self.error(f'"{self.name}" argument must be a string, not {describe(value)}')

    def result(self) -> str:
        value = resolve(self.args)
        self.check(value)
        return value


class GetAZs(Function):
    """``Fn::GetAZs: region``: the availability zones.  The region is ignored, as in
    Heat, so it is not even parsed (a ``Ref: AWS::Region`` there does no harm)."""

    def parse_args(self, args: Any) -> Any:
        return args

    def result(self) -> list:
        return list(self.stack.availability_zones())


class Join(strings.Join):
    """``Fn::Join: [delimiter, [string, ...]]``."""


class Replace(strings.Replace):
    """``Fn::Replace: [{placeholder: value}, template]``."""

    def parts(self) -> tuple[Any, Any]:
        return self.args[1], self.args[0]

    def check_shape(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be: '
                f'{{"{self.name}": [ {{"$var1": "foo", "%var2%": "bar"}}, "$var1 is %var2%"]}}'
            )


class ResourceFacade(references.ResourceFacade):
    """``Fn::ResourceFacade: Metadata | DeletionPolicy | UpdatePolicy``."""

    cfn_kinds = {"Metadata": "metadata", "DeletionPolicy": "deletion_policy",
                 "UpdatePolicy": "update_policy"}

    def parse_args(self, args: Any) -> Any:
        # kept as the HOT name, so the HOT function's result() applies unchanged
        return self.cfn_kinds.get(args) if isinstance(args, str) else None

    def validate(self) -> None:
        if self.args is None:
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be one of: {", ".join(self.cfn_kinds)}'
            )


class Select(Function):
    """``Fn::Select: [index, list_or_map]``.

    Out-of-range indexes and missing keys give ``""``, as does an empty or
    null collection; a string collection is read as JSON.
    """

    passes_through = True

    def validate(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(f'Arguments to "{self.name}" must be of the form [index, collection]')

    def result(self) -> Any:
        index, collection = resolve(self.args[0]), resolve(self.args[1])
        if collection == "" or collection is None:
            return ""
        if isinstance(collection, str):
            try:
                collection = json.loads(collection)
            except ValueError as exc:
                raise self.error(f'"{self.name}": the collection is a string but not JSON: {exc}') from None
        if isinstance(collection, dict):
            if not isinstance(index, str):
                raise self.error(f'Index to "{self.name}" must be a string to select from a map')
            return collection.get(index, "")
        if isinstance(collection, list):
            try:
                position = int(index)
            except (TypeError, ValueError, OverflowError):
                raise self.error(f'Index to "{self.name}" must be an integer to select from a list') from None
            if not -len(collection) <= position < len(collection):
                return ""
            return collection[position]
        raise self.error(f'"{self.name}" selects from a list or a map, not {describe(collection)}')


class Split(Function):
    """``Fn::Split: [delimiter, string]``; the delimiter must be written out."""

    def validate(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(
                f'Incorrect arguments to "{self.name}" should be: "{self.name}" : [ ",", "str1,str2"]'
            )
        delimiter, text = self.args
        if not isinstance(delimiter, str) or not delimiter:
            raise self.error(f'Delimiter for "{self.name}" must be a non-empty string')
        self.check(text)

    def check(self, text: Any) -> None:
        if not isinstance(text, (str, Function)):
            raise self.error(f'String to split must be a string in "{self.name}", not {describe(text)}')

    def result(self) -> list:
        text = resolve(self.args[1])
        self.check(text)
        return text.split(self.args[0])


_MEMBER = re.compile(r"\.member\.([0-9]+)\.(.*)")


class MemberListToMap(Function):
    """``Fn::MemberListToMap: [key_name, value_name, [".member.0.Name=k", ".member.0.Value=v", ...]]``
    gives ``{k: v, ...}``: the AWS query-string encoding of a list of pairs."""

    def validate(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 3:
            raise self.error(
                f'Arguments to "{self.name}" must be of the form [key_name, value_name, '
                "['.member.0.<key_name>=<key>', '.member.0.<value_name>=<value>', ...]]"
            )
        for what, name in (("Key", self.args[0]), ("Value", self.args[1])):
            if not isinstance(name, str):
                raise self.error(f"{self.name} {what} Name must be a string")
        self.check(self.args[2])

    def check(self, members: Any) -> None:
        if isinstance(members, Function):
            return
        if not isinstance(members, list):
            raise self.error(f'The member list of "{self.name}" must be a list, not {describe(members)}')
        for item in members:
            if isinstance(item, Function):
                continue
            if not isinstance(item, str) or "=" not in item:
                raise self.error(
                    f'Items of the member list of "{self.name}" must be strings of the form '
                    f'".member.<n>.<name>=<value>", not {show(item)}'
                )

    def result(self) -> dict:
        key_name, value_name = self.args[0], self.args[1]
        members = resolve(self.args[2])
        self.check(members)
        fields = dict(item.split("=", 1) for item in members)
        numbered = []
        for field, value in fields.items():
            match = _MEMBER.match(field)
            if match:
                numbered.append((int(match.group(1)), match.group(2), value))
        numbered.sort(key=lambda entry: entry[0])
        pairs = {}
        for _, group in groupby(numbered, key=lambda entry: entry[0]):
            member = {name: value for _, name, value in group}
            if key_name in member and value_name in member:
                pairs[member[key_name]] = member[value_name]
        return pairs


class Ref(references.GetResource):
    """``Ref: name``: a resource's reference (as ``get_resource``) or, when no
    resource has that name, a parameter's value (pseudo parameters included)."""

    def validate(self) -> None:
        if not isinstance(self.args, str):
            raise self.error(f'The argument of "{self.name}" must be the name of a resource or parameter')
        if not (self.stack.has_resource(self.args) or self.stack.has_parameter(self.args)):
            # Heat reads it as a parameter's, failing only where it resolves the call
            self.parser.problems.warn(self.path, "unknown-reference",
                                      f'The specified reference "{self.args}" (in {self.name}) is incorrect: '
                                      "there is no resource or parameter of that name (an error at create, "
                                      "if resolved)")

    def result(self) -> Any:
        if self.stack.has_resource(self.args):
            return super().result()
        if self.stack.has_parameter(self.args):
            return self.stack.parameter(self.args)
        raise self.error(f'The specified reference "{self.args}" (in {self.name}) is incorrect',
                         code="unknown-reference")


class ParamRef(references.GetParam):
    """``Ref: name`` inside ``Conditions``: parameters only."""

    def validate(self) -> None:
        if not isinstance(self.args, str):
            raise self.error(f'The argument of "{self.name}" must be the name of a parameter')
        super().validate()


class GetAtt(references.GetAtt):
    """``Fn::GetAtt: [resource, attribute]``: exactly two arguments."""

    def validate(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 2:
            raise self.error(f'Arguments to "{self.name}" must be of the form [resource_name, attribute]')
        super().validate()


class FindInMap(Function):
    """``Fn::FindInMap: [mapping, key, value]``: ``Mappings[mapping][key][value]``."""

    def validate(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 3:
            raise self.error(f'Arguments to "{self.name}" must be of the form [mapping, key, value]')
        mapping = self.args[0]
        if isinstance(mapping, str) and mapping not in self.stack.mappings:  # Heat: an error once resolved
            self.parser.problems.warn(self.path, "unknown-mapping", f'"{mapping}" (in {self.name}) is not a '
                                      "mapping of the template (an error at create, if resolved)")

    def result(self) -> Any:
        names = resolve(self.args)
        found: Any = self.stack.mappings
        for depth, name in enumerate(names):
            if not isinstance(found, dict) or not isinstance(name, str) or name not in found:
                where = ".".join(str(n) for n in names[:depth + 1])
                raise self.error(f'"{self.name}": the template\'s Mappings have no {where}',
                                 code="unknown-mapping")
            found = found[name]
        return found


class Not(logic.Not):
    """``Fn::Not: [condition]``: a list of exactly one condition."""

    def validate(self) -> None:
        if not isinstance(self.args, list) or len(self.args) != 1:
            raise self.error(f'Arguments to "{self.name}" must be of the form: [condition]')
        logic.check_condition_arg(self, self.args[0])

    def result(self) -> bool:
        return not logic.condition_value(self, resolve(self.args[0]))


class And(logic.And):
    """``Fn::And: [condition, condition, ...]``."""


class Or(logic.Or):
    """``Fn::Or: [condition, condition, ...]``."""
