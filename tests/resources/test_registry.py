"""The resource-type registry and plug-in loading."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from stoker.constraints import custom
from stoker.resources import registry
from stoker.resources.exceptions import UnknownResourceType
from stoker.resources.registry import Registry

PLUGIN = '''
class {cls}:
    pass


def resource_mapping():
    return {{"{type_name}": {cls}}}
'''


def write(directory: Path, relative: str, text: str) -> Path:
    path = directory / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def plugin(directory: Path, relative: str, type_name: str) -> Path:
    cls = "".join(part.capitalize() for part in type_name.split("::"))
    return write(directory, relative, PLUGIN.format(cls=cls, type_name=type_name))


def test_register_get_and_types():
    reg = Registry()
    reg.register("My::B", int)
    reg.register("My::A", str)
    assert reg.get("My::A") is str and "My::B" in reg
    assert reg.types() == ["My::A", "My::B"]
    reg.register("My::A", bytes)  # a later registration wins (plug-ins override built-ins)
    assert reg.get("My::A") is bytes
    with pytest.raises(TypeError, match="is not a class"):
        reg.register("My::C", "not a class")


def test_an_unknown_type_names_close_matches():
    reg = Registry({"OS::Heat::RandomString": object, "OS::Heat::None": object})
    with pytest.raises(UnknownResourceType) as info:
        reg.get("OS::Heat::RandomStrng")
    assert str(info.value) == ("The Resource Type (OS::Heat::RandomStrng) could not be found. "
                               "Did you mean OS::Heat::RandomString?")
    assert info.value.code == "unknown-resource-type"
    with pytest.raises(UnknownResourceType, match=r"Did you mean OS::Heat::None\?"):
        reg.get("os::heat::none")
    with pytest.raises(UnknownResourceType, match=r"could not be found\.$"):
        reg.get("AWS::EC2::Instance")


def test_the_process_wide_registry_has_the_builtin_types():
    assert "OS::Heat::RandomString" in registry.types()
    assert registry.get("OS::Heat::None").__name__ == "NoneResource"


def test_plugin_dirs_are_loaded_recursively_without_tests_and_setup(tmp_path):
    plugin(tmp_path, "alpha.py", "Demo::Alpha")
    plugin(tmp_path, "nested/deeper/beta.py", "Demo::Beta")
    plugin(tmp_path, "pkg/__init__.py", "Demo::Package")
    plugin(tmp_path, "tests/test_alpha.py", "Demo::FromTests")
    plugin(tmp_path, "pkg/tests/test_pkg.py", "Demo::FromPackageTests")
    write(tmp_path, "setup.py", "raise SystemExit('setup.py must not run')\n")
    write(tmp_path, "helpers.py", "VALUE = 1\n")  # no mapping: fine, nothing registered
    reg = Registry()
    assert reg.load_plugin_dirs([tmp_path]) == []
    assert reg.types() == ["Demo::Alpha", "Demo::Beta", "Demo::Package"]
    assert reg.problems == []


def test_a_broken_plugin_is_reported_with_its_path_and_the_others_load(tmp_path):
    plugin(tmp_path, "a_good.py", "Demo::Good")
    syntax = write(tmp_path, "b_syntax.py", "def broken(:\n")
    missing = write(tmp_path, "c_import.py", "import no_such_module_anywhere\n")
    raising = write(tmp_path, "d_mapping.py", "def resource_mapping():\n    raise RuntimeError('boom')\n")
    not_dict = write(tmp_path, "e_list.py", "def resource_mapping():\n    return ['x']\n")
    not_class = write(tmp_path, "f_value.py", "def resource_mapping():\n    return {'Demo::F': 42}\n")
    plugin(tmp_path, "g_good.py", "Demo::AlsoGood")
    reg = Registry()
    problems = reg.load_plugin_dirs([tmp_path])
    assert reg.types() == ["Demo::AlsoGood", "Demo::Good"]
    # each names the file, and the plug-in's line when the failure is in it
    assert [p.split(": ")[0] for p in problems] == [f"{syntax}:1", f"{missing}:1", f"{raising}:2", str(not_dict),
                                                     str(not_class)]
    assert problems[0].startswith(f"{syntax}:1: SyntaxError: ")
    assert problems[1] == f"{missing}:1: ModuleNotFoundError: No module named 'no_such_module_anywhere'"
    assert problems[2] == f"{raising}:2: RuntimeError: boom"
    assert problems[3] == f"{not_dict}: TypeError: resource_mapping() returned list, not a dict"
    assert "Demo::F" in problems[4] and "not a class" in problems[4]
    assert reg.problems == problems


def test_a_missing_plugin_dir_is_a_problem(tmp_path):
    assert Registry().load_plugin_dirs([tmp_path / "nowhere"]) == [f"{tmp_path / 'nowhere'}: plug-in directory not found"]


def test_plugin_modules_may_import_their_siblings(tmp_path):
    write(tmp_path, "mypkg/__init__.py", "")
    write(tmp_path, "mypkg/common.py", "class Base:\n    pass\n")
    write(tmp_path, "mypkg/thing.py", """
        from .common import Base

        class Thing(Base):
            pass

        def resource_mapping():
            return {"Demo::Thing": Thing}
    """)
    reg = Registry()
    assert reg.load_plugin_dirs([tmp_path]) == []
    assert reg.get("Demo::Thing").__mro__[1].__name__ == "Base"


def test_available_resource_mapping_wins_over_resource_mapping(tmp_path):
    write(tmp_path, "both.py", """
        class A: pass
        class B: pass
        def available_resource_mapping():
            return {"Demo::Available": A}
        def resource_mapping():
            return {"Demo::Available": A, "Demo::NeedsAClient": B}
    """)
    reg = Registry()
    reg.load_plugin_dirs([tmp_path])
    assert reg.types() == ["Demo::Available"]


def test_constraint_mapping_registers_custom_constraints(tmp_path):
    write(tmp_path, "evens.py", """
        class EvenConstraint:
            def validate(self, value, context):
                return int(value) % 2 == 0

        def constraint_mapping():
            return {"test.registry.even": EvenConstraint}
    """)
    assert Registry().load_plugin_dirs([tmp_path]) == []
    check = custom.get("test.registry.even")
    assert check.error(4) is None
    assert check.error(3) == '"3" does not validate test.registry.even'


def test_a_module_with_a_bad_constraint_registers_nothing(tmp_path):
    write(tmp_path, "half.py", """
        class Good: pass
        def resource_mapping():
            return {"Demo::Half": Good}
        def constraint_mapping():
            return {"test.registry.bad": 42}
    """)
    reg = Registry()
    [problem] = reg.load_plugin_dirs([tmp_path])
    assert "test.registry.bad" in problem
    assert reg.types() == [] and custom.get("test.registry.bad") is None


def installed(site: Path, distribution: str, entry_points: str) -> None:
    """A distribution's metadata folder in ``site``, as pip leaves it."""
    write(site, f"{distribution}-1.0.dist-info/METADATA", f"Name: {distribution}\nVersion: 1.0\n")
    write(site, f"{distribution}-1.0.dist-info/entry_points.txt", entry_points)


def test_entry_points_name_modules_or_mapping_callables(tmp_path, monkeypatch):
    plugin(tmp_path, "ep_module_plugin.py", "Demo::FromModule")
    write(tmp_path, "ep_callable_plugin.py", """
        class Thing: pass
        class Holder:
            @staticmethod
            def mapping():
                return {"Demo::FromCallable": Thing}
    """)
    installed(tmp_path, "stoker_demo_plugins", f"""
        [console_scripts]
        mod = not_a_plugin:main

        [{registry.ENTRY_POINT_GROUP}]
        mod = ep_module_plugin
        fn = ep_callable_plugin:Holder.mapping [extra]
        gone = no_such_plugin_package
    """)
    # the same distribution further down the path is hidden by the first one, as for importlib.metadata
    installed(tmp_path / "later", "Stoker_Demo.Plugins", f"[{registry.ENTRY_POINT_GROUP}]\nlate = late_plugin\n")
    installed(tmp_path / "later", "other_dist", "not an ini file [")
    monkeypatch.syspath_prepend(str(tmp_path / "later"))
    monkeypatch.syspath_prepend(str(tmp_path))
    reg = Registry()
    problems = reg.load_entry_points()
    assert reg.types() == ["Demo::FromCallable", "Demo::FromModule"]
    assert problems == ["entry point gone (no_such_plugin_package): ModuleNotFoundError: "
                        "No module named 'no_such_plugin_package'"]


def test_plugin_dirs_come_from_the_config_file_then_the_environment(tmp_path, monkeypatch):
    home = tmp_path / "home"
    write(home, "stoker.conf", "[DEFAULT]\nplugin_dirs = plugins, /opt/stoker/plugins ,\n")
    monkeypatch.setenv("STOKER_HOME", str(home))
    monkeypatch.setenv("STOKER_PLUGIN_DIRS", f"/a{registry.os.pathsep}/b{registry.os.pathsep}")
    assert registry.plugin_dirs_from_config() == [
        home / "plugins", Path("/opt/stoker/plugins"), Path("/a"), Path("/b")]


def test_no_config_means_no_plugin_dirs(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path))
    monkeypatch.delenv("STOKER_PLUGIN_DIRS", raising=False)
    assert registry.plugin_dirs_from_config() == []


def test_default_registry_adds_plugins_to_the_builtin_types(tmp_path, monkeypatch):
    monkeypatch.setenv("STOKER_HOME", str(tmp_path / "home"))
    configured, given = tmp_path / "configured", tmp_path / "given"
    plugin(configured, "one.py", "Demo::Configured")
    write(given, "two.py", """
        class MyNone: pass
        def resource_mapping():
            return {"OS::Heat::None": MyNone}
    """)
    monkeypatch.setenv("STOKER_PLUGIN_DIRS", str(configured))
    monkeypatch.setattr(registry.entry_points, "entry_points", lambda group: iter(()))
    reg = registry.default_registry([given])
    # replacing a built-in type works, and is reported
    assert reg.problems == [f"{given / 'two.py'}: replaces the built-in resource type OS::Heat::None"]
    assert {"Demo::Configured", "OS::Heat::RandomString"} <= set(reg.types())
    assert reg.get("OS::Heat::None").__name__ == "MyNone"
    assert registry.get("OS::Heat::None").__name__ == "NoneResource"  # the process-wide one is untouched
