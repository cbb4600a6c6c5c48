#!/usr/bin/env bash
# What the test suite needs from the machine, installed when missing: Debian's Chromium (browser
# tests), squid (real-proxy tests), prometheus with promtool (the /metrics tests), haproxy (the
# several-instances test), nats-server (the location-agent tests start private servers; a NATS the
# machine runs itself is left alone), prometheus-alertmanager (the alerting tests start private
# ones), the MariaDB binaries (the database-outage test starts a
# private server), a MariaDB at 127.0.0.1:3306 where root logs in over TCP, with a `test` database,
# and redis-server with a Redis at 127.0.0.1:6379 (the sharing tests use its databases 1 to 8 and
# start private servers of their own).
#
# As root with apt-get it installs and starts what is missing (apt-get update at most once);
# otherwise it stops with one line naming what to install. `npm test` runs it first (pretest) and
# `.ci/run` calls it too. When the local MariaDB answers it writes its URL (no password) to
# node_modules/.cache/site-status/test-mysql-url, which `npm test` turns into TEST_MYSQL_URL.
# With TEST_MYSQL_URL already set, that server is used (none when empty) and the local one is left alone.
set -uo pipefail
cd "$(dirname "$0")/.."

MYSQL_URL="mysql://root@127.0.0.1:3306/test"
MARKER=node_modules/.cache/site-status/test-mysql-url

say() { echo "prerequisites: $*" >&2; }
stop() { say "$*"; exit 1; }

can_install() { [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; }

apt_updated=false
# Installs Debian packages when this machine lets us; otherwise stops naming them.
need() {
  local what=$1
  shift
  can_install || stop "$what is missing: install it with 'sudo apt-get install -y $*'"
  say "$what is missing; installing $*"
  if ! $apt_updated; then apt-get update -qq >/dev/null || stop "apt-get update failed; install $* by hand"; apt_updated=true; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null || stop "cannot install $*; install it by hand"
}

[ -x /usr/bin/chromium ] || need "/usr/bin/chromium (browser tests)" chromium
[ -x /usr/bin/chromium ] || stop "/usr/bin/chromium is still missing: install Debian's chromium"

[ -x /usr/sbin/squid ] || need "/usr/sbin/squid (real-proxy tests)" --no-install-recommends squid
[ -x /usr/sbin/squid ] || stop "/usr/sbin/squid is still missing: install Debian's squid"

command -v ss >/dev/null 2>&1 || need "ss (the listen-queue test)" --no-install-recommends iproute2
command -v ss >/dev/null 2>&1 || stop "ss is still missing: install Debian's iproute2"

if ! [ -x /usr/bin/prometheus ] || ! [ -x /usr/bin/promtool ]; then
  need "/usr/bin/prometheus and promtool (metrics tests)" --no-install-recommends prometheus
fi
{ [ -x /usr/bin/prometheus ] && [ -x /usr/bin/promtool ]; } || stop "/usr/bin/prometheus or promtool is still missing: install Debian's prometheus"

[ -x /usr/sbin/haproxy ] || need "/usr/sbin/haproxy (several instances behind a load balancer)" --no-install-recommends haproxy
[ -x /usr/sbin/haproxy ] || stop "/usr/sbin/haproxy is still missing: install Debian's haproxy"

[ -x /usr/sbin/nats-server ] || need "/usr/sbin/nats-server (location-agent tests)" --no-install-recommends nats-server
[ -x /usr/sbin/nats-server ] || stop "/usr/sbin/nats-server is still missing: install Debian's nats-server"

[ -x /usr/bin/prometheus-alertmanager ] || need "/usr/bin/prometheus-alertmanager (alerting tests)" --no-install-recommends prometheus-alertmanager
[ -x /usr/bin/prometheus-alertmanager ] || stop "/usr/bin/prometheus-alertmanager is still missing: install Debian's prometheus-alertmanager"

if ! [ -x /usr/sbin/mariadbd ] || ! command -v mariadb-install-db >/dev/null 2>&1; then
  need "MariaDB (mariadbd, mariadb-install-db)" --no-install-recommends mariadb-server mariadb-client
fi

[ -x /usr/bin/redis-server ] && command -v redis-cli >/dev/null 2>&1 || need "redis-server (sharing tests)" --no-install-recommends redis-server
[ -x /usr/bin/redis-server ] || stop "/usr/bin/redis-server is still missing: install Debian's redis-server"
redis_up() { [ "$(redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null)" = PONG ]; }
if ! redis_up; then
  say "Redis is not answering at 127.0.0.1:6379; starting it"
  redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save '' --appendonly no >/dev/null 2>&1 || true
  for _ in $(seq 1 20); do redis_up && break; sleep 0.5; done
fi
redis_up || stop "Redis is not reachable at 127.0.0.1:6379: start it (redis-server --daemonize yes --bind 127.0.0.1)"

if [ -n "${TEST_MYSQL_URL+set}" ]; then
  # The caller's own server, or none when empty: nothing to start, and no marker (npm test keeps the variable).
  rm -f "$MARKER"
  # Never print the URL itself: it may hold a password.
  if [ -n "$TEST_MYSQL_URL" ]; then say "ready (MySQL from TEST_MYSQL_URL)"; else say "ready (SQLite only: TEST_MYSQL_URL is empty)"; fi
  exit 0
fi

mysql_up() { mysqladmin --protocol=tcp -h 127.0.0.1 -P 3306 -u root ping >/dev/null 2>&1; }
if ! mysql_up; then
  [ "$(id -u)" -eq 0 ] || stop "MariaDB is not answering at 127.0.0.1:3306: start it (sudo service mariadb start) or set TEST_MYSQL_URL"
  say "MariaDB is not answering; starting it"
  # Its socket directory lives in /run, which starts empty on a fresh boot.
  install -d -o mysql -g mysql /run/mysqld 2>/dev/null || mkdir -p /run/mysqld
  start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd >/dev/null 2>&1 || true
  for _ in $(seq 1 60); do mysql_up && break; sleep 1; done
fi
mysql_up || stop "MariaDB is not reachable at 127.0.0.1:3306: start it or set TEST_MYSQL_URL"

# A freshly installed Debian MariaDB lets root in only through the local socket (unix_socket); the
# tests connect over TCP as root with no password, as a throwaway test server allows.
if ! mysql --protocol=tcp -h 127.0.0.1 -P 3306 -u root -e 'SELECT 1' >/dev/null 2>&1; then
  [ "$(id -u)" -eq 0 ] || stop "root cannot log in to MariaDB over TCP without a password: allow it (run this script as root) or set TEST_MYSQL_URL"
  say "root cannot log in over TCP; allowing it without a password (a test machine)"
  mysql -u root -e "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY '';
    GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION;
    ALTER USER 'root'@'localhost' IDENTIFIED VIA unix_socket OR mysql_native_password USING PASSWORD('');
    FLUSH PRIVILEGES;" >/dev/null || stop "cannot let root log in to MariaDB over TCP"
fi
mysql --protocol=tcp -h 127.0.0.1 -P 3306 -u root -e 'CREATE DATABASE IF NOT EXISTS test' >/dev/null \
  || stop "cannot create the test database in MariaDB"

if [ "$(cat "$MARKER" 2>/dev/null)" != "$MYSQL_URL" ]; then
  { mkdir -p "$(dirname "$MARKER")" && echo "$MYSQL_URL" >"$MARKER"; } 2>/dev/null || stop "cannot write $MARKER"
fi
say "ready (MySQL at $MYSQL_URL)"
