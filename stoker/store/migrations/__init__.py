"""Alembic migrations, run by ``stoker.store.db.upgrade``.

Revision ids are the zero-padded number that starts each file name in
``versions/`` (``0001_initial.py`` is revision ``0001``), so the newest
revision can be known without importing Alembic.
"""
