"""Plug-in folders for the tests: good plug-ins in two styles, and bad ones."""

from __future__ import annotations

from pathlib import Path

#: a plug-in written against Stoker's own API
STOKER_STYLE = '''
"""A Stoker-style plug-in: a fake web server with a port."""

from stoker.constraints import Range
from stoker.resources import attributes, properties
from stoker.resources.resource import Resource


class Web(Resource):
    """Pretends to run a web server."""

    run_in_thread = False

    properties_schema = {
        "port": properties.Schema(properties.Schema.INTEGER, "Port to listen on.", required=True,
                                  update_allowed=True, constraints=[Range(1, 65535)]),
        "host": properties.Schema(properties.Schema.STRING, "Host name.", default="localhost"),
    }
    attributes_schema = {
        "url": attributes.Schema("Where it listens.", type=attributes.Schema.STRING),
    }

    def handle_create(self):
        self.resource_id_set("web-%d" % self.properties["port"])

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        if "port" in prop_diff:
            self.resource_id_set("web-%d" % prop_diff["port"])

    def _resolve_attribute(self, name):
        if name == "url":
            return "http://%s:%d/" % (self.properties["host"], self.properties["port"])
        return None


def resource_mapping():
    return {"Stoker::Test::Web": Web}
'''

#: a plug-in written exactly as OpenStack Heat's plug-in guide shows
HEAT_STYLE = '''
from heat.common.i18n import _
from heat.engine import attributes
from heat.engine import constraints
from heat.engine import properties
from heat.engine import resource


class MyRes(resource.Resource):
    """Greets someone; keeps a journal of what it was asked to do."""

    PROPERTIES = (NAME, SIZE, JOURNAL) = ('name', 'size', 'journal')
    ATTRIBUTES = (GREETING, DOUBLED) = ('greeting', 'doubled')

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            _('Who to greet.'),
            required=True,
            constraints=[
                constraints.Length(min=1, max=20),
            ]
        ),
        SIZE: properties.Schema(
            properties.Schema.INTEGER,
            _('A number.'),
            default=2,
            constraints=[
                constraints.Range(1, 10),
            ],
            update_allowed=True
        ),
        JOURNAL: properties.Schema(
            properties.Schema.STRING,
            _('A file where each action is written down.'),
            required=True
        ),
    }

    attributes_schema = {
        GREETING: attributes.Schema(
            _('The greeting.'),
            type=attributes.Schema.STRING
        ),
        DOUBLED: attributes.Schema(
            _('Twice the size.'),
            type=attributes.Schema.INTEGER
        ),
    }

    def _write(self, what):
        with open(self.properties[self.JOURNAL], 'a') as journal:
            journal.write('%s %s\\n' % (what, self.name))

    def handle_create(self):
        self._write('create')
        self.resource_id_set('myres-%s' % self.properties[self.NAME])

    def check_create_complete(self, token):
        return True

    def handle_delete(self):
        if self.resource_id is not None:
            self._write('delete')

    def _resolve_attribute(self, name):
        if name == self.GREETING:
            return 'Hello, %s!' % self.properties[self.NAME]
        if name == self.DOUBLED:
            return self.properties[self.SIZE] * 2


def resource_mapping():
    return {'My::Res': MyRes}
'''

BROKEN_SYNTAX = '''
def resource_mapping(:
    return {}
'''

BROKEN_IMPORT = '''
from heat.engine import no_such_module  # noqa


def resource_mapping():
    return {}
'''

NOT_A_CLASS = '''
def resource_mapping():
    return {"Bad::NotAClass": "I am a string"}
'''

IN_TESTS = '''
raise RuntimeError("a plug-in's tests must never be loaded as a plug-in")


def resource_mapping():
    return {"Bad::FromTests": object}
'''


def write_plugins(folder: Path, broken: bool = True) -> Path:
    """A plug-in folder with both good plug-ins, and (``broken``) the bad ones."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "web.py").write_text(STOKER_STYLE)
    (folder / "myres.py").write_text(HEAT_STYLE)
    tests = folder / "tests"
    tests.mkdir(exist_ok=True)
    (tests / "test_web.py").write_text(IN_TESTS)
    if broken:
        (folder / "broken_syntax.py").write_text(BROKEN_SYNTAX)
        (folder / "broken_import.py").write_text(BROKEN_IMPORT)
        (folder / "not_a_class.py").write_text(NOT_A_CLASS)
    return folder
