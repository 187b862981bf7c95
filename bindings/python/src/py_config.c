/*
 * py_config.c - brk_config to and from dicts of its field names.
 */
#include "py_core.h"

/* Fill a brk_config from the defaults and a dict of C field names. */
struct cfg_field {
	const char *name;
	size_t off;
	int is64;
	int is_bool; /* a Python bool in the dicts out (0/1 in) */
};

#define CF32(f) { #f, offsetof(struct brk_config, f), 0, 0 }
#define CF64(f) { #f, offsetof(struct brk_config, f), 1, 0 }
#define CFBOOL(f) { #f, offsetof(struct brk_config, f), 0, 1 }
static const struct cfg_field cfg_fields[] = {
	CF32(failure_threshold), CF32(failure_rate_pct), CF64(window_ms),
	CF32(min_calls), CF64(slow_call_ms), CF32(slow_rate_pct), CF64(open_ms),
	CF64(max_open_ms), CF32(half_open_probes), CF32(success_threshold),
	CF64(probe_timeout_ms), CF64(max_wait_ms), CF32(max_concurrent),
	CF32(min_distinct_processes), CF32(reserve_pct), CFBOOL(hold_histogram),
	CFBOOL(fleet), CFBOOL(fleet_probe), CFBOOL(implicit_pace),
	CFBOOL(concurrency_auto), CF32(min_concurrent),
};
#define N_CFG (sizeof(cfg_fields) / sizeof(cfg_fields[0]))

int brkpy_cfg_from_dict(PyObject *d, struct brk_config *c)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	size_t i;
	uint64_t x;

	if (d == Py_None)
		return 0;
	if (!PyDict_Check(d)) {
		PyErr_SetString(PyExc_TypeError, "settings must be a dict");
		return -1;
	}
	while (PyDict_Next(d, &pos, &k, &v)) {
		const char *ks = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;

		if (!ks) {
			PyErr_SetString(PyExc_TypeError, "setting names must be str");
			return -1;
		}
		for (i = 0; i < N_CFG; i++)
			if (strcmp(cfg_fields[i].name, ks) == 0)
				break;
		if (i == N_CFG) {
			PyErr_Format(PyExc_TypeError, "unknown setting %R", k);
			return -1;
		}
		if (cfg_fields[i].is_bool && PyBool_Check(v))
			x = v == Py_True; /* as brkpy_cfg_to_dict() gives it */
		else if (brkpy_get_u64(v, ks, cfg_fields[i].is64 ? UINT64_MAX : UINT32_MAX, &x))
			return -1;
		if (cfg_fields[i].is64)
			memcpy((char *)c + cfg_fields[i].off, &x, sizeof(uint64_t));
		else {
			uint32_t y = (uint32_t)x;

			memcpy((char *)c + cfg_fields[i].off, &y, sizeof(uint32_t));
		}
	}
	return 0;
}

/* The defaults (brk_config_init()) as a dict of C field names. */
PyObject *brkpy_cfg_to_dict(const struct brk_config *c)
{
	PyObject *d = PyDict_New();
	size_t i;
	uint64_t x;

	if (!d)
		return NULL;
	for (i = 0; i < N_CFG; i++) {
		if (cfg_fields[i].is64)
			memcpy(&x, (const char *)c + cfg_fields[i].off, sizeof(x));
		else {
			uint32_t y;

			memcpy(&y, (const char *)c + cfg_fields[i].off, sizeof(y));
			x = y;
		}
		if (cfg_fields[i].is_bool) {
			if (PyDict_SetItemString(d, cfg_fields[i].name,
						 x ? Py_True : Py_False) < 0) {
				Py_DECREF(d);
				return NULL;
			}
			continue;
		}
		if (PUTU(d, cfg_fields[i].name, x)) {
			Py_DECREF(d);
			return NULL;
		}
	}
	return d;
}

/* config_check(settings) -> None, or the C name of the first bad setting. */
PyObject *brkpy_config_check(PyObject *mod, PyObject *d)
{
	struct brk_config c;
	const char *what = NULL;

	(void)mod;
	brk_config_init(&c);
	if (brkpy_cfg_from_dict(d, &c))
		return NULL;
	if (brk_config_validate(&c, &what) == 0)
		Py_RETURN_NONE;
	return PyUnicode_FromString(what ? what : "settings");
}

PyObject *brkpy_config_defaults(PyObject *mod, PyObject *unused)
{
	struct brk_config c;

	(void)mod;
	(void)unused;
	brk_config_init(&c);
	return brkpy_cfg_to_dict(&c);
}
