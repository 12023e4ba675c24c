"""``cloudify.nodes.Blueprint``: a blueprint uploaded by create and deleted by delete (unless
``external_resource``), as Cloudify's ``cloudify_types.blueprint``; ``resource_config`` is the
blueprint itself (id, blueprint_archive, main_file_name)."""

from __future__ import annotations

from stoker.errors import Conflict, NotFound
from stoker.workflows.cfy_extensions.call import Call
from stoker.workflows.cfy_extensions.component import EXTERNAL_RESOURCE, delete_secrets, set_secrets, upload


def upload_blueprint(call: Call) -> bool:
    upload(call, call.config())
    set_secrets(call)
    return True


def delete(call: Call) -> bool:
    config = call.config()
    blueprint_id = str(config.get("id") or call.instance.id)
    if not config.get(EXTERNAL_RESOURCE):
        if call.manager.blueprint_exists(blueprint_id):
            call.log(f'Deleting blueprint "{blueprint_id}"')
            try:
                call.manager.delete_blueprint(blueprint_id)
            except (Conflict, NotFound) as exc:  # still used, or deleted meanwhile
                call.log(f'Could not delete blueprint "{blueprint_id}": {exc}', "warning")
        else:
            call.log(f'Blueprint "{blueprint_id}" was already deleted. Skipping.', "warning")
    delete_secrets(call)
    call.runtime.pop("blueprint", None)
    return True
