"""Heat's translation markers; Stoker does not translate, so they return the text."""


def _(text: str) -> str:
    return text


# older plug-ins mark log messages with these
_LE = _LI = _LW = _LC = _
