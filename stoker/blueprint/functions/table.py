"""The one table of which blueprint functions exist."""

from __future__ import annotations

from stoker.blueprint.functions.attributes import GetAttribute, GetAttributesDict, GetAttributesList
from stoker.blueprint.functions.combine import Concat, Merge
from stoker.blueprint.functions.get_input import GetInput
from stoker.blueprint.functions.manager import (GetCapability, GetConsumers, GetEnvironmentCapability,
                                               GetGroupCapability, GetLabel, GetSecret, GetSys)
from stoker.blueprint.functions.properties import GetProperty
from stoker.blueprint.functions.strings import StringFind, StringLower, StringReplace, StringSplit, StringUpper

FUNCTIONS = {cls.name: cls for cls in (
    GetSecret, GetInput, GetCapability, GetEnvironmentCapability, GetProperty, GetAttribute, GetAttributesList,
    GetAttributesDict, GetLabel, GetSys, StringFind, StringReplace, StringSplit, StringLower, StringUpper,
    Concat, Merge, GetConsumers, GetGroupCapability,
)}
