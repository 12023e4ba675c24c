#!/bin/bash
# config.create: fill the blueprint's template into this deployment's folder.
set -euo pipefail
folder="$base_dir/$(ctx deployment id)"
mkdir -p "$folder"
template="$(ctx download-resource templates/app.conf)"
sed -e "s|@DEPLOYMENT@|$(ctx deployment id)|" -e "s|@GREETING@|$greeting|" -e "s|@PORT@|$port|" \
    "$template" > "$folder/app.conf"
ctx instance runtime-properties folder "$folder"
ctx instance runtime-properties path "$folder/app.conf"
ctx logger info "wrote $folder/app.conf"
