"""How ready nodes are cut into tasks (Celery's in-memory transport: no broker needed)."""

from __future__ import annotations

import uuid

from kombu import Connection

from stoker.dispatch import celery_app


def published(queue: str) -> list:
    """The (traversal, nodes) of every task on ``queue``, in order."""
    tasks = []
    with Connection("memory://") as conn:
        messages = conn.SimpleQueue(queue)
        while True:
            try:
                message = messages.get(block=False)
            except messages.Empty:
                return tasks
            traversal_id, nodes, sent_to = message.payload[0]
            assert sent_to == queue
            tasks.append((traversal_id, nodes))
            message.ack()


def test_ready_nodes_spread_over_tasks_in_chunks():
    app, queue = celery_app.make_app("memory://"), f"q-{uuid.uuid4().hex[:8]}"
    celery_app.publish(app, queue, "t1", range(1, 201))
    tasks = published(queue)
    assert [len(nodes) for _, nodes in tasks] == [4] * 50  # 200 nodes over about 64 tasks
    assert [node for _, nodes in tasks for node in nodes] == [[n, 0] for n in range(1, 201)]


def test_nodes_of_a_kind_without_batches_get_a_task_each():
    app, queue = celery_app.make_app("memory://"), f"q-{uuid.uuid4().hex[:8]}"
    celery_app.publish(app, queue, "u1", [7, 8, 9], batched=False)
    assert published(queue) == [("u1", [[7, 0]]), ("u1", [[8, 0]]), ("u1", [[9, 0]])]


def test_a_chunk_never_exceeds_its_maximum():
    assert celery_app.chunk_size(3) == 1
    assert celery_app.chunk_size(64 * celery_app.CHUNK_MAX * 2) == celery_app.CHUNK_MAX
