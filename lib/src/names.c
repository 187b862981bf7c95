/*
 * names.c - record names: the rule for a valid name, its hash, and a
 * record's name read back from shm (untrusted: validated again). A leaf.
 */
#include <string.h>

#include "internal.h"

static int name_char_ok(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == ':' ||
	       c == '/' || c == '-';
}

int brk_name_validate(const char *name)
{
	size_t i;

	if (!name || !name[0])
		return -EINVAL;
	for (i = 0; name[i]; i++) {
		if (i >= BRK_NAME_MAX)
			return -ENAMETOOLONG;
		if (!name_char_ok((unsigned char)name[i]))
			return -EINVAL;
		if (name[i] == '/' && (i == 0 || name[i + 1] == '\0' ||
				       name[i + 1] == '/'))
			return -EINVAL;
	}
	return 0;
}

/* 64-bit FNV-1a. */
uint64_t brk__hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *name; name++) {
		h ^= (unsigned char)*name;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int brk__record_name(const struct brk__record *r, char *out)
{
	size_t i;

	for (i = 0; i < BRK__NAME_BYTES; i++) {
		out[i] = CMM_LOAD_SHARED(r->name[i]);
		if (out[i] == '\0')
			break;
	}
	if (i == BRK__NAME_BYTES) {
		out[0] = '\0';
		return -BRK_ECORRUPT;
	}
	return brk_name_validate(out) == 0 ? 0 : -BRK_ECORRUPT;
}
