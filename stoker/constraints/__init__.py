"""Constraints on parameter and property values, and the custom-constraint registry."""

from stoker.constraints.base import (
    AllowedPattern,
    AllowedValues,
    Constraint,
    ConstraintViolation,
    CustomConstraint,
    Length,
    Modulo,
    Range,
)

__all__ = [
    "AllowedPattern",
    "AllowedValues",
    "Constraint",
    "ConstraintViolation",
    "CustomConstraint",
    "Length",
    "Modulo",
    "Range",
]
