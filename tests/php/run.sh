#!/usr/bin/env bash
# tests/php/run.sh SRCDIR BUILDDIR SANITIZE PHP-ARGS...
# Builds the breakerd PHP extension (bindings/php, phpize + configure +
# make) against this build tree's libbreaker (PKG_CONFIG_PATH=
# BUILDDIR/meson-uninstalled) into BUILDDIR/php-ext, rebuilt only when a
# source changed, then runs /usr/bin/php -d extension=BUILDDIR/php-ext/
# modules/breakerd.so PHP-ARGS: no install needed. BRKPHP_EXT names the
# .so for scripts that start more PHP processes.
# Exit 77 (skipped) without php8.2-dev (phpize) or in a sanitizer build.
set -u
src=$1 build=$2 sanitize=${3:-none}
shift 3
php=/usr/bin/php

if [ -n "$sanitize" ] && [ "$sanitize" != none ]; then
	echo "SKIP: a sanitizer build ($sanitize): the PHP tests run in the plain build"
	exit 77
fi
if ! [ -x "$php" ] || ! command -v phpize >/dev/null 2>&1; then
	echo "SKIP: $php or phpize missing (apt-get install php8.2-dev php8.2-cli)"
	exit 77
fi

ext=$src/bindings/php
out=$build/php-ext
mkdir -p "$out"
exec 9>"$out.lock"
flock 9
stamp=$( { find "$ext/config.m4" "$ext/Makefile.frag" "$ext/src" "$src/lib/include" -type f -print0 | sort -z | xargs -0 sha256sum
	   find "$build/lib" -maxdepth 1 -name 'libbreaker*' -printf '%f %s %T@\n' | sort; } |
	 sha256sum | cut -d' ' -f1)
if [ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ] || ! [ -f "$out/modules/breakerd.so" ]; then
	# phpize writes into the source folder: build from a copy
	rm -rf "$out/tree"
	mkdir -p "$out/tree"
	cp -r "$ext/config.m4" "$ext/Makefile.frag" "$ext/breakerd.ini" "$ext/src" "$ext/lib" "$out/tree/"
	if ! ( cd "$out/tree" &&
	       phpize &&
	       PKG_CONFIG_PATH=$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
	       BREAKERD_WERROR=1 ./configure --enable-breakerd &&
	       make -j2 ) >"$out/build.log" 2>&1; then
		cat "$out/build.log"
		echo "FAIL: building the breakerd extension (bindings/php)"
		exit 1
	fi
	mkdir -p "$out/modules"
	cp "$out/tree/modules/breakerd.so" "$out/modules/"
	echo "$stamp" >"$out/.stamp"
fi
exec 9>&-

# A breakerd extension the host's ini files load (the README's set-up step,
# phpenmod) wins over -d extension= ("Module already loaded"): the tests
# would run the installed extension, not this tree's. Then scan a copy of
# the ini files without the ones that load it.
if "$php" -r 'exit(extension_loaded("breakerd") ? 0 : 1);' 2>/dev/null; then
	ini=$out/conf.d
	rm -rf "$ini"
	mkdir -p "$ini"
	"$php" -r 'echo str_replace(",", "\n", (string)php_ini_scanned_files());' |
		sed 's/^ *//; /^$/d' | while IFS= read -r f; do
			grep -Eq '^[[:space:]]*extension[[:space:]]*=[[:space:]]*"?breakerd(\.so)?"?[[:space:]]*$' "$f" ||
				ln -s "$f" "$ini/$(basename "$f")"
		done
	export PHP_INI_SCAN_DIR=$ini
	if "$php" -r 'exit(extension_loaded("breakerd") ? 0 : 1);' 2>/dev/null; then
		echo "FAIL: the host's php.ini loads a breakerd extension (not from a scanned file): the tests would not run this tree's"
		exit 1
	fi
fi

export BRKPHP_EXT=$out/modules/breakerd.so
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export BRKPHP_SRCDIR=$src BRKPHP_BUILDDIR=$build
cd "$build" || exit 1
exec "$php" -d extension="$BRKPHP_EXT" "$@"
