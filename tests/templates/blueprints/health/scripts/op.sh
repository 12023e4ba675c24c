node=$(ctx node id)
op=$(ctx operation name | sed 's/.*\.//')
echo "$node $op" >> "$folder/trace"
case "$op" in
  create) if [ -e "$folder/$node-nocreate" ]; then echo "$node cannot be made" >&2; exit 1; fi
          rm -f "$folder/$node-down" "$folder/$node-drift" ;;
  check_status) if [ -e "$folder/$node-down" ]; then echo "$node is down" >&2; exit 1; fi ;;
  check_drift) if [ -e "$folder/$node-drift" ]; then ctx returns "$(cat "$folder/$node-drift")"; fi ;;
  heal) if [ -e "$folder/$node-noheal" ]; then echo "$node cannot heal" >&2; exit 1; fi; rm -f "$folder/$node-down" ;;
  update) if [ -e "$folder/fail-update" ]; then echo "update refused" >&2; exit 1; fi; rm -f "$folder/$node-drift" ;;
esac
