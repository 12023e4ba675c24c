#!/bin/sh
# Run by the configure operation (workflows come with issue 10): writes the database URL.
echo "$db_url" > "${TMPDIR:-/tmp}/web-$$.conf"
