"""OS::Heat::None: accepts anything, does nothing."""

from __future__ import annotations

import uuid

from stoker.resources.builtin.none import NoneResource

from .fakes import create, make, run, update

ANY_PROPS = {"flavor": "m1.small", "count": 3, "nested": {"a": [1, 2]}}


def test_accepts_any_properties():
    res = make(NoneResource, ANY_PROPS)
    res.validate_template()


def test_create_gives_a_uuid_reference():
    res = make(NoneResource, ANY_PROPS)
    run(create(res))
    assert res.state == ("CREATE", "COMPLETE")
    assert uuid.UUID(res.FnGetRefId()) and res.FnGetRefId() == res.resource_id


def test_any_attribute_is_none():
    res = make(NoneResource, ANY_PROPS)
    run(create(res))
    assert res.has_attribute("whatever")
    assert res.FnGetAtt("whatever") is None
    assert res.FnGetAtt("first_address", 0, "ip") is None
    assert res.FnGetAtt("show") is None


def test_never_updated_nor_replaced_whatever_changes():
    res = make(NoneResource, ANY_PROPS)
    run(create(res))
    ref = res.FnGetRefId()
    assert run(update(res, {"flavor": "m1.large", "image": "other"})) == "unchanged"
    assert res.state == ("CREATE", "COMPLETE")
    assert res.FnGetRefId() == ref


def test_delete():
    res = make(NoneResource, ANY_PROPS)
    run(create(res))
    run(res.delete())
    assert res.state == ("DELETE", "COMPLETE")
