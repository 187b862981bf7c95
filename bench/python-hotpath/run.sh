#!/usr/bin/env bash
# bench/python-hotpath/run.sh BUILD_DIR [hotpath.py args...]
# Installs ./bindings/python (against BUILD_DIR's libbreaker; use a release build:
#   meson setup build-rel -Dbuildtype=release && ninja -C build-rel)
# into BUILD_DIR/python-venv (made from /usr/bin/python3, as
# tests/python/run.sh does), builds the floor nullcm.c and runs hotpath.py.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: run.sh BUILD_DIR [args]}" && pwd)
shift
venv=$build/python-venv
[ -x "$venv/bin/python" ] || /usr/bin/python3 -m venv --system-site-packages "$venv"
export PKG_CONFIG_PATH=$build/meson-uninstalled${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
export LD_LIBRARY_PATH=$build/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
"$venv/bin/python" -m pip install --no-build-isolation --no-index --no-deps --force-reinstall \
	-q --disable-pip-version-check "$src/bindings/python" >"$build/python-hotpath-install.log" 2>&1 ||
	{ cat "$build/python-hotpath-install.log"; exit 1; }
# The floor: a C context manager that does nothing (nullcm.c).
mkdir -p "$build/python-hotpath"
ext=$(/usr/bin/python3 -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
cc -O2 -Wall -Wextra -Werror -shared -fPIC $(/usr/bin/python3-config --includes) \
	"$here/nullcm.c" -o "$build/python-hotpath/_nullcm$ext"
export PYTHONPATH=$build/python-hotpath${PYTHONPATH:+:$PYTHONPATH}
cd "$build"
exec "$venv/bin/python" "$here/hotpath.py" "$@"
