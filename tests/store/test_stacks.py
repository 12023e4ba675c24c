"""Stacks and templates: CRUD, names, listing, nesting, soft delete."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from sqlalchemy.exc import IntegrityError

from stoker.errors import Conflict, NotFound, StokerError

T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)


def test_template_round_trip(store):
    content = {"heat_template_version": "2021-04-16", "resources": {"a": {"type": "OS::Heat::None"}}}
    template_id = store.store_template(content, {"file.yaml": "x: 1"})
    template = store.get_template(template_id)
    assert (template.content, template.files) == (content, {"file.yaml": "x: 1"})
    assert template.created_at.tzinfo is timezone.utc
    with pytest.raises(NotFound):
        store.get_template(template_id + 1)


def test_create_and_get_stack(store, template_id):
    created = store.create_stack(
        "web",
        template_id,
        environment={"parameters": {"key": "secret"}},
        parameters={"key": "secret"},
        tags=["prod"],
        timeout_mins=10,
    )
    stack = store.get_stack(created.id)
    assert (stack.name, stack.action, stack.status, stack.project_id) == ("web", "CREATE", "IN_PROGRESS", "default")
    assert stack.environment == {"parameters": {"key": "secret"}}
    assert (stack.tags, stack.timeout_mins, stack.disable_rollback) == (["prod"], 10, True)
    assert stack.created_at.tzinfo is timezone.utc and stack.updated_at is None
    assert store.get_stack("web").id == created.id
    with pytest.raises(NotFound, match="Stack nope not found"):
        store.get_stack("nope")
    with pytest.raises(NotFound):
        store.get_stack("web", project_id="other")


def test_stack_needs_a_stored_template(store):
    with pytest.raises(IntegrityError):
        store.create_stack("broken", 12345)


def test_unknown_field_is_refused(store, template_id):
    with pytest.raises(TypeError, match="no field"):
        store.create_stack("s", template_id, colour="blue")


def test_update_stack(store, stack):
    store.update_stack(stack.id, action="UPDATE", status="COMPLETE", status_reason="done", updated_at=T0)
    updated = store.get_stack(stack.id)
    assert (updated.action, updated.status, updated.status_reason) == ("UPDATE", "COMPLETE", "done")
    assert updated.updated_at == T0
    with pytest.raises(NotFound):
        store.update_stack("missing", status="FAILED")


def test_names_are_unique_among_live_stacks_of_a_project(store, template_id, stack):
    with pytest.raises(Conflict, match="Stack mystack already exists"):
        store.create_stack("mystack", template_id)
    store.create_stack("mystack", template_id, project_id="other")
    store.soft_delete_stack(stack.id)
    reborn = store.create_stack("mystack", template_id)
    assert store.get_stack("mystack").id == reborn.id


def test_soft_delete_hides_but_keeps(store, stack):
    store.soft_delete_stack(stack.id)
    with pytest.raises(NotFound):
        store.get_stack(stack.id)
    assert store.get_stack(stack.id, show_deleted=True).deleted_at is not None
    assert store.list_stacks() == []
    assert [s.id for s in store.list_stacks(show_deleted=True)] == [stack.id]
    with pytest.raises(NotFound):
        store.soft_delete_stack("missing")


def test_nested_stacks(store, template_id, stack):
    child = store.create_stack("mystack-inner-x1", template_id, parent_id=stack.id, owner_resource="inner")
    other = store.create_stack("mystack-inner-x2", template_id, parent_id=stack.id, owner_resource="other")
    assert [s.id for s in store.children(stack.id)] == [child.id, other.id]
    assert [s.id for s in store.list_stacks()] == [stack.id]
    assert {s.id for s in store.list_stacks(show_nested=True)} == {stack.id, child.id, other.id}
    store.soft_delete_stack(other.id)
    assert [s.owner_resource for s in store.children(stack.id)] == ["inner"]


@pytest.fixture
def many(store, template_id):
    """Five stacks created a minute apart: (name, action, status, tags)."""
    specs = [
        ("delta", "CREATE", "COMPLETE", ["a"]),
        ("alpha", "CREATE", "FAILED", ["a", "b"]),
        ("echo", "UPDATE", "COMPLETE", ["b"]),
        ("bravo", "CREATE", "COMPLETE", []),
        ("charlie", "DELETE", "IN_PROGRESS", ["50%_off", 'say "hi"']),
    ]
    return {
        name: store.create_stack(
            name, template_id, action=action, status=status, tags=tags, created_at=T0 + timedelta(minutes=i)
        ).id
        for i, (name, action, status, tags) in enumerate(specs)
    }


def names(stacks):
    return [s.name for s in stacks]


def test_list_default_is_newest_first(store, many):
    assert names(store.list_stacks()) == ["charlie", "bravo", "echo", "alpha", "delta"]


def test_list_sort_keys(store, many):
    assert names(store.list_stacks(sort_keys=["name"], sort_dir="asc")) == [
        "alpha", "bravo", "charlie", "delta", "echo"
    ]
    assert names(store.list_stacks(sort_keys=["stack_name"], sort_dir="desc"))[0] == "echo"
    by_status = store.list_stacks(sort_keys=["status", "name"], sort_dir="asc")
    assert names(by_status) == ["bravo", "delta", "echo", "alpha", "charlie"]
    with pytest.raises(StokerError, match="cannot sort"):
        store.list_stacks(sort_keys=["colour"])
    with pytest.raises(StokerError, match="sort direction"):
        store.list_stacks(sort_dir="up")


def test_updated_at_sorts_never_updated_stacks_by_creation(store, many):
    store.update_stack(many["delta"], updated_at=T0 + timedelta(hours=1))
    assert names(store.list_stacks(sort_keys=["updated_time"]))[:2] == ["delta", "charlie"]


def test_list_filters(store, many):
    assert set(names(store.list_stacks(filters={"status": "COMPLETE"}))) == {"delta", "echo", "bravo"}
    assert set(names(store.list_stacks(filters={"status": "CREATE_COMPLETE"}))) == {"delta", "bravo"}
    assert names(store.list_stacks(filters={"status": "DELETE_IN_PROGRESS"})) == ["charlie"]
    assert set(names(store.list_stacks(filters={"name": ["alpha", "echo", "zulu"]}))) == {"alpha", "echo"}
    assert names(store.list_stacks(filters={"action": "UPDATE", "status": "COMPLETE"})) == ["echo"]
    with pytest.raises(StokerError, match="cannot filter"):
        store.list_stacks(filters={"colour": "blue"})


def test_list_tags(store, many):
    def tagged(tags, mode="all"):
        return set(names(store.list_stacks(tags=tags, tag_mode=mode)))

    assert tagged(["a"]) == {"delta", "alpha"}
    assert tagged(["a", "b"]) == {"alpha"}
    assert tagged(["a", "b"], "any") == {"delta", "alpha", "echo"}
    assert tagged(["a", "b"], "not") == {"delta", "echo", "bravo", "charlie"}
    assert tagged(["a", "b"], "not-any") == {"bravo", "charlie"}
    assert tagged(["50%_off"]) == {"charlie"}
    assert tagged(['say "hi"']) == {"charlie"}
    assert tagged(["50"]) == set()
    assert tagged(["5_%_off"]) == set()


def test_list_paging_with_marker(store, many):
    for keys, direction in [(["created_at"], "desc"), (["status"], "asc"), (["action", "name"], "desc")]:
        everything = names(store.list_stacks(sort_keys=keys, sort_dir=direction))
        pages, marker = [], None
        while page := store.list_stacks(sort_keys=keys, sort_dir=direction, limit=2, marker=marker):
            pages.append(names(page))
            marker = page[-1].id
        assert [n for page in pages for n in page] == everything, keys
        assert [len(page) for page in pages] == [2, 2, 1]
    with pytest.raises(NotFound):
        store.list_stacks(marker="missing")


def test_list_is_per_project(store, template_id, many):
    store.create_stack("foreign", template_id, project_id="other")
    assert names(store.list_stacks(project_id="other")) == ["foreign"]
    assert "foreign" not in names(store.list_stacks())


def test_reading_a_stack_and_its_resources_builds_no_statement(store, stack, monkeypatch):
    """Every API poll reads a stack (by id, else by name) and its resources: each read built its
    SELECT again, which cost more than SQLite answering it."""
    from sqlalchemy.sql.selectable import Select

    store.add_resource(stack.id, name="r", type="OS::Heat::None")
    built: list[str] = []
    original = Select.__init__
    monkeypatch.setattr(Select, "__init__", lambda self, *a, **k: built.append("select") or original(self, *a, **k))
    assert store.get_stack(stack.id).name == store.get_stack(stack.name).name == stack.name
    assert [r.name for r in store.get_resources(stack.id)] == ["r"]
    with pytest.raises(NotFound):
        store.get_stack(stack.id, "another-project")
    assert built == []
