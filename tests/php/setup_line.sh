#!/usr/bin/env bash
# tests/php/setup_line.sh SRCDIR BUILDDIR SANITIZE - the PHP step of the
# README's set-up command 1, as written ("(cd bindings/php && phpize &&
# ./configure && make && make install)"), run on a copy of bindings/php
# against this build tree's libbreaker, installing into a scratch
# INSTALL_ROOT instead of /: then
#   php -d extension=ROOT/.../breakerd.so -r 'var_dump(class_exists("Breakerd\\Segment"));'
# prints bool(true), the PHP layer and breakerd.ini are installed, and
# the line enables the extension for the CLI and FPM SAPIs with phpenmod.
# Skipped (77) as run.sh is.
set -u
src=$1 build=$2 sanitize=${3:-none}
if [ -n "$sanitize" ] && [ "$sanitize" != none ]; then
	echo "SKIP: a sanitizer build ($sanitize)"; exit 77
fi
command -v phpize >/dev/null 2>&1 || { echo "SKIP: no phpize (apt-get install php8.2-dev)"; exit 77; }
fail=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fail=1; }

line=$(grep '^apt-get update && apt-get install -y' "$src/README.md" | head -n 1)
step=$(printf '%s\n' "$line" | grep -o '(cd bindings/php && [^)]*)')
[ -n "$step" ] && ok "set-up command 1 builds the extension: $step" || { bad "no '(cd bindings/php && ...)' step in set-up command 1"; exit 1; }
for sapi in cli fpm; do
	printf '%s\n' "$line" | grep -q "phpenmod -v 8.2 -s $sapi breakerd" &&
		ok "set-up command 1 enables it for $sapi" || bad "set-up command 1 does not run phpenmod -v 8.2 -s $sapi breakerd"
done
for pkg in php8.2-dev php8.2-cli php8.2-fpm php-guzzlehttp-guzzle phpunit php8.2-apcu php-redis; do
	printf '%s\n' "$line" | grep -q " $pkg " || bad "package $pkg is not on the install line"
done

tmp=$(mktemp -d /tmp/brkphp-setup.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree/bindings"
cp -r "$src/bindings/php" "$tmp/tree/bindings/"
export INSTALL_ROOT=$tmp/root
export PKG_CONFIG_PATH=$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
if ! (cd "$tmp/tree" && eval "$step") >"$tmp/log" 2>&1; then
	cat "$tmp/log"; bad "the step failed"; exit 1
fi
so=$(find "$INSTALL_ROOT" -name breakerd.so | head -n 1)
[ -n "$so" ] && ok "make install put breakerd.so in ${so#"$INSTALL_ROOT"}" || { bad "no breakerd.so installed"; exit 1; }
out=$(LD_LIBRARY_PATH=$build/lib php -n -d extension="$so" -r 'var_dump(class_exists("Breakerd\\Segment"));' 2>&1)
[ "$out" = "bool(true)" ] && ok "php -r 'var_dump(class_exists(\"Breakerd\\\\Segment\"));' prints bool(true)" ||
	bad "class_exists printed: $out"
[ -f "$INSTALL_ROOT/usr/share/php/Breakerd/autoload.php" ] && [ -f "$INSTALL_ROOT/usr/share/php/Breakerd/Guzzle/BreakerMiddleware.php" ] &&
	ok "the PHP layer is installed in /usr/share/php/Breakerd" || bad "the PHP layer is not installed"
if [ -d /etc/php/8.2/mods-available ]; then
	grep -q '^extension=breakerd.so' "$INSTALL_ROOT/etc/php/8.2/mods-available/breakerd.ini" 2>/dev/null &&
		ok "breakerd.ini is installed for phpenmod" || bad "no mods-available/breakerd.ini"
fi
[ "$fail" = 0 ] && echo "PASS" || echo "FAIL"
exit "$fail"
