"""Heat's words for the refusals its clients and tests match (``Property error: ...``,
``The template version is invalid: ...``): a message starts with them where Heat has them;
the problems keep Stoker's places and codes."""

from __future__ import annotations

from stoker.errors import Problem, format_path

#: the problem code of a region that cannot be reached or refuses a template: its message is
#: Heat's as it is
REGION_CODE = "region-unreachable"


def heat_words(problem: Problem) -> str | None:
    """One problem as Heat words it; None where Heat has no words of its own for it."""
    path = tuple(problem.path or ())
    if problem.code == REGION_CODE:
        return problem.message
    if problem.code == "unknown-version":
        return f"The template version is invalid: {problem.message}"
    if problem.code == "unknown-section" and path:
        return f"The template section is invalid: {path[0]}"
    if len(path) >= 4 and path[0] == "resources" and path[2] == "properties":
        return f"Property error: : {format_path(path[:4])}: : {problem.message}"
    return None


def heat_worded(problems: list) -> str | None:
    """The problems, the first in Heat's words, the others as Stoker words them; None when
    Heat has no words for the first."""
    words = heat_words(problems[0]) if problems else None
    if words is None:
        return None
    return "\n".join([words] + [str(p) for p in problems[1:]])
