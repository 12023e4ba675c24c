"""``Test::Recorded``: a resource whose every physical action (create, delete, an update in
place of ``tag``, suspend, resume, snapshot, restore) is a line in a log file.

It behaves as a careful cloud plug-in: the physical id is stored before the
thing is made, and ``check_create_complete`` makes it if a worker died in
between, so however often workers die the log shows each create once.
``hold`` keeps the worker busy inside ``handle_create`` and ``handle_update`` (a slow API call),
so a test can kill a worker in the middle of an action.
"""

import os
import time

from stoker.resources import attributes, properties
from stoker.resources.resource import Resource


class Recorded(Resource):
    properties_schema = {
        "log": properties.Schema(properties.Schema.STRING, "File the creates and deletes go to.", required=True),
        "value": properties.Schema(properties.Schema.STRING, "Any value.", default=""),
        "hold": properties.Schema(properties.Schema.NUMBER, "Seconds handle_create and handle_update block.",
                                  default=0),
        "fail": properties.Schema(properties.Schema.BOOLEAN, "Fail the create.", default=False),
        "tag": properties.Schema(properties.Schema.STRING, "Changed in place by an update.", default="",
                                 update_allowed=True),
    }
    attributes_schema = {"value": attributes.Schema("The value.", type=attributes.Schema.STRING)}

    def _write(self, verb):
        line = f"{verb} {self.name} {self.resource_id} {os.getpgid(0)}\n"
        with open(self.properties["log"], "a") as log:
            log.write(line)
            log.flush()
            os.fsync(log.fileno())

    def _made(self):
        with open(self.properties["log"]) as log:
            return any(line.split()[:3] == ["create", self.name, str(self.resource_id)] for line in log)

    def handle_create(self):
        if self.properties["fail"]:
            raise RuntimeError(f"{self.name} was told to fail")
        self.resource_id_set(self.physical_resource_name())
        self._write("create")
        time.sleep(self.properties["hold"])

    def check_create_complete(self, token):
        if not self._made():  # the worker died between storing the id and making it
            self._write("create")
        return True

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        self._write("update")  # only "tag" may change in place: any other change replaces
        time.sleep(self.properties["hold"])

    def handle_suspend(self):
        self._write("suspend")

    def handle_resume(self):
        self._write("resume")

    def handle_snapshot(self):
        self._write("snapshot")
        self.data_set("tag_at_snapshot", self.properties["tag"])

    def handle_restore(self, kept):
        self._write(f"restore:{kept['resource_data'].get('tag_at_snapshot', '')}")

    def handle_delete(self):
        if self.resource_id is not None:
            self._write("delete")

    def _resolve_attribute(self, name):
        return self.properties["value"] if name == "value" else None


def resource_mapping():
    return {"Test::Recorded": Recorded}
