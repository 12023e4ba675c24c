"""``Test::FileWaiter``: created once a file exists, as a cloud resource that waits on another.

``check_create_complete`` says no until ``path`` exists, and fails after
``limit`` seconds without it, so a stack that could never make the file
fails instead of waiting forever.
"""

import os
import time

from stoker.resources import attributes, properties
from stoker.resources.resource import Resource


class FileWaiter(Resource):
    properties_schema = {
        "path": properties.Schema(properties.Schema.STRING, "The file waited for.", required=True),
        "limit": properties.Schema(properties.Schema.NUMBER, "Seconds before giving up.", default=60),
    }
    attributes_schema = {"path": attributes.Schema("The file.", type=attributes.Schema.STRING)}

    def handle_create(self):
        return time.time()

    def check_create_complete(self, started):
        if os.path.exists(self.properties["path"]):
            return True
        if started is not None and time.time() - started > self.properties["limit"]:
            raise RuntimeError(f"{self.properties['path']} did not appear within {self.properties['limit']} s")
        return False

    def _resolve_attribute(self, name):
        return self.properties["path"] if name == "path" else None


def resource_mapping():
    return {"Test::FileWaiter": FileWaiter}
