#!/usr/bin/env bash
# tests/php/fpm_fleet.sh SRCDIR BUILDDIR SANITIZE - the PHP-FPM fleet test
# (fpm_fleet.php): Debian's php-fpm8.2 (pm = static, 8 children) behind
# nginx-light's fastcgi_pass, both on loopback, started and stopped by the
# test. Skipped (77) without php-fpm8.2 or nginx; the Python part uses the
# breakerd package tests/python/run.sh installs into the build tree
# (skipped by itself if that is unavailable).
set -u
src=$1 build=$2 sanitize=$3
if ! [ -x /usr/sbin/php-fpm8.2 ] || ! [ -x /usr/sbin/nginx ]; then
	echo "SKIP: php-fpm8.2 or nginx missing (apt-get install php8.2-fpm nginx-light)"
	exit 77
fi
if BRKPY_INSTALL_ONLY=1 bash "$src/tests/python/run.sh" "$src" "$build" "" "$sanitize" "" >/dev/null 2>&1; then
	export BRKPHP_PYTHON=$build/python-venv/bin/python
fi
exec bash "$src/tests/php/run.sh" "$src" "$build" "$sanitize" "$src/tests/php/fpm_fleet.php"
