"""Which resource types a project may use: a rule table, as Heat's policy file has.

Heat decides with rules such as ``resource_types:OS::Nova::Flavor:
rule:project_admin``; Stoker reads the same kind of table from the
``[resource_types]`` section of ``$STOKER_HOME/stoker.conf``::

    [resource_types]
    OS::Nova::Flavor = rule:project_admin
    My::Risky::* = !

A rule is ``""``, ``@`` or ``allow`` (anyone), ``!`` or ``deny`` (no one),
``rule:project_admin`` (projects listed in ``[api] admin_projects``) or
``rule:local`` (only where local resources are allowed).  Types that act on
the server host (``Stoker::Local::*`` and every plug-in class declaring
``acts_on_host = True``) are ``rule:local`` whatever the table says
otherwise: an API caller running commands on the server can read every
project's secrets.  The CLI in local mode uses no policy (``None``).
"""

from __future__ import annotations

import configparser
import fnmatch
from dataclasses import dataclass, field
from typing import Iterable

from stoker.home import stoker_home

ALLOW, DENY, ADMIN, LOCAL = "allow", "deny", "rule:project_admin", "rule:local"
_SPELLINGS = {"": ALLOW, "@": ALLOW, "allow": ALLOW, "!": DENY, "deny": DENY,
              "rule:project_admin": ADMIN, "rule:context_is_admin": ADMIN, "rule:local": LOCAL}

#: Heat's default rules: types whose effect reaches beyond the project are the admin's
HEAT_ADMIN_TYPES = (
    "OS::Nova::Flavor", "OS::Nova::HostAggregate", "OS::Nova::Quota", "OS::Cinder::EncryptedVolumeType",
    "OS::Cinder::VolumeType", "OS::Cinder::Quota", "OS::Cinder::QoSSpecs", "OS::Cinder::QoSAssociation",
    "OS::Neutron::Quota", "OS::Neutron::ProviderNet", "OS::Neutron::QoSPolicy",
    "OS::Neutron::QoSBandwidthLimitRule", "OS::Neutron::QoSDscpMarkingRule",
    "OS::Neutron::QoSMinimumBandwidthRule", "OS::Neutron::Segment", "OS::Manila::ShareType",
    "OS::Octavia::Quota", "OS::Octavia::Flavor", "OS::Octavia::FlavorProfile", "OS::Keystone::*",
    "OS::Blazar::Host",
)
DEFAULT_RULES = {**{name: ADMIN for name in HEAT_ADMIN_TYPES}, "Stoker::Local::*": LOCAL}
#: the problem code of a refusal (the API answers it with 403, as Heat)
NOT_ALLOWED = "resource-type-not-allowed"
#: the settings a refusal names, so the operator knows what to change
LOCAL_SETTINGS = "stoker api --allow-local-resources, or [api] local_resource_projects in stoker.conf"


class PolicyError(ValueError):
    """A rule the table cannot mean (reported with the setting that holds it)."""


@dataclass
class TypePolicy:
    """The rule table plus who counts as admin and who may use local types."""

    rules: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_RULES))
    admin_projects: frozenset = frozenset()
    #: True: every project may use local types; else the projects listed
    local_projects: bool | frozenset = frozenset()

    def allows_local(self, project: str) -> bool:
        """Whether ``project`` may run what acts on the server host (local types, script operations)."""
        return self.local_projects is True or project in self.local_projects

    #: rules found so far, by type name: every resource of every create asks (the table is
    #: read once, at start, and not changed after)
    _found: dict[str, str] = field(default_factory=dict, init=False, repr=False, compare=False)

    def rule_for(self, type_name: str) -> str:
        """The exact rule for a type, else the longest matching wildcard, else allow."""
        found = self._found.get(type_name)
        if found is None:
            found = self._found[type_name] = self._rule_in_table(type_name)
        return found

    def _rule_in_table(self, type_name: str) -> str:
        if type_name in self.rules:
            return self.rules[type_name]
        matches = [p for p in self.rules if any(c in p for c in "*?[") and fnmatch.fnmatchcase(type_name, p)]
        return self.rules[max(matches, key=len)] if matches else ALLOW

    def refusal(self, type_names: Iterable[str], cls: type | None, project: str) -> str | None:
        """Why ``project`` may not use this type (``None`` when it may).

        ``type_names`` are the name the template wrote and what the
        environment's registry mapped it to: a rule on either applies.
        """
        names = list(dict.fromkeys(n for n in type_names if n))
        rules = [self.rule_for(n) for n in names]
        if cls is not None and getattr(cls, "acts_on_host", False):
            rules.append(LOCAL)
        shown = names[0] + (f" (mapped to {names[-1]})" if len(names) > 1 else "") if names else "?"
        for rule in rules:
            if rule == DENY:
                return f"resource type {shown} is not allowed here ([resource_types] in stoker.conf)"
            if rule == ADMIN and project not in self.admin_projects:
                return (f"resource type {shown} is for admin projects only ([resource_types] rule:project_admin; "
                        "[api] admin_projects in stoker.conf)")
            if rule == LOCAL and not self.allows_local(project):
                return (f"resource type {shown} acts on the server host and is off for project {project!r} "
                        f"(turn it on with {LOCAL_SETTINGS})")
        return None

    @classmethod
    def from_config(cls, allow_local: bool = False) -> "TypePolicy":
        """The API's policy: Heat's defaults, then ``stoker.conf``; ``allow_local`` for everyone."""
        parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
        parser.optionxform = str  # type names are case-sensitive
        parser.read(stoker_home() / "stoker.conf")
        rules = dict(DEFAULT_RULES)
        if parser.has_section("resource_types"):
            for key, value in parser.items("resource_types", raw=True):
                if key in parser.defaults():
                    continue
                rule = _SPELLINGS.get(value.strip().strip('"').strip("'"))
                if rule is None:
                    raise PolicyError(f"stoker.conf [resource_types] {key}: unknown rule {value!r} "
                                      f"(one of {', '.join(repr(s) for s in _SPELLINGS)})")
                rules[key.removeprefix("resource_types:")] = rule
        api = parser["api"] if parser.has_section("api") else {}
        local: bool | frozenset = allow_local or _flag(api.get("allow_local_resources", ""))
        if local is not True:
            local = frozenset(_names(api.get("local_resource_projects", "")))
        return cls(rules, frozenset(_names(api.get("admin_projects", ""))), local)


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def _flag(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")
