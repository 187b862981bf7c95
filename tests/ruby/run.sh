#!/usr/bin/env bash
# tests/ruby/run.sh SRCDIR BUILDDIR SANITIZE RUBY-ARGS...
# Builds the breakerd gem's C extension (bindings/ruby/ext/breakerd, with
# mkmf) against this build tree's libbreaker (PKG_CONFIG_PATH=
# BUILDDIR/meson-uninstalled) into BUILDDIR/ruby-ext, rebuilt only when a
# source changed, then runs /usr/bin/ruby RUBY-ARGS with the gem's lib/ and
# the extension on the load path: no install needed.
# Exit 77 (skipped) without ruby-dev (ruby.h, mkmf) or in a sanitizer build.
set -u
src=$1 build=$2 sanitize=${3:-none}
shift 3
ruby=/usr/bin/ruby

if [ -n "$sanitize" ] && [ "$sanitize" != none ]; then
	echo "SKIP: a sanitizer build ($sanitize): the Ruby tests run in the plain build"
	exit 77
fi
if ! [ -x "$ruby" ] || ! "$ruby" -rmkmf -e 'exit File.exist?(File.join(RbConfig::CONFIG["rubyhdrdir"], "ruby.h"))' 2>/dev/null; then
	echo "SKIP: $ruby or its headers missing (apt-get install ruby-dev)"
	exit 77
fi

gem=$src/bindings/ruby
out=$build/ruby-ext
mkdir -p "$out/lib/breakerd"
exec 9>"$out.lock"
flock 9
stamp=$( { find "$gem/ext" "$src/lib/include" -type f -print0 | sort -z | xargs -0 sha256sum
	   find "$build/lib" -maxdepth 1 -name 'libbreaker*' -printf '%f %s %T@\n' | sort; } |
	 sha256sum | cut -d' ' -f1)
if [ "$(cat "$out/.stamp" 2>/dev/null)" != "$stamp" ]; then
	rm -f "$out/lib/breakerd/breakerd_ext.so"
	if ! ( cd "$out" &&
	       PKG_CONFIG_PATH=$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH} \
	       BREAKERD_WERROR=1 "$ruby" "$gem/ext/breakerd/extconf.rb" &&
	       make V=1 ) >"$out/build.log" 2>&1; then
		cat "$out/build.log"
		echo "FAIL: building the breakerd extension (bindings/ruby/ext/breakerd)"
		exit 1
	fi
	cp "$out/breakerd_ext.so" "$out/lib/breakerd/"
	echo "$stamp" >"$out/.stamp"
fi
exec 9>&-

export RUBYLIB=$gem/lib:$out/lib${RUBYLIB:+:$RUBYLIB}
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export BRKRB_SRCDIR=$src BRKRB_BUILDDIR=$build
cd "$build" || exit 1
exec "$ruby" "$@"
