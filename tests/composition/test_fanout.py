"""Resource counts through provider templates and groups, refused at validation."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed

from .conftest import hot, load


def _wide(levels: int, width: int) -> dict:
    """t.yaml -> l1.yaml -> ... each level ``width`` resources of the next level's template."""
    files = {}
    for level in range(levels, 0, -1):
        member = f"l{level + 1}.yaml" if level < levels else "OS::Heat::None"
        files[f"l{level}.yaml"] = hot({f"r{i}": {"type": member} for i in range(width)})
    files["t.yaml"] = hot({"top": {"type": "l1.yaml"}})
    return files


def _fan(levels: int, width: int) -> dict:
    """t.yaml -> l1.yaml -> ... each level a group of ``width`` members of the next."""
    files = {}
    for level in range(levels, 0, -1):
        member = f"l{level + 1}.yaml" if level < levels else "OS::Heat::None"
        files[f"l{level}.yaml"] = hot({"g": {"type": "OS::Heat::ResourceGroup", "properties": {
            "count": {"get_param": "width"}, "resource_def": {"type": member}}}},
            parameters={"width": {"type": "number", "default": width}})
    files["t.yaml"] = hot({"top": {"type": "l1.yaml"}})
    return files


def test_a_fan_out_to_100000_resources_is_refused_at_validation(tree, engine, cli):
    root = tree(_wide(5, 10))  # 10^5 resources at the bottom
    template, env = load(root / "t.yaml")
    with pytest.raises(ValidationFailed) as info:
        engine.validate_template(template, env)
    problem = next(p for p in info.value.problems if p.code == "too-many-resources")
    # counted only until past the limit, and named by the setting that sets it
    assert "at least 111110 resources" in problem.message and "(max_resources)" in problem.message
    run = cli("template", "validate", "-t", str(root / "t.yaml"))
    assert run.code != 0 and "(max_resources)" in run.output and "Traceback" not in run.output
    assert engine.list_stacks() == []
    template, env = load(tree(_fan(2, 320)) / "t.yaml")  # groups: 2 + 320 * (2 + 320)
    with pytest.raises(ValidationFailed, match="at least 103041 resources"):
        engine.validate_template(template, env)


def test_the_limit_is_configurable_and_counts_nested_stacks(tree, make_engine, home):
    (home / "stoker.conf").write_text("[limits]\nmax_resources = 30\n")
    engine = make_engine()
    template, env = load(tree(_fan(2, 5)) / "t.yaml")  # 2 + 5 * (2 + 5)
    with pytest.raises(ValidationFailed, match="at least 36 resources, more than the limit of 30"):
        engine.create_stack("s", template, env)
    assert engine.list_stacks() == []
    small = hot({"g": {"type": "OS::Heat::ResourceGroup",
                       "properties": {"count": 29, "resource_def": {"type": "OS::Heat::None"}}}})
    assert engine.create_stack("ok", small)["stack_status"] == "CREATE_COMPLETE"


@pytest.mark.parametrize("sizes, total", [({"desired_capacity": 40}, 41), ({"min_size": 40}, 41)])
def test_an_autoscaling_group_counts_its_size_at_create(make_engine, home, sizes, total):
    (home / "stoker.conf").write_text("[limits]\nmax_resources = 30\n")
    engine = make_engine()
    props = {"min_size": 0, "max_size": 50, "resource": {"type": "OS::Heat::None"}, **sizes}
    with pytest.raises(ValidationFailed, match=f"{total} resources, more than the limit of 30"):
        engine.validate_template(hot({"g": {"type": "OS::Heat::AutoScalingGroup", "properties": props}}))
