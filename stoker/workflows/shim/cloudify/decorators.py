"""Cloudify's ``@operation`` (and ``@workflow``): the task gets ``ctx`` among its keyword arguments."""

import functools


def operation(func=None, resumable=False, **_arguments):
    if func is None:
        return lambda f: operation(f, resumable=resumable)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        from cloudify import ctx

        kwargs.setdefault("ctx", ctx)
        return func(*args, **kwargs)

    wrapper._cloudify_operation = True
    return wrapper


workflow = operation
