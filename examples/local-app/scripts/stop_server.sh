#!/bin/bash
# server.stop: end the process start_server.py left running (gone, or a zombie waiting for its reaper).
pid="$(ctx instance runtime-properties pid)"
if kill "$pid" 2>/dev/null; then
    while ps -o stat= -p "$pid" | grep -qv '^Z'; do sleep 0.1; done
    ctx logger info "stopped the server (pid $pid)"
fi
