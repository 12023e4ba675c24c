"""Software configs: ``OS::Heat::SoftwareConfig`` and the types built on it.

In Heat a config is a record in the software-configs API; here it is kept
with its resource: the reference (``get_resource``) is a UUID, the whole
record (``id``, ``name``, ``group``, ``config``, ``inputs``, ``outputs``,
``options``) is the resource's data and its ``show`` attribute, and
``config`` is an attribute.  Configs are immutable, as in Heat: changing any
property replaces the resource.

* ``OS::Heat::SoftwareConfig``: ``config`` is a string;
* ``OS::Heat::StructuredConfig``: ``config`` is a map;
* ``OS::Heat::CloudConfig``: a ``cloud_config`` map rendered as
  ``#cloud-config`` YAML;
* ``OS::Heat::MultipartMime``: several configs as one MIME multipart message.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from typing import Any

from stoker.constraints import AllowedValues
from stoker.resources import attributes, properties
from stoker.resources.builtin._common import software_store
from stoker.resources.resource import Resource
from stoker.resources.support import SupportStatus

IO_NAME, DESCRIPTION, TYPE, DEFAULT, REPLACE_ON_CHANGE, ERROR_OUTPUT = (
    "name", "description", "type", "default", "replace_on_change", "error_output",
)
IO_TYPES = ("String", "Number", "CommaDelimitedList", "Json", "Boolean")


def _io_type(what: str) -> properties.Schema:
    return properties.Schema(
        properties.Schema.STRING, f"Type of the value of the {what}.",
        default="String", constraints=[AllowedValues(list(IO_TYPES))],
    )


#: one input a config expects (Heat's software_config_io.input_config_schema)
INPUT_SCHEMA = {
    IO_NAME: properties.Schema(properties.Schema.STRING, "Name of the input.", required=True),
    DESCRIPTION: properties.Schema(properties.Schema.STRING, "Description of the input."),
    TYPE: _io_type("input"),
    DEFAULT: properties.Schema(properties.Schema.ANY,
                               "Default value for the input if none is specified."),
    REPLACE_ON_CHANGE: properties.Schema(
        properties.Schema.BOOLEAN,
        "Replace the deployment instead of updating it when the input value changes.",
        default=False,
    ),
}

#: one output a config produces (Heat's software_config_io.output_config_schema)
OUTPUT_SCHEMA = {
    IO_NAME: properties.Schema(properties.Schema.STRING, "Name of the output.", required=True),
    DESCRIPTION: properties.Schema(properties.Schema.STRING, "Description of the output."),
    TYPE: _io_type("output"),
    ERROR_OUTPUT: properties.Schema(
        properties.Schema.BOOLEAN,
        "Denotes that the deployment is in an error state if this output has a value.",
        default=False,
    ),
}

DEFAULT_GROUP = "Heat::Ungrouped"


class SoftwareConfig(Resource):
    """Describes and stores a software configuration (a script, a manifest ...).

    Along with the config itself, it can declare the inputs the config
    expects and the outputs it produces, and options for the tool that
    applies it (``group``).  Other resources use it by reference
    (``get_resource``): ``OS::Heat::MultipartMime`` parts for instance.
    """

    support_status = SupportStatus(version="2014.1")
    run_in_thread = False

    PROPERTIES = (GROUP, CONFIG, OPTIONS, INPUTS, OUTPUTS) = (
        "group", "config", "options", "inputs", "outputs",
    )
    CONFIG_ATTR = "config"
    #: resource data key of the whole config record
    RECORD_KEY = "software_config"

    properties_schema = {
        GROUP: properties.Schema(
            properties.Schema.STRING,
            "Namespace to group this software config by when delivered to a server. "
            "This may imply what configuration tool is going to perform the configuration.",
            default=DEFAULT_GROUP,
        ),
        CONFIG: properties.Schema(
            properties.Schema.STRING,
            "Configuration script or manifest which specifies what actual configuration "
            "is performed.",
        ),
        OPTIONS: properties.Schema(
            properties.Schema.MAP,
            "Map containing options specific to the configuration management tool used "
            "by this resource.",
        ),
        INPUTS: properties.Schema(
            properties.Schema.LIST,
            "Schema representing the inputs that this software config is expecting.",
            schema=properties.Schema(properties.Schema.MAP, schema=INPUT_SCHEMA),
        ),
        OUTPUTS: properties.Schema(
            properties.Schema.LIST,
            "Schema representing the outputs that this software config will produce.",
            schema=properties.Schema(properties.Schema.MAP, schema=OUTPUT_SCHEMA),
        ),
    }

    attributes_schema = {
        CONFIG_ATTR: attributes.Schema("The config value of the software config.",
                                       type=attributes.Schema.STRING),
    }

    # -- what a config type renders (subclasses override) -------------------------------
    def _option(self, name: str, default: Any = None) -> Any:
        """Property ``name`` if this type has it, else ``default``."""
        return self.properties[name] if name in self.properties_schema else default

    def render_config(self) -> Any:
        """The config content this resource stores."""
        return self._option(self.CONFIG)

    def render_record(self) -> dict:
        """The whole config record, as Heat's software-configs API shows it."""
        return {
            "id": self.resource_id,
            "name": self.physical_resource_name(),
            "group": self._option(self.GROUP, DEFAULT_GROUP),
            "config": self.render_config(),
            "inputs": [_io_dict(i) for i in self._option(self.INPUTS) or []],
            "outputs": [_io_dict(o) for o in self._option(self.OUTPUTS) or []],
            "options": self._option(self.OPTIONS) or {},
        }

    # -- the life cycle -------------------------------------------------------------------
    def handle_create(self) -> None:
        config_id = str(uuid.uuid4())
        self.resource_id = config_id  # the record names it; persisted by resource_id_set below
        record = self.render_record()
        self.data_set(self.RECORD_KEY, record)
        software = software_store(self)
        if software is not None:  # as Heat: deployments and GET /software_configs find it
            software.create_config(record["name"], record["group"], record["config"],
                                   record["inputs"], record["outputs"], record["options"],
                                   config_id=config_id)
        self.resource_id_set(config_id)

    def handle_delete(self) -> None:
        software = software_store(self)
        if software is not None and self.resource_id is not None:
            software.forget_config(str(self.resource_id))

    # -- reading --------------------------------------------------------------------------
    def record(self) -> dict | None:
        """The stored config record (rendered again if the store lacks it)."""
        if self.resource_id is None:
            return None
        stored = self.data().get(self.RECORD_KEY)
        if stored is None:
            stored = self.render_record()
        return stored

    def config_value(self) -> Any:
        """The config content, None before the resource exists."""
        record = self.record()
        return None if record is None else record.get("config")

    def _resolve_attribute(self, name: str) -> Any:
        return self.config_value() if name == self.CONFIG_ATTR else None

    def _show_resource(self) -> Any:
        return self.record() or {}


def _io_dict(io: dict) -> dict:
    """An input or output as stored: Heat drops the keys without a value (a
    description left out reads as "" here)."""
    return {k: v for k, v in io.items() if v is not None and not (k == DESCRIPTION and v == "")}


class StructuredConfig(SoftwareConfig):
    """A software config whose ``config`` is a map rather than a string.

    For configuration tools whose own syntax is YAML or JSON: the map is
    kept as structured data and the ``config`` attribute returns it as a map.
    """

    support_status = SupportStatus(version="2014.1")

    properties_schema = {
        **SoftwareConfig.properties_schema,
        SoftwareConfig.CONFIG: properties.Schema(
            properties.Schema.MAP,
            "Map representing the configuration data structure which will be serialized "
            "to JSON format.",
        ),
    }

    attributes_schema = {
        SoftwareConfig.CONFIG_ATTR: attributes.Schema(
            "The config value of the software config.", type=attributes.Schema.MAP),
    }


class CloudConfig(SoftwareConfig):
    """A cloud-init cloud-config, from a map.

    ``config`` is ``#cloud-config`` followed by the map as YAML (block
    style, keys sorted, as Heat renders it).  Servers and
    ``OS::Heat::MultipartMime`` parts use it by reference.
    """

    support_status = SupportStatus(version="2014.1")

    CLOUD_CONFIG = "cloud_config"

    properties_schema = {
        CLOUD_CONFIG: properties.Schema(
            properties.Schema.MAP,
            "Map representing the cloud-config data structure which will be formatted as YAML.",
        ),
    }

    def render_config(self) -> str:
        import yaml  # PyYAML, email: imported by the few stacks that render these configs

        return "#cloud-config\n" + yaml.dump(self.properties[self.CLOUD_CONFIG] or {},
                                             Dumper=yaml.SafeDumper)


class MultipartMime(SoftwareConfig):
    """Several configs assembled into one MIME multipart message (cloud-init user data).

    Each part's ``config`` is either the reference of a config resource of
    this stack (``get_resource: a_config``: that config's content is used) or
    the content itself.  A part of ``type: multipart`` is a multipart message
    whose parts are added one by one.  A part's MIME subtype is ``subtype``,
    else (as in Heat) the ``filename`` without its extension, else ``plain``.

    The boundary is derived from the content, so the same parts always give
    the same message.
    """

    support_status = SupportStatus(version="2014.1")

    PARTS, PART_CONFIG, FILENAME, PART_TYPE, SUBTYPE = "parts", "config", "filename", "type", "subtype"
    TYPES = (TEXT, MULTIPART) = ("text", "multipart")

    properties_schema = {
        SoftwareConfig.GROUP: properties.Schema(
            properties.Schema.STRING,
            "Namespace to group this multi-part configs by when delivered to a server. "
            "This may imply what configuration tool is going to perform the configuration.",
            default=DEFAULT_GROUP, support_status=SupportStatus(version="14.0.0"),
        ),
        PARTS: properties.Schema(
            properties.Schema.LIST,
            "Parts belonging to this message.",
            default=[],
            schema=properties.Schema(properties.Schema.MAP, schema={
                PART_CONFIG: properties.Schema(
                    properties.Schema.STRING,
                    "Content of part to attach, either inline or by referencing the ID of "
                    "another software config resource.",
                    required=True,
                ),
                FILENAME: properties.Schema(properties.Schema.STRING,
                                            "Optional filename to associate with part."),
                PART_TYPE: properties.Schema(
                    properties.Schema.STRING, "Whether the part content is text or multipart.",
                    default=TEXT, constraints=[AllowedValues(list(TYPES))],
                ),
                SUBTYPE: properties.Schema(properties.Schema.STRING,
                                           "Optional subtype to specify with the type."),
            }),
        ),
    }

    def _referenced_config(self, value: str) -> Any:
        """The content of the config resource whose reference is ``value``, else ``value``."""
        for resource in (getattr(self.stack, "resources", {}) or {}).values():
            if resource is not self and isinstance(resource, SoftwareConfig) \
                    and resource.resource_id is not None and resource.FnGetRefId() == value:
                content = resource.config_value()
                return content if isinstance(content, str) else json.dumps(content)
        return value

    def render_config(self) -> str:
        subparts: list = []
        for item in self.properties[self.PARTS] or []:
            content = self._referenced_config(item[self.PART_CONFIG])
            if item.get(self.PART_TYPE) == self.MULTIPART:
                subparts.extend(_parts_of(content))
            else:
                subparts.append(_text_part(content, item.get(self.SUBTYPE) or "",
                                           item.get(self.FILENAME) or ""))
        from email.mime.multipart import MIMEMultipart

        message = MIMEMultipart(_subparts=subparts)
        message.set_boundary(_boundary(subparts))
        return message.as_string()


def _text_part(content: str, subtype: str, filename: str) -> Any:
    from email.mime.text import MIMEText

    if not subtype and filename:
        subtype = os.path.splitext(filename)[0]  # sic: Heat's rule
    try:
        content.encode("us-ascii")
        charset = "us-ascii"
    except UnicodeEncodeError:
        charset = "utf-8"
    part = MIMEText(content, _subtype=subtype or "plain", _charset=charset)
    if filename:
        part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


def _parts_of(content: str) -> list:
    """The parts of a multipart message, as new text parts (none if it is not one)."""
    import email

    message = email.message_from_string(content)
    if not message.is_multipart():
        return []
    return [_text_part(part.get_payload(decode=True).decode(part.get_content_charset() or "utf-8"),
                       part.get_content_subtype(), part.get_filename() or "")
            for part in message.get_payload()]


def _boundary(subparts: list) -> str:
    """A boundary that depends only on the parts and occurs in none of them."""
    body = "\n".join(part.as_string() for part in subparts)
    digest = hashlib.sha256(body.encode("utf-8", "surrogateescape")).hexdigest()
    for start in range(len(digest) - 20):
        boundary = f"==============={digest[start:start + 20]}=="
        if boundary not in body:
            return boundary
    return f"==============={uuid.uuid4().hex}=="  # pragma: no cover - never in practice


def resource_mapping() -> dict:
    return {
        "OS::Heat::SoftwareConfig": SoftwareConfig,
        "OS::Heat::StructuredConfig": StructuredConfig,
        "OS::Heat::CloudConfig": CloudConfig,
        "OS::Heat::MultipartMime": MultipartMime,
    }
