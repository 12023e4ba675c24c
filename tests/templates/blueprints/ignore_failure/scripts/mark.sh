touch "$folder/$(ctx node id)-$(ctx operation name | sed 's/.*\.//')"
if [ "${fail:-}" = "True" ] || [ "${fail:-}" = "true" ]; then echo "delete refused" >&2; exit 1; fi
