"""Plug-ins loaded from a folder: Stoker's style, Heat's guide style, and bad ones."""

from __future__ import annotations

import pytest

from stoker.errors import ValidationFailed

from .helpers import outputs_by_key, physical_ids, statuses, template
from .plugin_sources import write_plugins


@pytest.fixture
def plugins(tmp_path):
    return write_plugins(tmp_path / "plugins")


def test_bad_plugins_are_reported_and_the_good_ones_load(make_engine, plugins):
    engine = make_engine(plugin_dirs=[str(plugins)])

    assert "Stoker::Test::Web" in engine.registry
    assert "My::Res" in engine.registry
    problems = engine.registry.problems
    by_file = {name: [p for p in problems if name in p]
               for name in ("broken_syntax.py", "broken_import.py", "not_a_class.py")}
    assert all(len(found) == 1 for found in by_file.values()), problems
    assert str(plugins / "broken_syntax.py") in by_file["broken_syntax.py"][0]
    assert "SyntaxError" in by_file["broken_syntax.py"][0]
    assert "no_such_module" in by_file["broken_import.py"][0]
    assert "Bad::NotAClass" in by_file["not_a_class.py"][0]
    assert len(problems) == 3, problems
    # the plug-in's own tests are never imported
    assert not [p for p in problems if "tests" in p]
    assert "Bad::FromTests" not in engine.registry
    assert "Bad::NotAClass" not in engine.registry


def test_a_stack_of_plugin_resources(make_engine, plugins, tmp_path):
    engine = make_engine(plugin_dirs=[str(plugins)])
    journal = tmp_path / "journal.txt"

    info = engine.create_stack("plug", template("plugins.yaml"), parameters={"journal": str(journal)})

    assert info["stack_status"] == "CREATE_COMPLETE", info
    assert statuses(engine, "plug") == {"web": "CREATE_COMPLETE", "greeter": "CREATE_COMPLETE"}
    assert physical_ids(engine, "plug") == {"web": "web-8080", "greeter": "myres-world"}
    expected = {"url": "http://localhost:8080/", "web_id": "web-8080", "greeting": "Hello, world!",
                "doubled": 6, "greeter_id": "myres-world"}
    values = {k: o["output_value"] for k, o in outputs_by_key(info["outputs"]).items()}
    assert values == expected
    # another engine with the same folder reads the same
    again = make_engine(plugin_dirs=[str(plugins)])
    assert {k: o["output_value"] for k, o in outputs_by_key(again.outputs("plug")).items()} == expected
    assert again.resource("plug", "greeter")["attributes"] == {"greeting": "Hello, world!", "doubled": 6}

    info = again.update_stack("plug", existing=True, parameters={"port": "9090"})
    assert info["stack_status"] == "UPDATE_COMPLETE", info
    assert physical_ids(again, "plug")["web"] == "web-9090"
    assert outputs_by_key(info["outputs"])["url"]["output_value"] == "http://localhost:9090/"

    assert again.delete_stack("plug")["stack_status"] == "DELETE_COMPLETE"
    assert journal.read_text().splitlines() == ["create greeter", "delete greeter"]


def test_plugin_property_constraints_apply(make_engine, plugins, tmp_path):
    engine = make_engine(plugin_dirs=[str(plugins)])
    with pytest.raises(ValidationFailed) as caught:
        engine.create_stack("plug", template("plugins.yaml"),
                            parameters={"journal": str(tmp_path / "j"), "port": "0"})
    assert "resources.web.properties.port" in str(caught.value)
    assert engine.list_stacks() == []


def test_plugins_through_the_cli(cli, plugins, tmp_path):
    journal = tmp_path / "journal.txt"
    with_plugins = cli.with_plugins(plugins)
    with_plugins("stack", "create", "plug", "-t", template("plugins.yaml"), "-P", f"journal={journal}",
                 "--wait").expect(0)
    outputs = with_plugins("stack", "output", "show", "plug", "--all", "-f", "json").expect(0).json
    assert {o["output_key"]: o["output_value"] for o in outputs}["greeting"] == "Hello, world!"
    # without the folder the types are unknown, with a hint of where they come from
    run = cli("stack", "create", "other", "-t", template("plugins.yaml"), "-P", f"journal={journal}")
    run.expect(1)
    assert "resources.web.type" in run.output and "resources.greeter.type" in run.output
    assert "Traceback" not in run.output
