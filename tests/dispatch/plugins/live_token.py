"""``Test::LiveToken``: a plug-in whose create returns a live object to poll (not JSON), as many
of Heat's plug-ins do: a worker cannot store it for a later task, so it polls it where it is."""

import itertools

from stoker.resources import properties
from stoker.resources.resource import Resource


class LiveToken(Resource):
    properties_schema = {
        "polls": properties.Schema(properties.Schema.INTEGER, "Checks before the create is done.", default=3),
    }

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())
        return itertools.count(1)

    def check_create_complete(self, token):
        return next(token) >= self.properties["polls"]


def resource_mapping():
    return {"Test::LiveToken": LiveToken}
