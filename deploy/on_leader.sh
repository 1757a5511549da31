#!/bin/sh
# Runs its arguments as a command on the Patroni leader only, and nowhere else: the pgBackRest cron lines every
# database host carries (docs/deploy.md, "Schedule and watch") run where the leader is today.
#
#     on_leader.sh pgbackrest --stanza=service --type=full backup
#
# It asks this host's Patroni (PATRONI_URL, default http://127.0.0.1:8008) GET /primary: 200 on the running
# leader (the command runs; its exit status is this script's), 503 on any other node (nothing runs, exit 0, so a
# replica's crontab stays quiet). Any other answer, or none, is an error (exit 1, a line on stderr for cron's mail):
# a host whose Patroni does not answer cannot know whether it leads.
set -eu
url="${PATRONI_URL:-http://127.0.0.1:8008}"
status=$(curl --silent --output /dev/null --write-out '%{http_code}' --max-time 5 "$url/primary") || true
case "$status" in
  200) exec "$@" ;;
  503) exit 0 ;;
  *) echo "on_leader.sh: Patroni at $url answered ${status:-nothing} to GET /primary: '$*' not run" >&2; exit 1 ;;
esac
