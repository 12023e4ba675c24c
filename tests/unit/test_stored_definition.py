"""A stored template's definition (``build_definition(..., stored=True)``): its resources parsed
when asked for, and the same as those an eager parse finds."""

from __future__ import annotations

from stoker.template.definition import build_definition
from stoker.template.template import Template

TEMPLATE = Template.from_text(
    "heat_template_version: 2018-08-31\n"
    "resources:\n"
    "  a: {type: OS::Heat::None, properties: {value: {get_attr: [b, show]}}}\n"
    "  b: {type: OS::Heat::None}\n"
    "  broken: not a map\n"
    "  d: {type: OS::Heat::None, depends_on: a, deletion_policy: retain}\n")


def test_a_stored_templates_resources_are_those_an_eager_parse_finds():
    eager = build_definition(TEMPLATE).resources
    stored = build_definition(TEMPLATE, stored=True).resources
    assert list(stored) == list(eager) == ["a", "b", "d"]
    assert len(stored) == 3
    assert "broken" not in stored and "nothing" not in stored and "b" in stored
    assert stored.get("broken") is None and stored.get("nothing") is None
    for name, definition in eager.items():
        parsed = stored[name]
        assert (parsed.type, parsed.depends_on, parsed.deletion_policy, parsed.dependencies()) == \
               (definition.type, definition.depends_on, definition.deletion_policy, definition.dependencies())
    assert stored["a"] is stored["a"]  # parsed once


def test_a_stored_templates_resources_are_parsed_when_asked_for():
    """A worker acting on some resources of a big stack parses those only."""
    definition = build_definition(TEMPLATE, stored=True)
    assert definition.resource_calls == []  # nothing parsed yet
    assert definition.resources["a"].dependencies() == {"b"}
    assert [fn.path[:2] for fn in definition.resource_calls] == [("resources", "a")]
