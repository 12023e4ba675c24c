"""``Test::Signalled``: keeps each signal it is sent in its data (a key per signal) while its
create waits for a file, then writes a data key of its own: a signal stored while the create
ran is the write the create's own must not lose.

``ready`` is made once the create waits (a signal sent then lands mid-action); ``go`` is what it
waits for (``limit`` seconds at the most).
"""

import os
import time
from pathlib import Path

from stoker.resources import properties
from stoker.resources.resource import Resource


class Signalled(Resource):
    properties_schema = {
        "ready": properties.Schema(properties.Schema.STRING, "Made once the create waits.", required=True),
        "go": properties.Schema(properties.Schema.STRING, "What the create waits for.", required=True),
        "limit": properties.Schema(properties.Schema.NUMBER, "Seconds before giving up.", default=120),
    }

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())

    def check_create_complete(self, token):
        Path(self.properties["ready"]).touch()
        deadline = time.monotonic() + self.properties["limit"]
        while not os.path.exists(self.properties["go"]):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{self.properties['go']} did not appear")
            time.sleep(0.05)
        self.data_set("made", "yes")
        return True

    def handle_signal(self, details=None):
        self.data_set(f"signal-{details['id']}", details)


def resource_mapping():
    return {"Test::Signalled": Signalled}
