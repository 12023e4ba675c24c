"""Plug-ins written for OpenStack Heat load unmodified through the ``heat`` package."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from stoker.errors import ValidationFailed
from stoker.resources import attributes as stoker_attributes
from stoker.resources import exceptions
from stoker.resources.properties import Properties
from stoker.resources.registry import Registry

# The plug-in guide's examples, put together as a plug-in author would.
GUIDE_PLUGIN = '''
from heat.common import exception
from heat.common.i18n import _
from heat.engine import attributes
from heat.engine import constraints
from heat.engine import properties
from heat.engine import resource
from heat.engine import support


class Foo(resource.Resource):
    """The guide's example resource."""

    support_status = support.SupportStatus(support.UNSUPPORTED)

    nested_schema = {
        "foo": properties.Schema(
            properties.Schema.STRING,
            _('description of foo field'),
            constraints=[
                constraints.AllowedPattern('(Ba[rc]?)+'),
                constraints.Length(max=10, description="don't go crazy"),
            ]
        )
    }
    properties_schema = {
        'foo': properties.Schema(
            properties.Schema.STRING,
            _('foo prop description'),
            default='foo',
            required=True
        ),
        'bar': properties.Schema(
            properties.Schema.INTEGER,
            _('bar prop description'),
            required=True,
            constraints=[
                constraints.Range(5, 10)
            ]
        ),
        "property_name": properties.Schema(
            properties.Schema.MAP,
            _('Internationalized description of property'),
            required=True,
            default={"Foo": "Bar"},
            schema=nested_schema,
            update_allowed=True,
        ),
    }
    attributes_schema = {
        'Attr_1': attributes.Schema(
            _('The first attribute'),
            support_status=support.SupportStatus(version='5.0.0'),
            type=attributes.Schema.STRING
        ),
        'Attr_2': attributes.Schema(
            _('The second attribute'),
            type=attributes.Schema.MAP
        ),
    }

    def _resolve_attribute(self, name):
        if name not in self.attributes_schema:
            raise exception.InvalidTemplateAttribute(resource=self.name, key=name)
        return name


class ValidFlavor(constraints.BaseCustomConstraint):
    resource_client_name = 'nova'
    resource_getter_name = 'get_flavor'


def resource_mapping():
    return {'Resource::Foo': Foo}


def constraint_mapping():
    return {'test.compat.flavor': ValidFlavor}
'''


@pytest.fixture
def guide_plugin(tmp_path):
    (tmp_path / "foo_plugin.py").write_text(GUIDE_PLUGIN)
    reg = Registry()
    assert reg.load_plugin_dirs([tmp_path]) == []
    return reg.get("Resource::Foo")


def test_a_guide_style_plugin_loads_and_registers_its_class(guide_plugin):
    from stoker.resources.resource import Resource

    assert issubclass(guide_plugin, Resource)
    assert guide_plugin.support_status.status == "UNSUPPORTED"


def test_the_guide_plugin_schemas_work(guide_plugin):
    schema = guide_plugin.properties_schema
    path = ("resources", "resource-1", "properties")
    props = Properties(schema, {"foo": "Value of the foo property", "bar": 7,
                                "property_name": {"foo": "BarBac"}}, path=path)
    props.validate()
    assert props["bar"] == 7 and props["property_name"] == {"foo": "BarBac"}
    with pytest.raises(ValidationFailed) as info:
        Properties(schema, {"bar": 11, "property_name": {"foo": "BarBarBarBarX"}}, path=path).validate()
    assert [str(p) for p in info.value.problems] == [
        "resources.resource-1.properties.bar: 11 is out of range (min: 5, max: 10)",
        'resources.resource-1.properties.property_name.foo: "BarBarBarBarX" does not match '
        'pattern "(Ba[rc]?)+"',
        "resources.resource-1.properties.property_name.foo: don't go crazy",
    ]
    assert set(stoker_attributes.schemata(guide_plugin.attributes_schema)) == {"show", "Attr_1", "Attr_2"}


def test_a_client_based_custom_constraint_is_registered_and_cannot_pass(guide_plugin):
    from stoker.constraints import custom

    message = custom.get("test.compat.flavor").error("m1.small")
    assert message == "Error validating value 'm1.small': Checking a value with the nova client is not supported."


def test_heat_names_are_stokers_classes():
    from heat.common import exception
    from heat.engine import attributes, constraints, properties, resource, support

    import stoker.constraints
    import stoker.resources.properties
    import stoker.resources.resource
    import stoker.resources.support

    assert properties.Schema is stoker.resources.properties.Schema
    assert properties.Properties is stoker.resources.properties.Properties
    assert constraints.Range is stoker.constraints.Range
    assert attributes.Schema is stoker_attributes.Schema
    assert support.SupportStatus is stoker.resources.support.SupportStatus
    assert resource.Resource is stoker.resources.resource.Resource
    assert resource.UpdateReplace is exception.UpdateReplace is exceptions.UpdateReplace
    assert exception.Error is exception.HeatException is exceptions.PluginError
    assert issubclass(exception.StackValidationFailed, ValidationFailed)


def test_stoker_never_imports_the_heat_package():
    code = textwrap.dedent("""
        import sys
        import stoker.resources.registry, stoker.resources.resource, stoker.engine.engine
        assert not [m for m in sys.modules if m == "heat" or m.startswith("heat.")], "heat imported"
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


# -- the exceptions plug-ins raise -------------------------------------------------------------
@pytest.mark.parametrize("error, text", [
    (exceptions.PluginError("plain"), "plain"),
    (exceptions.EntityNotFound("Server", "web"), "The Server (web) could not be found."),
    (exceptions.EntityNotFound(entity="Server", name="web"), "The Server (web) could not be found."),
    (exceptions.ResourceNotFound(resource_name="db", stack_name="s"),
     "The Resource (db) could not be found in Stack s."),
    (exceptions.InvalidTemplateAttribute(resource="r", key="k"), "The Referenced Attribute (r k) is incorrect."),
    (exceptions.InvalidTemplateReference(resource="r", key="k"),
     'The specified reference "r" (in k) is incorrect.'),
    (exceptions.PhysicalResourceNameAmbiguity(name="x"),
     "Multiple physical resources were found with name (x)."),
    (exceptions.ResourcePropertyConflict("a", "b"),
     "Cannot define the following properties at the same time: a, b."),
    (exceptions.PropertyUnspecifiedError("a", "b"),
     "At least one of the following properties must be specified: a, b."),
    (exceptions.ResourceInError(resource_status="ERROR", status_reason="disk"),
     'Went to status ERROR due to "disk"'),
    (exceptions.ResourceUnknownStatus(resource_status="WEIRD"),
     'Resource failed - Unknown status WEIRD due to "Unknown"'),
    (exceptions.UpdateReplace("web"), "The Resource web requires replacement."),
    (exceptions.UpdateReplace(), "The Resource Unknown requires replacement."),
    (exceptions.NotFound(), "Not found"),
])
def test_plugin_exception_messages(error, text):
    assert str(error) == text


def test_entity_not_found_keeps_its_fields_and_is_a_not_found():
    from stoker.errors import NotFound

    error = exceptions.EntityNotFound("Server", "web")
    assert (error.entity, error.name) == ("Server", "web")
    assert isinstance(error, NotFound)


def test_resource_failure_reads_like_a_heat_status_reason():
    class Res:
        name, action = "web", "CREATE"

    failure = exceptions.ResourceFailure(ValueError("disk full"), Res())
    assert str(failure) == "ValueError: resources.web: disk full"
    assert failure.action == "CREATE" and isinstance(failure.exc, ValueError)
    assert str(exceptions.ResourceFailure(failure, Res(), "UPDATE")) == str(failure)
    assert str(exceptions.ResourceFailure("just text")) == "just text"


def test_stack_validation_failed_is_one_problem():
    error = exceptions.StackValidationFailed(message="size too small", path=["size"])
    [problem] = error.problems
    assert (problem.path, problem.message) == (("size",), "size too small")
    assert str(error) == "size: size too small"


def test_poll_delay_needs_a_positive_period():
    assert exceptions.PollDelay(3).period == 3
    with pytest.raises(ValueError):
        exceptions.PollDelay(0)
